import shutil

import pytest

from pipeline.errors import ManifestError
from pipeline.ingest.manifest import read_manifest
from conftest import RAW

GOOD = '''[[source]]
file = "a.txt"
format = "copy"
kind = "copy"
edition = "2006-07-15..2007-04-30"
language = "en"
'''


@pytest.fixture
def raw(tmp_path):
    (tmp_path / "a.txt").write_text("212.1a Text.\n", encoding="utf-8")
    return tmp_path


def write(raw, text):
    (raw / "manifest.toml").write_text(text, encoding="utf-8")


def test_seed_manifest_describes_every_seed():
    entries = read_manifest(RAW)
    assert sorted(e.source_id for e in entries.values()) == sorted(p.stem for p in RAW.glob("0*.txt"))


def test_good_entry(raw):
    write(raw, GOOD)
    (entry,) = read_manifest(raw).values()
    assert (entry.edition, entry.edition_end, entry.line) == ("2006-07-15", "2007-04-30", 1)


@pytest.mark.parametrize("change, message, line", [
    (('language = "en"', 'language = "en"\ncolour = "blue"'), "unknown key 'colour'", 7),
    (('file = "a.txt"', 'file = "missing.txt"'), "'missing.txt' does not exist", 2),
    (('file = "a.txt"', 'file = "../a.txt"'), "is outside", 2),
    (('format = "copy"', 'format = "pdf"'), "unknown format 'pdf'", 3),
    (('kind = "copy"', 'kind = "novel"'), "unknown kind 'novel'", 4),
    (('edition = "2006-07-15..2007-04-30"', 'edition = "July 2006"'), "edition 'July 2006'", 5),
    (('language = "en"\n', ''), "missing key 'language'", 1),
])
def test_errors_name_the_line(raw, change, message, line):
    shutil.copy(raw / "a.txt", raw.parent / "a.txt")
    write(raw, GOOD.replace(*change))
    with pytest.raises(ManifestError, match=message) as e:
        read_manifest(raw)
    assert e.value.line == line
    assert str(e.value).startswith(f"{raw / 'manifest.toml'}:{line}: ")


def test_bad_toml_names_the_line(raw):
    write(raw, GOOD + "this is not toml\n")
    with pytest.raises(ManifestError, match="not valid TOML") as e:
        read_manifest(raw)
    assert e.value.line == 7


def test_duplicate_entry(raw):
    write(raw, GOOD + "\n" + GOOD)
    with pytest.raises(ManifestError, match="listed twice") as e:
        read_manifest(raw)
    assert e.value.line == 8
