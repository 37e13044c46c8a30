"""Each source's records are kept between runs: a run segments only new or changed sources (a change is
noticed by the file's content, not its name or time), and publishes what a cold run over the same files does."""
import os
from pathlib import Path

import pytest

from pipeline import run as stages
from pipeline.segment import stored
from conftest import two_small_editions

HEAD = "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game\n\n100. General\n\n"


@pytest.fixture
def segmented(monkeypatch):
    """The ids of the sources segmented (rather than read back) in each run, one set per run."""
    runs: list[set[str]] = []
    real = stored.segment

    def counted(doc, cache):
        runs[-1].add(doc.source.source_id)
        return real(doc, cache)
    monkeypatch.setattr(stored, "segment", counted)
    return runs


def run(corpus: Path, processed: Path, runs: list[set[str]]):
    runs.append(set())
    (corpus.parent / "raw").mkdir(exist_ok=True)
    return stages.run_all(corpus.parent / "raw", [corpus], processed, None, quiet=True)


def published(processed: Path) -> dict[str, bytes]:
    """Every published file and stage file (the cache apart), by path."""
    return {str(p.relative_to(processed)): p.read_bytes() for p in sorted(processed.rglob("*"))
            if p.is_file() and ".cache" not in p.relative_to(processed).parts}


def test_adding_an_edition_segments_it_alone_and_publishes_what_a_cold_run_does(tmp_path, segmented):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    two_small_editions(corpus)
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"a", "b"}
    (corpus / "c.txt").write_text(HEAD.format("October 1, 2009") + "100.1. Each game has a winner.\n\n"
                                  "100.2. A player may cast a card from their hand.\n\n100.3. A new rule.\n",
                                  encoding="utf-8")
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"c"}  # a and b read back
    run(corpus, tmp_path / "cold", segmented)
    assert segmented[-1] == {"a", "b", "c"}  # a cache of its own: everything segmented
    incremental, cold = published(tmp_path / "p"), published(tmp_path / "cold")
    assert "rules.csv" in cold and ".stages/segment.rules.parquet" in cold
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
    assert segmented[-1] == {"b"}
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
    run(corpus, tmp_path / "p", segmented)
    assert segmented[-1] == {"a", "b"}
