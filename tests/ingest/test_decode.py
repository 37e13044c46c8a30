import codecs

import pytest

from pipeline.ingest.decode import decode, mojibake
from pipeline.errors import SourceError
from conftest import ARCHIVE, needs_archive

# The encodings the archive README measured byte by byte.
ARCHIVE_ENCODINGS = {
    "2003-10-01": "cp1252", "2005-10-01": "cp1252", "2006-07-15": "cp437", "2007-10-01": "ascii",
    "2008-02-01": "ascii", "2009-05-01": "ascii", "2009-07-11": "ascii", "2011-06-17": "ascii",
    "2013-04-29": "utf-16-be", "2020-06-01": "utf-8-sig", "2025-06-06": "utf-8-sig", "2026-01-16": "utf-8-sig",
}

TEXT = "“Dandân” can’t be chosen — it’s a card name™.\r\n"


@pytest.mark.parametrize("data, expected, encoding", [
    (TEXT.encode("utf-8"), TEXT, "utf-8"),
    (codecs.BOM_UTF8 + TEXT.encode("utf-8"), TEXT, "utf-8-sig"),
    (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), TEXT, "utf-16-be"),
    (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), TEXT, "utf-16-le"),
    (TEXT.encode("cp1252"), TEXT, "cp1252"),
    ("Dandân, Lim-Dûl and the \"quoted\" rule.".encode("cp437"), "Dandân, Lim-Dûl and the \"quoted\" rule.", "cp437"),
    (TEXT.encode("mac_roman"), TEXT, "mac_roman"),
    (b"plain ascii\n", "plain ascii\n", "ascii"),
])
def test_decodes(data, expected, encoding):
    assert decode(data) == (expected, encoding)


@pytest.mark.parametrize("data, message", [
    (b"", "empty file"),
    (b"  \r\n\t", "empty file"),
    (bytes(range(256)) * 4, "binary file"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary file"),
    (codecs.BOM_UTF8 + b"ok \xff\xfe broken", "byte-order mark"),
])
def test_refuses(data, message):
    with pytest.raises(SourceError, match=message):
        decode(data, "x.txt")


def test_near_miss_cp1252_is_not_cp437():
    # cp1252 curly quotes read as cp437 would give "ôAbilitiesö"; the typography must win.
    text = "(See rule 402, “Abilities.”) Don’t."
    assert decode(text.encode("cp1252"))[0] == text


@needs_archive
@pytest.mark.parametrize("stem", sorted(ARCHIVE_ENCODINGS))
def test_archive_encodings_and_no_mojibake(stem):
    path = ARCHIVE / f"{stem}.txt"
    text, encoding = decode(path.read_bytes(), path)
    assert encoding == ARCHIVE_ENCODINGS[path.stem]
    assert mojibake(text) == []
    assert "Dandƒn" not in text and "Dand\u0192n" not in text
    if path.stem in ("2005-10-01", "2006-07-15"):
        assert "Dandân" in text or "Dandan" in text


@pytest.mark.parametrize("text, expected", [
    ("plain", []), ("Ã alone, â alone", []), ("cafÃ© donâ€™t", ["â€", "Ã©"]), ("lost \ufffd", ["\ufffd"]),
])
def test_mojibake(text, expected):
    assert mojibake(text) == expected
