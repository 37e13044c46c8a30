"""The typed loader is the exact inverse of export: records -> export -> load -> the same records."""
import json
import os
import sqlite3
from dataclasses import dataclass, field, replace

import duckdb
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.publish import browse
from pipeline.publish import export
from pipeline.publish import load, unchanged
from pipeline.publish import transaction as publish
from pipeline.ingest.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.records import Citation, Rule, RuleChange, rule_key
from conftest import needs_archive

EXAMPLES = int(os.environ.get("ROUND_TRIP_EXAMPLES", "40"))
text = st.text(max_size=40)
dates = st.dates().map(lambda d: d.isoformat())
numbers = st.sampled_from(["1", "702", "702.1", "702.10", "702.10a", "212.2h-k", "212.8.Ruling.1", "Ability", ""])
words = st.lists(text, max_size=3).map(tuple)
citations = st.lists(st.builds(Citation, text, text, text, text), max_size=2).map(tuple)
rule = st.builds(Rule, edition=dates, source=text, rule_id=numbers, kind=st.sampled_from(["rule", "glossary"]),
                 parent=numbers, title=text, text=text, compare=text, examples=words, sentences=words,
                 references=words, citations=citations, flags=words, line_start=st.integers(0, 10**6),
                 line_end=st.integers(0, 10**6), occurrence=st.integers(1, 3), variants=words)


@st.composite
def exported_rule(draw):
    """A record as segment makes it: its comparison form derived from its text (or title), its
    sentences mostly pieces of that text, in order (stored as offsets), sometimes not (kept whole)."""
    r = draw(rule)
    base = r.text or r.title
    cuts = sorted(draw(st.lists(st.integers(0, len(base)), max_size=6)))
    pieces = [base[a:b] for a, b in zip(cuts[::2], cuts[1::2])]
    sentences = draw(st.lists(st.one_of(st.sampled_from(pieces) if pieces else text, text), max_size=4))
    return replace(r, compare=compare_form(base), sentences=tuple(pieces if draw(st.booleans()) else sentences))
op = st.tuples(st.sampled_from(["replace", "insert", "delete"]), *[st.integers(0, 10**5)] * 4, text, text)
ops = st.lists(op, max_size=3).map(tuple)
change = st.builds(RuleChange, dates, dates, text, numbers, numbers, text, st.sampled_from(["modified", "added"]),
                   st.booleans(), st.floats(0, 100), st.booleans(), text, st.floats(0, 100), ops, ops,
                   st.lists(ops, max_size=2).map(tuple), st.lists(st.tuples(text, text), max_size=2).map(tuple), text)


@dataclass
class History:  # what export reads of lineage.History
    lineage: dict = field(default_factory=dict)
    last_changed: dict = field(default_factory=dict)
    changes: list = field(default_factory=list)


def publish_tables(folder, history, rules):
    stage = publish.begin(folder)
    export.write_table(export.rule_rows(rules, history), stage, "rules")
    export.write_table(export.change_rows(history), stage, "changes")
    publish.commit(folder, "test")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=st.lists(exported_rule(), max_size=6, unique_by=rule_key), changes=st.lists(change, max_size=6),
       placed=st.lists(st.tuples(st.text(min_size=1, max_size=20), dates), max_size=6))
def test_export_then_load_gives_the_same_records(tmp_path, rules, changes, placed):
    history = History(changes=changes)
    for r, (lineage, changed) in zip(rules, placed):
        history.lineage[rule_key(r)] = lineage
        history.last_changed[rule_key(r)] = changed
    publish_tables(tmp_path, history, rules)
    loaded = load.dataset(tmp_path)
    assert loaded.rules == rules
    assert (loaded.lineage, loaded.last_changed) == (history.lineage, history.last_changed)
    order = lambda c: repr(c)  # noqa: E731 (export sorts changes its own way)
    assert sorted(loaded.changes, key=order) == sorted(changes, key=order)


def test_loader_refuses_a_table_of_another_run(seeds_run, tmp_path):
    _, processed = seeds_run
    for path in (p for p in processed.iterdir() if p.is_file()):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "changes.parquet").write_bytes((processed / "rules.parquet").read_bytes())
    with pytest.raises(PipelineError, match="changes.parquet is not the file run"):
        load.changes(tmp_path)


def test_seed_records_survive_the_round_trip(seeds_run):
    result, processed = seeds_run
    loaded = load.rules(processed)
    assert loaded.rules == result.rules
    # the plain unchanged changes have no row (pipeline/publish/unchanged.py): rebuilt, they are all there
    assert sorted(unchanged.every_change(processed), key=repr) == sorted(result.history.changes, key=repr)


def test_parquet_and_sqlite_keep_the_types(seeds_run):
    _, processed = seeds_run
    rules = pd.read_parquet(processed / "rules.parquet")
    assert rules["parent"].map(type).eq(str).all() and rules["occurrence"].dtype == "int64"
    assert isinstance(rules["examples"].iloc[0], object) and "flags" not in rules.columns
    changes = pd.read_parquet(processed / "changes.parquet")
    assert changes["renumbered"].dtype == bool and changes["similarity"].dtype == "float64"
    types = dict(duckdb.connect().execute(f"DESCRIBE SELECT * FROM '{processed / 'changes.parquet'}'").fetchall()[i][:2]
                 for i in range(17))
    assert types["from_edition"] == "VARCHAR" and types["ops"].startswith("STRUCT(tag VARCHAR, old_start BIGINT")
    first = rules["edition"].iloc[0]  # an edition is an identifier: text, compared with text
    assert isinstance(first, str) and len(rules[rules["edition"] == first]) == (rules["edition"] == first).sum() > 0
    editions = duckdb.connect().execute(f"SELECT edition, date FROM '{processed / 'editions.parquet'}'").fetchall()
    assert all(isinstance(e, str) and d.isoformat() == e for e, d in editions)  # and one typed date beside it
    con = sqlite3.connect(processed / "crdiff.sqlite")
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    for table in ("rules", "changes", "lineages", "editions", "sources", "discards", "references", "citations",
                  "glossary", "terminology", "renumberings"):
        csv = pd.read_csv(processed / f"{table}.csv", dtype=str, keep_default_na=False)
        assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (len(csv),), table
        assert len(pd.read_parquet(processed / f"{table}.parquet")) == len(csv), table
    indexed = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"rules_lineage_id", "rules_rule_id", "changes_to_edition", "changes_lineage_id"} <= indexed


def test_the_database_s_references_view_has_the_csv_s_rows(seeds_run):
    """`references` is a view over the rules' lists in the database: the CSV's rows, in its order, one for one."""
    _, processed = seeds_run
    csv = pd.read_csv(processed / "references.csv", dtype=str, keep_default_na=False)
    expected = [(e, r, k, int(o), t, int(x == "True"), tk or None)
                for e, r, k, o, t, x, tk in csv.itertuples(index=False)]
    con = sqlite3.connect(processed / "crdiff.sqlite")
    assert con.execute('SELECT * FROM "references"').fetchall() == expected
    assert {x for *_, x, _ in expected} == {0, 1} and len(expected) > 20  # dangling ones too


def test_changes_name_the_old_and_new_wording(seeds_run):
    """Every change row names the wording of the rules it names, old and new, by its key in texts
    (the database's own columns: one key join, no view over whole tables; '' is NULL)."""
    _, processed = seeds_run
    con = sqlite3.connect(processed / "crdiff.sqlite")
    rules = {(r.edition, r.rule_id): r for r in load.rules(processed).rules
             if r.kind != "commentary" and r.occurrence == 1}
    rows = con.execute("SELECT c.from_edition, c.to_edition, c.old_rule_id, c.new_rule_id, o.text, n.text FROM changes "
                       "AS c LEFT JOIN texts AS o ON o.text_id = c.old_text_id LEFT JOIN texts AS n ON n.text_id = "
                       "c.new_text_id WHERE c.change <> 'unchanged'").fetchall()
    assert len(rows) > 10 and any(row[4] and row[5] and row[4] != row[5] for row in rows)
    for a, b, old_id, new_id, old, new in rows:
        old_rule, new_rule = rules.get((a, old_id)), rules.get((b, new_id))
        assert old == (old_rule.text or None if old_rule else None)
        assert new == (new_rule.text or None if new_rule else None)
    views = con.execute("SELECT name FROM sqlite_master WHERE type = 'view' AND name <> 'glossary'").fetchall()
    # no other view: they rebuild rows, and say so (references: each rule's list, a row per target)
    assert views == [("references",), ("changes_unchanged",), ("changes_all",)]


@needs_archive
def test_archive_twins_keep_numbers_as_text_and_search_finds_the_uniqueness_rule(archive_run):
    _, processed = archive_run
    rules = pd.read_parquet(processed / "rules.parquet", columns=["parent"])
    assert (rules["parent"] == "702.10").sum() > 0
    (n,) = duckdb.connect().execute(f"SELECT count(*) FROM '{processed / 'rules.parquet'}' "
                                    "WHERE parent = '702.10'").fetchone()
    assert n == (rules["parent"] == "702.10").sum()
    con = sqlite3.connect(processed / "crdiff.sqlite")
    hits = con.execute("SELECT r.edition, r.rule_id FROM texts_fts JOIN texts AS t ON t.rowid = texts_fts.rowid "
                       "JOIN rules AS r ON r.text_id = t.text_id "
                       "WHERE texts_fts MATCH 'planeswalker uniqueness rule'").fetchall()
    assert ("2009-07-11", "306.4") in hits
    assert con.execute("SELECT count(*) FROM rules").fetchone()[0] == len(load.rules(processed).rules)


def test_sentences_are_stored_as_offsets_and_compare_not_at_all(seeds_run):
    """The rules table holds each text once: sentences are [start, end] into it (a string only when
    a sentence is not a piece of the text), the comparison form is not stored; the loader and the
    database's view give the sentences back."""
    result, processed = seeds_run
    texts = pd.read_csv(processed / "texts.csv", dtype=str, keep_default_na=False)
    table = pd.read_csv(processed / "rules.csv", dtype=str, keep_default_na=False).merge(texts, on="text_id")
    assert "compare" not in table.columns and "compare" not in pd.read_parquet(processed / "rules.parquet").columns
    con = sqlite3.connect(processed / "crdiff.sqlite")
    assert "compare" not in [row[1] for t in ("rules", "texts") for row in con.execute(f"PRAGMA table_info({t})")]
    pairs = kept = 0
    for base, stored in zip(table["text"].where(table["text"] != "", table["title"]), table["sentences"]):
        for s in json.loads(stored):
            if isinstance(s, str):
                kept += 1
                assert s not in base
            else:
                pairs += 1
                assert 0 <= s[0] < s[1] <= len(base)
    assert pairs > 2 * kept  # the strings: sentences spaCy cut inside a citation tag ("... [", "CompRules 2007/10/01]")
    expected = {(r.edition, r.kind, r.rule_id, r.occurrence): r.sentences for r in result.rules if r.sentences}
    got: dict = {}
    for edition, kind, rule_id, occurrence, _, sentence in con.execute(browse.SPELLED + " ORDER BY r.rowid, n"):
        got.setdefault((edition, kind, rule_id, occurrence), []).append(sentence)
    assert {k: tuple(v) for k, v in got.items()} == expected


def test_export_refuses_a_comparison_form_it_cannot_derive(tmp_path):
    r = Rule("2020-01-01", "s", "100.1", "rule", "100", "", "A “quoted” word.", "a hand-made form")
    with pytest.raises(PipelineError, match=r"rule 100.1 \(2020-01-01\): its comparison form"):
        export.rule_rows([r])
    assert export.rule_rows([replace(r, compare=compare_form(r.text))])["text"].tolist() == [r.text]


def test_loader_names_a_table_of_another_version(seeds_run, tmp_path):
    """A rules.parquet of the layout before (a `compare` column, sentences as strings): a clear
    error that says to run again, not a TypeError deep in the loader."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    _, processed = seeds_run
    table = pq.read_table(processed / "rules.parquet")
    old = table.append_column("compare", pa.array([""] * len(table), pa.string()))
    pq.write_table(old, tmp_path / "rules.parquet")
    with pytest.raises(PipelineError, match="rules.parquet does not have the columns of pipeline/schema.py"):
        load.read(tmp_path, "rules", check=False)
    pq.write_table(table, tmp_path / "rules.parquet")
    assert load.read(tmp_path, "rules", check=False).num_rows == len(table)


def test_csv_and_database_store_each_wording_once_and_give_it_back(seeds_run):
    """rules.csv names its wording (text, examples, sentences) by text_id; texts.csv holds each
    once; the merge, the database's views and the Parquet twin all give the same rules back."""
    result, processed = seeds_run
    texts = pd.read_csv(processed / "texts.csv", dtype=str, keep_default_na=False)
    rules = pd.read_csv(processed / "rules.csv", dtype=str, keep_default_na=False)
    assert texts["text_id"].is_unique and len(texts) < len(rules) and "text" not in rules.columns
    whole = rules.merge(texts, on="text_id", how="left", validate="many_to_one")
    assert whole["text"].tolist() == [r.text for r in result.rules]
    assert whole["examples"].map(json.loads).tolist() == [list(r.examples) for r in result.rules]
    key = lambda r: (r.edition, r.kind, r.rule_id, r.occurrence)  # noqa: E731
    con = sqlite3.connect(processed / "crdiff.sqlite")
    view = {row[:4]: row[4:] for row in con.execute(
        "SELECT edition, kind, rule_id, occurrence, text, examples, title FROM rules LEFT JOIN texts USING (text_id)")}
    assert view == {key(r): (r.text or None, json.dumps(list(r.examples), separators=(",", ":"), ensure_ascii=False),
                             r.title or None) for r in result.rules}
    glossary = pd.read_parquet(processed / "glossary.parquet")
    rows = con.execute("SELECT edition, term, occurrence, definition FROM glossary").fetchall()
    assert sorted(rows) == sorted(zip(glossary.edition.astype(str), glossary.term, glossary.occurrence,
                                      glossary.definition.replace("", None)))
    assert len(rows) == len(glossary) == sum(r.kind == "glossary" for r in result.rules)


def test_a_wording_has_one_key_and_a_glossary_entry_shares_its_rule_s():
    texts = export.Texts()
    rules = pd.DataFrame({"text": ["A.", "A.", "B."], "examples": ["[]", "[]", '["x"]'],
                          "sentences": ["[[0,2]]", "[[0,2]]", "[[0,2]]"]})
    keys = texts.keys("rules", rules)
    assert keys[0] == keys[1] != keys[2] and len(texts.frame()) == 2
    assert texts.keys("glossary", pd.DataFrame({"definition": ["B."], "examples": ['["x"]']})) == keys[2:]
    assert texts.frame().loc[1, "sentences"] == [[0, 2]] or texts.frame().loc[0, "sentences"] == [[0, 2]]
