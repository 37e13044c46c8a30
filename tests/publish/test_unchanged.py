"""The change table leaves out the plain unchanged rows (pipeline/publish/unchanged.py): nothing is lost.

The oracle is the align stage's own file (processed/.stages/align.changes.parquet), which keeps every
change: the published table plus the rows rebuilt from rules and editions (in Python, in the database's
view, and by processed/README.md's pandas recipe) must give it back row for row."""
from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, replace

import pandas as pd
import pyarrow as pa
import pytest

from pipeline import run as stages
from pipeline.publish import load, parquet, stagefiles, unchanged
from pipeline.publish.database import CHANGE_TEXTS
from pipeline.publish.export import flatten
from pipeline.query import compare as cmp, history
from pipeline.query.history import load_rules
from pipeline.records import RuleChange
from pipeline.report import build
from pipeline.report.build import RULE_COLUMNS
from pipeline.schema import BY_NAME, in_database

PLAIN = RuleChange("2009-05-01", "2009-07-11", "L", "100.1", "100.1", "rule", "unchanged", False, 100.0, False,
                   "same", 100.0, example_ops=((), ()))


@pytest.mark.parametrize("given, left_out", [
    ({}, True),
    ({"renumbered": True, "new_rule_id": "100.2"}, False),  # a renumbering is news
    ({"method": "moved"}, False),  # found another way: the method is not in the rules table
    ({"score": 94.7}, False),
    ({"review": True}, False),
    ({"note": "resembles 100.3"}, False),
    ({"change": "cosmetic"}, False),
    ({"example_ops": ((),)}, False),  # not one empty entry per example of the new rule (it has two)
    ({"example_ops": ((("replace", 0, 1, 0, 1, "a", "b"),), ())}, False),
])
def test_only_what_the_rules_table_says_is_left_out(given, left_out):
    assert unchanged.plain(replace(PLAIN, **given), 2) is left_out


def full_table(processed) -> pd.DataFrame:
    """Every change, as the align stage handed it to export (typed rows, as `load.rows` gives them)."""
    names = BY_NAME["changes"].names
    tables = [load.read(processed, "changes", check=False, file=f) for f in stagefiles.change_files(processed)]
    data = load.columns(pa.concat_tables(tables))
    return pd.DataFrame([dict(zip(names, values)) for values in zip(*(parquet.python("changes", n, data[n])
                                                                      for n in names))], columns=names)


def restored(processed) -> pd.DataFrame:
    """The published table with the left-out rows rebuilt, in the table's order."""
    return pd.DataFrame(map(asdict, unchanged.every_change(processed)), columns=BY_NAME["changes"].names)


def comparable(frame: pd.DataFrame) -> list[tuple]:
    """Rows as tuples of plain values (lists of ops as nested lists, dates as text)."""
    def plain(v):
        if hasattr(v, "tolist"):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            return tuple(plain(x) for x in v)
        if isinstance(v, dict):
            return tuple(plain(x) for x in v.values())
        return str(v) if hasattr(v, "isoformat") else v
    return [tuple(plain(v) for v in row) for row in frame.itertuples(index=False)]


def check(processed) -> None:
    full, lean = full_table(processed), load.changes(processed)
    assert len(lean) < len(full)
    assert not any(unchanged.plain(c, len(c.example_ops)) for c in lean)  # none left in
    assert comparable(restored(processed)) == comparable(full)


def test_the_seed_run_loses_no_change(seeds_run):
    check(seeds_run[1])


def test_the_archive_run_loses_no_change(archive_run):
    check(archive_run[1])


def test_the_database_views_give_every_change_back(archive_run):
    """`changes_all` (`changes` with the view `changes_unchanged`) holds the rows the database's
    `changes` held before it left any out, its own columns (each change's wordings) included."""
    processed = archive_run[1]
    full = full_table(processed)
    names = BY_NAME["changes"].names
    flat = flatten(full, "changes")
    con = sqlite3.connect(processed / "crdiff.sqlite")
    con.execute("CREATE TEMP TABLE old AS SELECT * FROM changes WHERE 0")  # the old table, built as database.py does
    con.executemany(f"INSERT INTO old ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    ([None if v == "" else v for v in row] for row in zip(*(flat[n].tolist() for n in names))))
    con.execute(CHANGE_TEXTS.replace("UPDATE changes", "UPDATE old").replace("changes.", "old."))
    columns = ", ".join(f'"{c}"' for c in in_database(BY_NAME["changes"]).names)
    rows = con.execute(f"SELECT {columns} FROM changes_all").fetchall()
    old = con.execute(f"SELECT {columns} FROM old").fetchall()
    assert len(rows) == len(full) > con.execute("SELECT count(*) FROM changes").fetchone()[0]
    assert sorted(rows, key=repr) == sorted(old, key=repr)


def test_the_readme_recipe_gives_the_left_out_rows(seeds_run):
    """processed/README.md's pandas lines, run as written, rebuild the rows `continuations` rebuilds."""
    processed = seeds_run[1]
    readme = (processed / "README.md").read_text(encoding="utf-8")
    recipe = re.search(r"```python\n(import pandas as pd\n.*?)```", readme, re.S).group(1)
    namespace: dict = {}
    exec(recipe.replace('"processed/', f'"{processed}/'), namespace)
    got = namespace["unchanged"]
    want = pd.DataFrame(map(asdict, unchanged.left_out(processed, {(c.lineage_id, c.to_edition)
                                                                  for c in load.changes(processed)})))
    assert len(want) > 0 and len(namespace["every"]) == len(want) + len(namespace["changes"])
    key = ["from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "kind", "change", "renumbered",
           "similarity", "score", "review", "method", "note"]
    for frame in (got, want):
        frame["examples"] = frame.example_ops.map(len)
    assert sorted(map(repr, got[key + ["examples"]].astype(str).values.tolist())) == \
        sorted(map(repr, want[key + ["examples"]].astype(str).values.tolist()))


def steps_of(processed):
    full = full_table(processed)
    return full, sorted(set(zip(full.from_edition, full.to_edition)))


@pytest.mark.parametrize("run", ["seeds_run", pytest.param("archive_run", marks=pytest.mark.archive)])
def test_compare_of_a_step_gives_every_change_of_it(run, request):
    """`compare A B` of a step of the run says what the run recorded, the plain unchanged rules included."""
    processed = request.getfixturevalue(run)[1]
    full, steps = steps_of(processed)
    for a, b in steps:
        got = cmp.stored(processed, load_rules(processed, a), load_rules(processed, b))
        mine = full[(full.from_edition == a) & (full.to_edition == b)]
        assert comparable(pd.DataFrame(map(asdict, got), columns=BY_NAME["changes"].names)) == comparable(mine)


HEAD = ("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game\n\n"
        "100. General\n\n100.1. Each game has a winner.\n\n100.2. A player may play a card from his or her hand.\n")


def test_a_step_where_nothing_changed_is_still_a_step(tmp_path):
    """Two editions word for word alike: `changes` has no row, yet the step and its unchanged rules are
    there for the reports, `compare` and `history`."""
    corpus, raw = tmp_path / "corpus", tmp_path / "raw"
    corpus.mkdir()
    raw.mkdir()
    for name, date in (("2009-05-01", "May 1, 2009"), ("2009-07-11", "July 11, 2009")):
        (corpus / f"{name}.txt").write_text(HEAD.format(date), encoding="utf-8")
    processed = tmp_path / "processed"
    stages.run_datasets(raw, [corpus], processed, quiet=True)
    assert load.changes(processed) == []
    rules = load.rows(processed, "rules", only=RULE_COLUMNS)
    editions = pd.DataFrame(load.rows(processed, "editions"))
    changes = pd.DataFrame(columns=BY_NAME["changes"].names)
    steps = build._steps(changes, pd.DataFrame(columns=BY_NAME["renumberings"].names),
                         build._left_out(rules, changes, editions))
    assert [(s["from"], s["to"], s["counts"]["unchanged"], s["changed"]) for s in steps] == \
        [("2009-05-01", "2009-07-11", 4, 0)]
    got = cmp.stored(processed, load_rules(processed, "2009-05-01"), load_rules(processed, "2009-07-11"))
    assert [(c.old_rule_id, c.change) for c in got] == [("1", "unchanged"), ("100", "unchanged"),
                                                         ("100.1", "unchanged"), ("100.2", "unchanged")]
    assert [v["change"] for v in history.history(processed, "100.2")[0]["versions"]] == ["first", "unchanged"]
