"""No single bad file stops a run: each becomes a rejection with its reason, or a warning."""
import errno
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from pipeline import atomic as store
from pipeline.cli.main import main
from pipeline.errors import ManifestError, PipelineError
from pipeline.ingest.discover import ingest, source_ids
from pipeline.ingest.manifest import read_manifest
from conftest import RAW, archive_files, needs_archive


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def sources_of(processed) -> pd.DataFrame:
    return pd.read_csv(processed / "sources.csv", keep_default_na=False, dtype=str)


def bomless_utf8_edition() -> tuple[str, bytes]:
    """A UTF-8 edition of the archive, without its byte-order mark."""
    path = next(p for p in archive_files() if p.read_bytes().startswith(b"\xef\xbb\xbf"))
    return path.name, path.read_bytes()[3:]


def test_a_line_over_a_megabyte_is_a_rejection_and_the_run_goes_on(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "long.txt").write_text("Comprehensive Rules\n\n100.1. These rules.\n" + "word " * 250_000 + "\n")
    result = invoke("ingest", "--raw", RAW, "--corpus", corpus, "--processed", tmp_path / "p", "-q")
    assert result.exit_code == 0, result.output
    sources = sources_of(tmp_path / "p").set_index("source_id")
    assert sources.loc["long", "rejection"] == ("line 4: a line of 1,250,000 characters (over 1,000,000, "
                                                "spaCy's limit): not a rules text")
    assert (sources["rejection"] == "").sum() == 5  # the seeds are all there


def test_a_file_name_that_is_not_utf8_gets_a_safe_id(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    name = os.fsdecode(b"caf\xe9.txt")
    (corpus / name).write_bytes(b"")
    result = invoke("run", "--raw", RAW, "--corpus", corpus, "--processed", tmp_path / "p",
                    "--reports", tmp_path / "r", "-q")
    assert result.exit_code == 0, result.output
    row = sources_of(tmp_path / "p").query("rejection == 'empty file'").iloc[0]
    assert row["source_id"].startswith("caf\ufffd-") and len(row["source_id"]) == len("caf\ufffd-") + 8
    assert row["path"] == "c/caf\ufffd.txt"


def test_an_unreadable_file_is_a_rejection(tmp_path, monkeypatch):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "locked.txt").write_text("x")
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "locked.txt":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)  # chmod 000 does not stop root
    result = ingest(RAW, [corpus])
    assert [(r.path.name, r.reason) for r in result.rejections] == [("locked.txt", "cannot be read: Permission denied")]
    assert len(result.docs) == 5


@needs_archive
def test_one_invalid_byte_in_a_utf8_edition_is_replaced_located_and_reported(tmp_path):
    name, data = bomless_utf8_edition()
    at = data.index("’".encode()) - 3
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / name).write_bytes(data[:at] + b"\x92" + data[at:])
    doc, = ingest(RAW, [corpus]).docs[-1:]
    assert doc.source.encoding == "utf-8"
    assert "‚Äô" not in doc.source.text and doc.source.text.count("’") == data.decode("utf-8").count("’")
    line = data[:at].count(b"\n") + 1
    assert f"1 invalid UTF-8 byte sequence replaced with U+FFFD: line {line} (byte {at})" in doc.warnings
    assert doc.chars_total == len(doc.source.text)


@needs_archive
def test_several_editions_in_one_file_are_refused_with_that_reason(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    first, second = archive_files()[5], archive_files()[7]
    (corpus / "all.txt").write_bytes(first.read_bytes() + b"\r\n" + second.read_bytes())
    (reason,) = [r.reason for r in ingest(RAW, [corpus]).rejections]
    assert reason.startswith("holds 2 editions (") and reason.endswith("split it into one file per edition")


@needs_archive
@pytest.mark.parametrize("index", [5, 10])  # a plain ASCII edition, and one with a byte-order mark
def test_one_edition_twice_in_one_file_is_refused_with_that_reason(tmp_path, index):
    corpus = tmp_path / "c"
    corpus.mkdir()
    data = archive_files()[index].read_bytes()
    (corpus / "twice.txt").write_bytes(data + b"\r\n" + data)  # was read as one edition, the copy as "credits"
    (rejection,) = ingest(RAW, [corpus]).rejections
    assert rejection.reason.startswith("holds the same edition twice (it starts again at line ")
    assert rejection.reason.endswith("): keep one copy")


def test_source_ids_of_long_file_names_fit_a_page_name():
    long, undecodable = "a" * 248 + ".pdf", os.fsdecode(b"\xff" * 200 + b".txt")  # both legal names
    ids = source_ids([Path("c") / long, Path("d") / long, Path("c") / undecodable])
    assert all(len(f"{sid}.html".encode()) <= 255 for sid in ids.values())  # a page per source
    assert len(set(ids.values())) == 3 and ids[Path("c") / long].startswith("a" * 100)


@needs_archive
def test_a_long_file_name_does_not_stop_the_reports(tmp_path):
    (tmp_path / "c").mkdir()
    shutil.copy(archive_files()[0], tmp_path / "c" / ("a" * 248 + ".txt"))  # the page name was too long
    result = invoke("run", "--raw", RAW, "--corpus", tmp_path / "c", "--processed", tmp_path / "p",
                    "--reports", tmp_path / "r", "-q")
    assert result.exit_code == 0, result.output


@needs_archive
def test_same_file_names_in_two_corpora_get_unique_ids_and_pages(tmp_path):
    for folder, source in (("a", archive_files()[0]), ("b", archive_files()[1])):
        (tmp_path / folder).mkdir()
        shutil.copy(source, tmp_path / folder / "rules#1?.txt")
    result = invoke("run", "--raw", RAW, "--corpus", tmp_path / "a", "--corpus", tmp_path / "b",
                    "--processed", tmp_path / "p", "--reports", tmp_path / "r", "-q")
    assert result.exit_code == 0, result.output
    sources = sources_of(tmp_path / "p")
    ids = sorted(sources[sources.path.str.endswith("rules#1?.txt")]["source_id"])
    assert ids[0] == "rules#1?" and ids[1].startswith("rules#1?-") and sources["source_id"].is_unique
    for sid in ids:
        assert (tmp_path / "r/sources" / f"{sid}.html").exists()
    links = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "r/lineage").glob("*.html"))
    assert 'href="../sources/rules%231%3F.html?lines=' in links and 'sources/rules#1?.html' not in links


def test_source_ids_are_stable_and_unique():
    paths = [Path("/x/raw/a.txt"), Path("/x/c1/a.txt"), Path("/x/c1/A.html"), Path("/x/c1/b.txt")]
    ids = source_ids(paths)
    assert ids[paths[0]] == "a" and ids[paths[3]] == "b"
    assert len(set(ids.values())) == 4 and ids == source_ids(paths)
    assert ids[paths[1]].startswith("a-") and ids[paths[2]].startswith("A-")


def test_everything_in_a_corpus_folder_that_is_not_read_is_listed_with_why(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "sub").mkdir()
    (corpus / ".hidden.txt").write_text("x")
    (corpus / "README.md").write_text("notes")
    os.mkfifo(corpus / "pipe.txt")
    (corpus / "loop.txt").symlink_to(corpus / "loop.txt")
    (corpus / "dangling.txt").symlink_to(corpus / "nowhere")
    result = invoke("ingest", "--raw", RAW, "--corpus", corpus, "--processed", tmp_path / "p", "-q")
    assert result.exit_code == 0, result.output
    reasons = dict(zip(sources_of(tmp_path / "p")["path"], sources_of(tmp_path / "p")["rejection"]))
    assert reasons["c/sub"].startswith("not read: a folder")
    assert reasons["c/.hidden.txt"] == "not read: hidden file (the name starts with '.')"
    assert reasons["c/README.md"] == "not read: documentation"
    assert reasons["c/pipe.txt"] == "not read: not a regular file (a pipe, socket or device)"
    assert reasons["c/loop.txt"] == "not read: symbolic link loop"
    assert reasons["c/dangling.txt"] == "not read: symbolic link to nothing"


@pytest.mark.parametrize("old, new, message", [
    ('edition = "2008-03-17"', 'edition = "2008-13-45"', "edition '2008-13-45': 2008-13-45 is not a real date"),
    ('edition = "2006-07-15..2007-04-30"', 'edition = "2007-04-30..2006-07-15"',
     "edition '2007-04-30..2006-07-15': the range ends before it starts"),
    ('language = "en"', 'language = "xx"', "unknown language 'xx'; known (ISO 639-1): en, ru, uk"),
    # TOML reads an unquoted date as a date: was "'edition' must be a non-empty string"
    ('edition = "2008-03-17"', 'edition = 2008-03-17', "'edition' must be quoted: edition = \"2008-03-17\""),
])
def test_the_manifest_is_validated_strictly(tmp_path, old, new, message):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    manifest = raw / "manifest.toml"
    text = manifest.read_text(encoding="utf-8")
    assert old in text
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")
    line = next(i for i, t in enumerate(manifest.read_text().splitlines(), 1) if t.strip() == new)
    with pytest.raises(ManifestError) as e:
        read_manifest(raw)
    assert str(e.value).startswith(f"{manifest}:{line}: {message}")


def test_a_manifest_that_is_not_utf8_is_one_line_error(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    manifest = raw / "manifest.toml"
    data = manifest.read_bytes().replace(b"Rulings-search", b"R\xe9sultats", 1)
    manifest.write_bytes(data)
    result = invoke("run", "--raw", raw, "--processed", tmp_path / "p", "-q")
    assert result.exit_code == 1
    at = data.index(b"\xe9")
    line = data[:at].count(b"\n") + 1
    assert result.output == (f"Error: {manifest}:{line}: not UTF-8 (byte {at} is 0xe9); "
                             "save it as UTF-8\n")


def test_overrides_that_are_not_utf8_are_one_line_error(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    overrides = raw / "overrides.toml"
    data = overrides.read_bytes() + b"# caf\xe9\n"
    overrides.write_bytes(data)
    result = invoke("run", "--raw", raw, "--processed", tmp_path / "p", "--no-reports", "-q")
    assert result.exit_code == 1  # was a UnicodeDecodeError traceback, after ingest and segment
    at = data.index(b"\xe9")
    line = data[:at].count(b"\n") + 1
    assert result.output == (f"Error: {overrides}:{line}: not UTF-8 (byte {at} is 0xe9); "
                             "save it as UTF-8\n")


def test_disk_full_names_the_file(tmp_path, monkeypatch):
    def full(file, *args, **kwargs):  # the streamed writer's open of the temporary file beside rules.csv
        if ".rules.csv." in str(file):
            raise OSError(errno.ENOSPC, "No space left on device")
        return open(file, *args, **kwargs)

    monkeypatch.setattr(store, "open", full, raising=False)
    result = invoke("run", "--raw", RAW, "--processed", tmp_path / "p", "--no-reports", "-q")
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path / 'p/.staging/rules.csv'}: cannot write: No space left on device\n"
    assert not (tmp_path / "p/.staging").exists()  # what the failed run wrote is freed, not left filling the disk
    with pytest.raises(PipelineError):
        store.write_atomic(tmp_path / "p/.rules.csv.x", "x")


@pytest.mark.parametrize("text", [
    "These rules are effective as of June 17, 2011.",
    "ineffective as of June 17, 2011; current\nas  of May 1, 2009. currently as of July 1, 2010",
    "effective as of effective as of March 3, 2003 and current as of April 4, 2004",
    "effective as of june 1, 2001 (no capital), effective as of", "",
])
def test_date_statements_are_the_patterns_matches(text):
    """The fast scan finds exactly what EFFECTIVE_DATE.finditer finds, near misses included."""
    from pipeline.ingest.discover import _date_statements
    from pipeline.patterns import EFFECTIVE_DATE
    assert [m.span() for m in _date_statements(text)] == [m.span() for m in EFFECTIVE_DATE.finditer(text)]
