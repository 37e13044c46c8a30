"""Tables that grow (pipeline/publish/grow.py): a run that adds an edition writes only the new rows of the big
tables, and publishes what a cold run over the same corpus publishes: the same bytes for every CSV, Parquet
and JSON file, the same rows for the database; a run killed while growing leaves the published run whole."""
import hashlib
import json
import shutil
from types import SimpleNamespace

import pandas as pd
import pytest

from pipeline import run as stages
from pipeline.ingest.clean import compare_form
from pipeline.publish import export, grow
from pipeline.publish.database import Database
from pipeline.records import Edition, Rule
from pipeline.publish import transaction as publish
from conftest import RAW, archive_files, needs_archive
from published import database_rows



def on_archive(test):
    """Runs on archive editions, and takes seconds."""
    return needs_archive(pytest.mark.slow(test))


def corpus(folder, indexes):
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.iterdir():
        path.unlink()
    for i in indexes:
        shutil.copy(archive_files()[i], folder)
    return folder


def run(processed, folder, raw=RAW):
    return stages.run_all(raw, [folder], processed, None, quiet=True)


def sidecar(processed):
    return json.loads((processed / grow.SIDECAR).read_text(encoding="utf-8").split("\n", 1)[1])


def plant(processed, content: dict, checksum: str | None = None):
    """A sidecar as `remember` writes it (its checksum, then its content); another `checksum`: a damaged one."""
    body = json.dumps(content) + "\n"
    checksum = checksum or hashlib.sha256(body.encode("utf-8")).hexdigest()
    (processed / grow.SIDECAR).write_text(checksum + "\n" + body, encoding="utf-8")


def assert_same_as_cold(grown, cold):
    """Every published file byte-identical but the database (same rows) and the listing (which names the
    database's bytes); the listing names the same files. (The stage files in .stages/ name the corpus
    folder by its whole path, in their contents and in their pieces' names: the two runs' folders differ.)"""
    names = [n for n in sorted(publish.listing(cold)) if not n.startswith(".stages/")]
    assert [n for n in sorted(publish.listing(grown)) if not n.startswith(".stages/")] == names
    pieces = [sorted(publish.stage_of(n) for n in publish.listing(p) if n.startswith(".stages/"))
              for p in (grown, cold)]
    assert pieces[0] == pieces[1]  # as many, named by a key that holds the corpus folder's path
    different = [n for n in names if (grown / n).read_bytes() != (cold / n).read_bytes()]
    assert different in ([], ["crdiff.sqlite"])
    assert database_rows(grown / "crdiff.sqlite") == database_rows(cold / "crdiff.sqlite")
    kept = {n: d for n, d in publish.listing(grown).items() if n in names and n != "crdiff.sqlite"}
    assert kept == {n: d for n, d in publish.listing(cold).items() if n in names and n != "crdiff.sqlite"}


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """A cold run over editions 0-3 (the tables a grown run must match), without a cache."""
    tmp = tmp_path_factory.mktemp("cold")
    stages.run_all(RAW, [corpus(tmp / "arch", [0, 1, 2, 3])], tmp / "p", None, quiet=True, use_cache=False)
    return tmp / "p"


@on_archive
@pytest.mark.parametrize("before, tail", [([0, 1, 2], 3),  # the newest edition added: the common case
                                          ([0, 1, 3], 2)])  # one inserted before the newest
def test_a_run_that_adds_an_edition_publishes_what_a_cold_run_does(tmp_path, cold, before, tail, monkeypatch):
    folder = corpus(tmp_path / "arch", before)
    run(tmp_path / "p", folder)
    assert sidecar(tmp_path / "p")["tail"] == ""  # nothing published before: the whole export
    made = []  # the steps whose change rows are written again
    real = grow.write
    monkeypatch.setattr(grow, "write", lambda data, out, name, *args: made.extend(
        data["to_edition"] if name == "changes" else []) or real(data, out, name, *args))
    run(tmp_path / "p", corpus(folder, [0, 1, 2, 3]))
    start = archive_files()[tail].stem
    assert sidecar(tmp_path / "p")["tail"] == start  # only from the added edition on
    assert made and min(made) == start  # the earlier steps' change rows are the published ones
    assert_same_as_cold(tmp_path / "p", cold)


@on_archive
def test_a_changed_source_writes_its_edition_and_the_later_ones_again(tmp_path, cold):
    folder = corpus(tmp_path / "arch", [0, 1, 2, 3])
    edited = folder / archive_files()[1].name
    text = edited.read_bytes()
    edited.write_bytes(text.replace(b" player ", b" gamer "))  # many rules reworded: their texts go after
    run(tmp_path / "p", folder)
    edited.write_bytes(text)  # back as it was: the cold run's corpus
    run(tmp_path / "p", folder)
    assert sidecar(tmp_path / "p")["tail"] == archive_files()[1].stem
    assert_same_as_cold(tmp_path / "p", cold)


@on_archive
def test_a_sidecar_that_does_not_describe_the_published_files_is_not_used(tmp_path, cold):
    folder = corpus(tmp_path / "arch", [0, 1, 2])
    run(tmp_path / "p", folder)
    stale = sidecar(tmp_path / "p")
    stale["files"]["rules.csv"] = [1, "0" * 64]  # as if another run had published rules.csv since
    plant(tmp_path / "p", stale)
    run(tmp_path / "p", corpus(folder, [0, 1, 2, 3]))
    assert sidecar(tmp_path / "p")["tail"] == ""
    assert_same_as_cold(tmp_path / "p", cold)


@on_archive
@pytest.mark.parametrize("where", ["csv", "changes", "database"])
def test_a_run_killed_while_growing_leaves_the_published_run_whole_and_the_next_run_right(tmp_path, cold,
                                                                                          monkeypatch, where):
    folder = corpus(tmp_path / "arch", [0, 1, 2])
    run(tmp_path / "p", folder)
    before = {p.relative_to(tmp_path / "p"): p.read_bytes() for p in (tmp_path / "p").rglob("*")
              if p.is_file() and ".cache" not in p.parts}

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # what a kill looks like to the code that was running

    real_csv, real_texts = grow._write_csv, stages.Database.texts
    if where in ("csv", "changes"):  # rules.csv's tail written in the staging folder (or the changes' too)

        def dies_midway(f, chunks, name, *args, **kwargs):
            marks = real_csv(f, chunks, name, *args, **kwargs)
            if where == "csv" or name == "changes":
                killed()
            return marks
        monkeypatch.setattr(grow, "_write_csv", dies_midway)
    else:  # the copy of the database grown, its texts not yet
        monkeypatch.setattr(stages.Database, "texts", killed)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "p", corpus(folder, [0, 1, 2, 3]))
    after = {p.relative_to(tmp_path / "p"): p.read_bytes() for p in (tmp_path / "p").rglob("*")
             if p.is_file() and ".cache" not in p.parts}
    assert after == before  # the published run untouched, nothing left in staging
    monkeypatch.setattr(grow, "_write_csv", real_csv)
    monkeypatch.setattr(stages.Database, "texts", real_texts)
    run(tmp_path / "p", folder)
    assert sidecar(tmp_path / "p")["tail"] == archive_files()[3].stem
    assert_same_as_cold(tmp_path / "p", cold)


def test_the_tail_starts_at_the_first_edition_whose_digest_differs(tmp_path):
    (tmp_path / ".cache").mkdir()
    old = {"version": grow.VERSION, "files": {name: None for name in grow.files()},
           "editions": {"2001": "a", "2002": "b", "2003": "c"}}
    plant(tmp_path, old)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(publish, "verify", lambda *args, **kwargs: "")
        assert grow.plan(tmp_path, {"2001": "a", "2002": "b", "2003": "c", "2004": "d"}).start == "2004"
        assert grow.plan(tmp_path, {"2001": "a", "2002": "B", "2003": "c", "2004": "d"}).start == "2002"
        assert grow.plan(tmp_path, {"2001": "a", "2003": "c"}).start == "2002"  # an edition gone
        assert grow.plan(tmp_path, {"2000": "z", "2001": "a", "2002": "b", "2003": "c"}) is None  # one before all
        assert grow.plan(tmp_path, {"2001": "x", "2002": "b", "2003": "c"}) is None  # the first one changed
        plant(tmp_path, old, checksum="0" * 64)  # damaged
        assert grow.plan(tmp_path, {"2001": "a", "2002": "b", "2003": "c", "2004": "d"}) is None
        old["version"] = 0
        plant(tmp_path, old)
        assert grow.plan(tmp_path, {"2001": "a", "2002": "b", "2003": "c", "2004": "d"}) is None


def test_an_edition_s_key_in_the_walk_is_in_its_digest_alone():
    """The walk's key of an edition (every edition up to it, the overrides, the code) settles its lineages, last
    changes and step: a different key for it (an override of its step) makes its rows, and its alone, written again."""
    eds = [Edition(e, "", ("s",), True, {"rule": 1}, 0) for e in ("2001", "2002", "2003")]
    sources = pd.DataFrame({"source_id": ["s"]})
    steps = {"2001": "a", "2002": "b", "2003": "c"}
    before = grow.digests(eds, sources, "code", steps)
    after = grow.digests(eds, sources, "code", {**steps, "2002": "B"})
    assert [e for e in before if before[e] != after[e]] == ["2002"]
    # an edition without records has no rows: no digest
    assert grow.digests([*eds, Edition("2004", "", ("s",), False, {}, 0)], sources, "code", steps) == before


def test_a_grown_glossary_names_a_wording_by_the_first_rule_with_its_words(tmp_path):
    """A glossary row names the text_id of the first rule (in table order) with its text and examples; when two
    kept rules have them, cut into sentences differently, a grown export must pick the same one as a cold one."""
    words = "Mana is energy. It pays for spells."

    def term(edition, sentences):
        return Rule(edition, "s", "Mana", "glossary", "", "Mana", words, compare_form(words), sentences=sentences)
    rules = [term("2001-01-01", (words,)), term("2002-01-01", ("Mana is energy.", "It pays for spells.")),
             term("2003-01-01", (words,))]
    history = SimpleNamespace(lineage={}, last_changed={})

    def published(folder, kept, texts_of=None):
        db = Database(folder)
        texts = export.Texts()
        db.add("rules", export.flatten(export.rule_rows(kept, history), "rules", texts))
        db.add("texts", export.flatten(texts.frame(), "texts"))
        db.close()
        return texts
    cold = published(tmp_path / "cold", rules)
    cold_glossary = export.flatten(export.glossary_rows(rules[2:]), "glossary", cold)["text_id"].tolist()
    published(tmp_path / "old", list(reversed(rules[:2])))  # the second cut first: the first rule is another
    published(tmp_path / "two", rules[:2])
    for folder, first in (("old", rules[1]), ("two", rules[0])):
        db = Database(tmp_path / "grown", base=tmp_path / folder / "crdiff.sqlite")
        db.keep_before("2003-01-01")
        texts = export.Texts(db.definitions())
        grown_glossary = export.flatten(export.glossary_rows(rules[2:]), "glossary", texts)["text_id"].tolist()
        expected = export.Texts().keys("rules", export.flatten(export.rule_rows([first], history), "rules"))
        assert grown_glossary == expected
        db.abandon()
    assert cold_glossary == grown_glossary  # the "two" case is the cold run's order


def test_a_spliced_parquet_file_has_a_cold_run_s_row_groups_and_bytes(tmp_path, monkeypatch):
    """Parts of any lengths (the published rows read back a batch at a time, then the tail's) make the row
    groups and batches of a cold run's chunks: the same bytes, a row group at a time in memory."""
    from pipeline.publish import parquet
    import pyarrow.parquet as pq
    monkeypatch.setattr(parquet, "ROW_GROUP", 10_000)
    n = 27_000
    data = pd.DataFrame({"from_edition": ["2001-01-01"] * n, "to_edition": ["2002-01-01"] * n,
                         "old": [f"w{i % 997}" for i in range(n)], "new": [f"v{i}" for i in range(n)],
                         "count": list(range(n))})
    (tmp_path / "cold").mkdir()
    (tmp_path / "grown").mkdir()
    parquet.write(tmp_path / "cold", "terminology", [data.iloc[i:i + export.CHUNK] for i in range(0, n, export.CHUNK)])
    cuts = [0, 7_300, 7_301, 21_000, n]
    parquet.write_arrow(tmp_path / "grown", "terminology",
                        (parquet.arrow_table("terminology", data.iloc[a:b]) for a, b in zip(cuts, cuts[1:])))
    cold, grown = (tmp_path / "cold" / "terminology.parquet"), (tmp_path / "grown" / "terminology.parquet")
    assert pq.ParquetFile(cold).metadata.num_row_groups == 3
    assert grown.read_bytes() == cold.read_bytes()
