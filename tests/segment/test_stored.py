"""Each file's cleaned source and each source's records are kept between runs: a run cleans and segments only
new or changed files (a change is noticed by the file's bytes, not its name or time), and publishes what a cold
run over the same files does, rejections and discards included."""
import json
import os
import sqlite3
import zlib
from pathlib import Path

import pytest

from pipeline import run as stages
from pipeline.cache import CACHE_FILE, Damaged
from pipeline.ingest import discover
from pipeline.ingest import stored as cleaned
from pipeline.publish import stagefiles
from pipeline.segment import stored
from conftest import flipped, two_small_editions
from published import contents


HEAD = "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game\n\n100. General\n\n"


@pytest.fixture
def segmented(monkeypatch):
    """The ids of the sources segmented (rather than read back) in each run, one set per run; the
    files decoded (rather than read back cleaned) in CLEANED."""
    runs: list[set[str]] = []
    real, real_read = stored.segment, discover.read_source

    def counted(doc, cache):
        runs[-1].add(doc.source.source_id)
        return real(doc, cache)

    def decoded(path, *args, **kwargs):
        CLEANED[-1].add(path.name)
        return real_read(path, *args, **kwargs)
    monkeypatch.setattr(stored, "segment", counted)
    monkeypatch.setattr(discover, "read_source", decoded)
    CLEANED.clear()
    return runs


CLEANED: list[set[str]] = []


def run(corpus: Path, processed: Path, runs: list[set[str]]):
    runs.append(set())
    CLEANED.append(set())
    (corpus.parent / "raw").mkdir(exist_ok=True)
    return stages.run_all(corpus.parent / "raw", [corpus], processed, None, quiet=True)


def published(processed: Path) -> dict[str, object]:
    """Every published file and stage file (the cache apart), by path: bytes, but the database's rows (a run
    that adds an edition grows it: the rows of a cold run's, not its bytes)."""
    return contents(processed)


def test_adding_an_edition_segments_it_alone_and_publishes_what_a_cold_run_does(tmp_path, segmented):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    two_small_editions(corpus)
    (corpus / "notes.txt").write_text("Not a rules text.\n", encoding="utf-8")  # a rejection, said in every run
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"a", "b"}
    (corpus / "c.txt").write_text(HEAD.format("October 1, 2009") + "100.1. Each game has a winner.\n\n"
                                  "100.2. A player may cast a card from their hand.\n\n100.3. A new rule.\n",
                                  encoding="utf-8")
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"c"}  # a and b read back
    assert CLEANED[-1] == {"c.txt", "notes.txt"}
    run(corpus, tmp_path / "cold", segmented)
    assert segmented[-1] == {"a", "b", "c"}  # a cache of its own: everything segmented
    incremental, cold = published(tmp_path / "p"), published(tmp_path / "cold")
    assert "rules.csv" in cold and ".stages/segment.json.gz" in cold
    assert "notes.txt" in cold["sources.csv"].decode() and len(cold["discards.csv"].splitlines()) > 1
    assert incremental == cold


def test_a_source_whose_bytes_changed_under_the_same_name_and_time_is_segmented_again(tmp_path, segmented):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _, b = two_small_editions(corpus)
    run(corpus, tmp_path / "p", segmented)
    when = b.stat()
    b.write_text(b.read_text(encoding="utf-8").replace("Each game has a winner.", "Each game has one winner."),
                 encoding="utf-8")
    os.utime(b, ns=(when.st_atime_ns, when.st_mtime_ns))  # same name, same size class, same time
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"b"} and CLEANED[-1] == {"b.txt"}
    assert "Each game has one winner." in (tmp_path / "p" / "texts.csv").read_text(encoding="utf-8")
    run(corpus, tmp_path / "cold", segmented)
    assert published(tmp_path / "p") == published(tmp_path / "cold")


def test_records_kept_by_other_code_are_not_used(tmp_path, segmented, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    two_small_editions(corpus)
    run(corpus, tmp_path / "p", segmented)
    (tmp_path / "p" / stages.RUN_STAMP).unlink()  # not up to date: the run goes through its stages
    monkeypatch.setattr(stored, "code_hash", lambda *args: "other code")
    monkeypatch.setattr(cleaned, "code_hash", lambda *args: "other code")
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"a", "b"} and CLEANED[-1] == {"a.txt", "b.txt"}


def test_a_damaged_cleaned_source_is_read_again_and_said(tmp_path, segmented):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    two_small_editions(corpus)
    run(corpus, tmp_path / "p", segmented)
    before = published(tmp_path / "p")
    db = sqlite3.connect(tmp_path / "p" / CACHE_FILE, isolation_level=None)
    key, value = db.execute("SELECT key, value FROM entries WHERE namespace = 'cleaned sources'").fetchone()
    db.execute("UPDATE entries SET value = ? WHERE key = ?", (flipped(value), key))
    db.close()
    (tmp_path / "p" / stages.RUN_STAMP).unlink()
    result = run(corpus, tmp_path / "p", segmented)
    assert "1 damaged cleaned sources cache entry dropped and recomputed" in " ".join(result.warnings)
    assert len(CLEANED[-1]) == 1 and segmented[-1] == set()  # read again, the same text: its records kept
    assert published(tmp_path / "p") == before


def test_the_ingest_command_alone_cleans_only_new_or_changed_files(tmp_path, segmented):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    a, _ = two_small_editions(corpus)
    (tmp_path / "raw").mkdir()
    for expected in ({"a.txt", "b.txt"}, set()):
        CLEANED.append(set())
        stages.run_ingest(tmp_path / "raw", [corpus], tmp_path / "p", quiet=True)
        assert CLEANED[-1] == expected
    a.write_text(a.read_text(encoding="utf-8") + "\n100.9. A rule added later.\n", encoding="utf-8")
    CLEANED.append(set())
    result = stages.run_ingest(tmp_path / "raw", [corpus], tmp_path / "p", quiet=True)
    assert CLEANED[-1] == {"a.txt"} and "A rule added later." in result.ingested.docs[0].content


def test_a_source_s_rows_read_back_as_they_were_kept_and_damaged_ones_are_refused():
    """The rows' columns (numbers as differences, pieces flattened) decode to the rows, pieces of every count
    included; a column of another length, a number that is not an integer, or offsets that do not make the
    pieces are damage, never records."""
    rows = [["100.1", "k1", ["partial"], 3, 5, 1, ((0, 4), (6, 9))], ["100.2", "k2", [], 7, 7, 1, ()],
            ["100.2", "k2", [], 9, 12, 2, ((2, 2),)], ["100.3", "k3", [], 12, 20, 1, ((1, 3), (3, 8), (10, 11))]]
    kept = json.loads(json.dumps(stored._encode_rows(rows)))
    assert stored._decode_rows(kept) == [(r[0], r[1], tuple(r[2]), *r[3:]) for r in rows]
    assert stored._decode_rows(json.loads(json.dumps(stored._encode_rows([])))) == []
    for column, value in (("line_start", [0, 4, 2.5, 3]), ("occurrence", [1, 1, True, 1]), ("pieces", [2, 0, 1])):
        with pytest.raises(Damaged):
            stored._decode_rows({**kept, column: value})
    with pytest.raises(Damaged):
        stored._decode_rows({**kept, "offsets": kept["offsets"][:-1]})


def test_a_kept_text_file_is_decoded_by_the_codec_that_gave_its_text(tmp_path, segmented, monkeypatch):
    """A kept source's text is decoded again from its file's bytes by the codec that gave it (a Windows-1252
    file is not scored against every single-byte encoding again); a file whose text no codec gives alone (a
    repaired UTF-16 one, say) is decoded as ingest decodes it; either way the run publishes what a cold run does."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    a, b = two_small_editions(corpus)
    b.write_bytes(b.read_text(encoding="utf-8").replace("winner.", "winner \u2014 or a draw.").encode("cp1252"))
    run(corpus, tmp_path / "p", segmented)
    kept = sqlite3.connect(tmp_path / "p" / CACHE_FILE).execute(
        "SELECT value FROM entries WHERE namespace = 'cleaned sources'").fetchall()
    assert sorted(json.loads(zlib.decompress(v))["decoded"] for (v,) in kept) == ["ascii", "cp1252"]
    decoded = []
    real = cleaned.decode_with_repairs
    monkeypatch.setattr(cleaned, "decode_with_repairs", lambda data, path: decoded.append(path) or real(data, path))
    (tmp_path / "p" / stages.RUN_STAMP).unlink()
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == set() and CLEANED[-1] == set() and decoded == []
    assert published(tmp_path / "p") == published(_cold(corpus, tmp_path / "cold", segmented))
    assert cleaned._plainly("caf\u00e9".encode("utf-16-le"), "utf-8", "caf\u00e9") is None


def _cold(corpus: Path, processed: Path, runs) -> Path:
    run(corpus, processed, runs)
    return processed


def test_a_source_s_records_are_kept_under_its_cleaned_source_s_key_in_the_run_and_the_stage_alike(tmp_path,
                                                                                                 segmented):
    """The segment stage knows a source by its key in the cache of cleaned sources (its file's bytes and the code:
    what its content is made from), recorded in the ingest stage's file, so the `segment` command alone reads back
    what `run` kept, and a run after it too."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    two_small_editions(corpus)
    run(corpus, tmp_path / "p", segmented)
    assert set(stagefiles.cleaned_keys(tmp_path / "p")) == {"a", "b"}
    segmented.append(set())
    stages.run_segment(tmp_path / "p", quiet=True)
    assert segmented[-1] == set()
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(stored, "_content", lambda doc: pytest.fail("hashed what the source's key stands for"))
    try:
        run(corpus, tmp_path / "p", segmented)
    finally:
        monkeypatch.undo()
    assert segmented[-1] == set() and published(tmp_path / "p") == published(_cold(corpus, tmp_path / "cold",
                                                                                    segmented))
