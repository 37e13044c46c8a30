import json
import sqlite3
from pathlib import Path

import duckdb
import pandas as pd
from frictionless import validate

from pipeline.publish import browse
from pipeline.schema import TABLES, flat
from conftest import ROOT, needs_archive


def check_package(processed: Path):
    report = validate(str(processed / "datapackage.json"))
    errors = [f"{t.name}: {e.message}" for t in report.tasks for e in t.errors[:3]]
    assert report.valid, "\n".join(errors)
    for table in TABLES:
        data = pd.read_csv(processed / f"{table.name}.csv", keep_default_na=False, dtype=str)
        assert list(data.columns) == flat(table).names
        if table.primary_key:
            assert not data.duplicated(list(table.primary_key)).any(), table.name
        assert len(pd.read_parquet(processed / f"{table.name}.parquet", columns=[])) == len(data), table.name


def test_seed_package_validates(seeds_run):
    check_package(seeds_run[1])


@needs_archive
def test_archive_package_validates(archive_run):
    check_package(archive_run[1])


def test_schema_drift_fails_validation(seeds_run, tmp_path):
    _, processed = seeds_run
    for path in (p for p in processed.iterdir() if p.is_file()):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    rules = (tmp_path / "rules.csv").read_bytes().decode("utf-8").split("\r\n")
    rules.insert(2, rules[1])  # a duplicated primary key
    (tmp_path / "rules.csv").write_text("\r\n".join(rules), encoding="utf-8", newline="")
    assert not validate(str(tmp_path / "datapackage.json")).valid


def test_committed_data_dictionary_matches_the_schema(seeds_run):
    """processed/README.md is generated; the committed copy is the one `make` writes for the seeds."""
    _, processed = seeds_run
    assert (ROOT / "processed" / "README.md").read_text(encoding="utf-8") == \
        (processed / "README.md").read_text(encoding="utf-8")


def test_every_column_is_documented_with_an_example(seeds_run):
    _, processed = seeds_run
    text = (processed / "README.md").read_text(encoding="utf-8")
    for table in TABLES:
        assert f"## `{table.name}`" in text
        for column in table.columns:
            assert f"| `{column.name}` | {column.type} |" in text


def test_duckdb_reads_documented_types(seeds_run):
    _, processed = seeds_run
    con = duckdb.connect()
    types = dict(r[:2] for r in con.execute(f"DESCRIBE SELECT * FROM read_csv('{processed / 'rules.csv'}')").fetchall())
    assert types["edition"] == "DATE" and types["occurrence"] == "BIGINT" and types["line_start"] == "BIGINT"
    assert types["text_id"] == "VARCHAR"
    texts = dict(r[:2] for r in con.execute(f"DESCRIBE SELECT * FROM read_csv('{processed / 'texts.csv'}')").fetchall())
    assert texts["examples"] == "VARCHAR"
    (n,) = con.execute(f"SELECT count(*) FROM read_csv('{processed / 'rules.csv'}') "
                       f"JOIN read_csv('{processed / 'texts.csv'}') "
                       "USING (text_id) WHERE json_array_length(examples) > 0").fetchone()
    assert n > 0
    changes = dict(r[:2] for r in con.execute(
        f"DESCRIBE SELECT * FROM read_csv('{processed / 'changes.csv'}')").fetchall())
    assert changes["renumbered"] == "BOOLEAN" and changes["similarity"] == "DOUBLE"


def test_pandas_types(seeds_run):
    _, processed = seeds_run
    rules = pd.read_csv(processed / "rules.csv", keep_default_na=False, parse_dates=["edition"])
    assert str(rules["edition"].dtype).startswith("datetime64")
    changes = pd.read_csv(processed / "changes.csv", keep_default_na=False)
    assert changes["renumbered"].dtype == bool and changes["similarity"].dtype.kind == "f"


def test_dangling_references_are_findable(seeds_run):
    _, processed = seeds_run
    refs = pd.read_csv(processed / "references.csv", keep_default_na=False)
    dangling = refs[~refs["target_exists"]]
    assert len(dangling) and (dangling["target_kind"] == "").all()
    assert {"409", "420"} <= set(dangling["target"])  # the fragments cite rules they do not hold


def test_lineages_cover_every_rule(seeds_run):
    _, processed = seeds_run
    rules = pd.read_csv(processed / "rules.csv", keep_default_na=False)
    lineages = pd.read_csv(processed / "lineages.csv", keep_default_na=False).set_index("lineage_id")
    numbered = rules[rules["kind"] != "commentary"]
    assert set(numbered["lineage_id"]) == set(lineages.index)
    row = lineages.loc[rules.set_index(["edition", "rule_id"]).loc[("2025-06-06", "205.1a"), "lineage_id"]]
    assert "numbers" not in lineages.columns  # the rules' rows say it: the query processed/README.md shows
    with sqlite3.connect(processed / "crdiff.sqlite") as con:
        numbers = con.execute(browse.NUMBERS, {"lineage": row.name}).fetchall()
    assert [(n, json.loads(editions)) for n, editions in numbers] == [("212.1b", ["2008-03-17"]),
                                                                     ("205.1a", ["2025-06-06"])]
    assert browse.NUMBERS in (processed / "README.md").read_text(encoding="utf-8")


@needs_archive
def test_archive_terminology(archive_run):
    _, processed = archive_run
    terms = pd.read_csv(processed / "terminology.csv", keep_default_na=False)
    total = terms.groupby(["old", "new"])["count"].sum().sort_values(ascending=False)
    assert total[("his or her", "their")] > 100
    assert total[("comes into play", "enters the battlefield")] > 10
