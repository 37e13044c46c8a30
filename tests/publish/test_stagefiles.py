"""The stage files in pieces (pipeline/publish/stagefiles.py): a run that adds an edition writes that edition's
pieces and keeps the others in place, and publishes what a cold run over the same files does; a run killed
meanwhile leaves the published run whole; a published piece that is not what its run listed is written again."""
import os
import re
from pathlib import Path

import pytest

from pipeline import run as stages
from pipeline.publish import stagefiles
from pipeline.publish import transaction as publish
from conftest import two_small_editions
from published import contents

HEAD = "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game\n\n100. General\n\n"


def third_edition(corpus: Path) -> None:
    (corpus / "c.txt").write_text(HEAD.format("October 1, 2009") + "100.1. Each game has a winner.\n\n"
                                  "100.2. A player may cast a card from their hand.\n\n100.3. A new rule.\n",
                                  encoding="utf-8")


def run(corpus: Path, processed: Path, use_cache: bool = True):
    (corpus.parent / "raw").mkdir(exist_ok=True)
    return stages.run_all(corpus.parent / "raw", [corpus], processed, None, quiet=True, use_cache=use_cache)


def pieces(processed: Path) -> dict[str, tuple[int, int]]:
    """The published pieces (not the lists) by name: (inode, modification time), which a kept piece keeps."""
    return {name: ((processed / name).stat().st_ino, (processed / name).stat().st_mtime_ns)
            for name in publish.listing(processed) if re.fullmatch(r"\.stages/\w+\.[0-9a-f]{32}\..+", name)}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    two_small_editions(folder)
    return folder


@pytest.fixture
def cold(corpus, tmp_path):
    """What a cold run publishes over the three editions (the same corpus folder: the pieces name its path)."""
    third_edition(corpus)
    run(corpus, tmp_path / "cold", use_cache=False)
    (corpus / "c.txt").unlink()
    return contents(tmp_path / "cold")


def test_a_run_that_adds_an_edition_keeps_the_other_pieces_and_publishes_what_a_cold_run_does(corpus, cold,
                                                                                              tmp_path):
    run(corpus, tmp_path / "p")
    before = pieces(tmp_path / "p")
    assert {publish.stage_of(n) for n in before} == {"ingest", "segment", "align"}
    third_edition(corpus)
    run(corpus, tmp_path / "p")
    after = pieces(tmp_path / "p")
    assert {n: after[n] for n in before} == before  # left in place, not written again
    new = sorted(publish.stage_of(n) for n in set(after) - set(before))
    assert new == ["align", "align", "ingest", "segment"]  # the new edition's source, records, step and lineages
    assert contents(tmp_path / "p") == cold


@pytest.mark.parametrize("stage", ["segment", "align"])
def test_a_run_killed_while_keeping_pieces_leaves_the_published_run_whole_and_the_next_run_right(
        corpus, cold, tmp_path, monkeypatch, stage):
    run(corpus, tmp_path / "p")
    before = contents(tmp_path / "p")
    third_edition(corpus)
    real = stagefiles.Pieces.close

    def killed(self):
        real(self)
        if self.stage == stage:  # pieces kept and written, the list not yet
            raise KeyboardInterrupt
    monkeypatch.setattr(stagefiles.Pieces, "close", killed)
    with pytest.raises(KeyboardInterrupt):
        run(corpus, tmp_path / "p")
    assert contents(tmp_path / "p") == before and not (tmp_path / "p" / publish.STAGING).exists()
    monkeypatch.setattr(stagefiles.Pieces, "close", real)
    run(corpus, tmp_path / "p")
    assert contents(tmp_path / "p") == cold


def test_a_published_piece_that_is_not_what_its_run_listed_is_written_again(corpus, cold, tmp_path):
    run(corpus, tmp_path / "p")
    damaged = next(n for n in pieces(tmp_path / "p") if n.startswith(".stages/segment."))
    path = tmp_path / "p" / damaged
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # the same size, one bit changed
    third_edition(corpus)
    run(corpus, tmp_path / "p")
    assert path.read_bytes() == data
    assert contents(tmp_path / "p") == cold
    publish.verify(tmp_path / "p", sorted(publish.listing(tmp_path / "p")))


def test_the_stages_alone_read_the_pieces_a_run_kept(corpus, tmp_path):
    run(corpus, tmp_path / "p")
    third_edition(corpus)
    result = run(corpus, tmp_path / "p")
    ingested = stagefiles.load_ingested(tmp_path / "p")
    assert [d.source.source_id for d in ingested.docs] == [d.source.source_id for d in result.ingested.docs]
    rules, editions = stagefiles.load_segmented(tmp_path / "p")
    assert [e.edition for e in editions] == ["2009-05-01", "2009-07-11", "2009-10-01"]
    assert {r.edition for r in rules} == {"2009-05-01", "2009-07-11", "2009-10-01"}
    aligned = stagefiles.load_aligned(tmp_path / "p")
    assert {c.to_edition for c in aligned.changes} == {"2009-07-11", "2009-10-01"}
    listed = sorted(n.removeprefix(".stages/") for n in publish.listing(tmp_path / "p") if n.startswith(".stages/"))
    assert sorted(os.listdir(tmp_path / "p" / ".stages")) == listed  # no piece left that no run lists
