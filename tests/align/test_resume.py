"""The walk of lineages resumed from the one the cache keeps (pipeline/align/resume.py) gives what the whole walk
gives: the same changes in the same order, lineage ids and last changes (in the same order), observations."""
import shutil

import pytest

from pipeline.align import lineage, resume
from pipeline.align.overrides import Overrides
from pipeline.cache import Cache, code_hash
from pipeline.ingest.discover import ingest
from pipeline.segment import read
from conftest import RAW, archive_files, needs_archive


def same(a, b):
    assert a.chain == b.chain
    assert a.changes == b.changes
    assert list(a.lineage.items()) == list(b.lineage.items())
    assert list(a.last_changed.items()) == list(b.last_changed.items())
    assert a.observations == b.observations


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    """The seeds (a copy among them, which sorts after the archive's editions) and four archive editions."""
    folder = tmp_path_factory.mktemp("arch")
    for path in archive_files()[:4]:
        shutil.copy(path, folder)
    return read.editions(ingest(RAW, [folder]).docs)


@needs_archive
@pytest.mark.slow
def test_a_walk_resumed_from_the_kept_one_is_the_whole_walk(tmp_path, editions, monkeypatch):
    rules, eds = editions
    dates = sorted({e.edition for e in eds})
    newest = archive_files()[3].stem
    before = [r for r in rules if r.edition != newest], [e for e in eds if e.edition != newest]
    steps = {e: f"key of the walk up to {e}" for e in dates if e < newest}
    cache = tmp_path / "cache.sqlite"

    def pairs():
        return Cache(cache, "pairs", code_hash("pipeline.align.lineage", ("rapidfuzz", "scipy")))
    same(resume.build(*before, Overrides(), pairs(), steps, cache), lineage.build(*before, Overrides()))
    steps = {**steps, **{e: f"key of the walk up to {e}, {newest} added" for e in dates if e >= newest}}
    whole = lineage.build(rules, eds, Overrides())
    walked = []
    real = lineage.build
    monkeypatch.setattr(lineage, "build", lambda rules, *args, **kw: walked.append(sorted({r.edition for r in rules}))
                        or real(rules, *args, **kw))
    same(resume.build(rules, eds, Overrides(), pairs(), steps, cache), whole)
    assert walked[0][0] == archive_files()[2].stem  # from the newest kept complete edition on
    walked.clear()
    same(resume.build(rules, eds, Overrides(), pairs(), steps, cache), whole)  # all kept: S is the newest
    assert walked[0][0] == newest


def test_without_a_kept_walk_the_whole_walk_is_made(tmp_path):
    from conftest import two_small_editions
    folder = tmp_path / "corpus"
    folder.mkdir()
    two_small_editions(folder)
    (tmp_path / "raw").mkdir()
    rules, eds = read.editions(ingest(tmp_path / "raw", [folder]).docs)
    steps = {e.edition: e.edition for e in eds}
    same(resume.build(rules, eds, Overrides(), None, steps, None), lineage.build(rules, eds))
