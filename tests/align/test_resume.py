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


def test_a_kept_part_holds_plain_changes_short_and_reads_back_every_change(tmp_path):
    """Most changes are a rule going on word for word under its number: a part keeps them as their place, their
    record and where they came from, and reads back the very records the walk made (value and type); a
    damaged short change is refused, never read as another."""
    import json

    import pytest

    from pipeline.cache import Damaged, _plain
    from conftest import two_small_editions
    folder = tmp_path / "corpus"
    folder.mkdir()
    _, b = two_small_editions(folder)
    rules = "".join(f"100.{n}. Rule {n} of the game says something of its own.\n\n" for n in range(3, 9))
    (folder / "c.txt").write_text(b.read_text(encoding="utf-8").replace("July 11, 2009", "October 1, 2009")
                                  + "\n" + rules, encoding="utf-8")
    (folder / "d.txt").write_text(b.read_text(encoding="utf-8").replace("July 11, 2009", "February 1, 2010")
                                  + "\n" + rules.replace("Rule 5 of", "Rule five of"), encoding="utf-8")
    (tmp_path / "raw").mkdir()
    rules, eds = read.editions(ingest(tmp_path / "raw", [folder]).docs)
    history = lineage.build(rules, eds)
    editions = sorted(e.edition for e in eds)
    parts = resume._split(history, editions)
    last = editions[-1]
    assert len(parts[last]["plain"]["record"]) >= 8 and parts[last]["changes"]["change"] == ["modified"]  # rule 5
    shared: dict[str, str] = {}
    kept = {e: json.loads(json.dumps(parts[e], default=_plain)) for e in editions}  # as the cache keeps them
    back = {e: resume._decode(kept[e], shared) for e in editions}
    read_back = [c for e in editions for c in back[e]["changes"]]
    assert read_back == history.changes
    assert [(type(c.similarity), type(c.renumbered), c.example_ops) for c in read_back] == \
        [(type(c.similarity), type(bool(c.renumbered)), c.example_ops) for c in history.changes]
    good = json.loads(json.dumps(parts[last], default=_plain))["plain"]
    n = len(good["record"])
    for bad in ({"record": [99] * n}, {"examples": [-1] * n}, {"from": [7] * n}, {"record": good["record"][1:]},
                {"placed": [n + 5]}, {"placed": []}, {"placed": [0, 0]}):
        with pytest.raises(Damaged):
            resume._decode({**json.loads(json.dumps(parts[last], default=_plain)), "plain": {**good, **bad}}, {})
