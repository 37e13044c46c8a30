"""The JSON for tools (processed/json/): valid against its schemas, one line to load in Python and
JavaScript, the same bytes from the same run, and true to the tables."""
import gzip
import json
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest
from jsonschema import Draft202012Validator

from pipeline.publish import jsonout, unchanged
from conftest import ROOT, needs_archive


def validator(processed: Path, name: str) -> Draft202012Validator:
    schema = json.loads((processed / "json" / jsonout.FILES.get(name, ("edition.schema.json",))[0]).read_text())
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def check_files(processed: Path) -> dict[str, object]:
    """Every JSON file valid against its schema; returns them loaded."""
    folder = processed / "json"
    docs = {name: json.loads((folder / name).read_text(encoding="utf-8")) for name in jsonout.FILES}
    for name, doc in docs.items():
        errors = sorted(validator(processed, name).iter_errors(doc), key=str)
        assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)}"
    editions = sorted((folder / "editions").glob("*.json.gz"))
    for path in editions:
        doc = json.loads(gzip.decompress(path.read_bytes()))
        assert not list(validator(processed, "edition").iter_errors(doc)), path.name
        docs[f"editions/{path.name}"] = doc
    assert editions, "no edition files"
    return docs


def test_seed_json_validates_and_agrees_with_the_tables(seeds_run):
    _, processed = seeds_run
    docs = check_files(processed)
    current = docs["current.json"]
    rules = pd.read_parquet(processed / "rules.parquet")
    mine = rules[(rules.edition == current["edition"]) & ~rules.kind.isin(["glossary", "commentary"])]
    assert set(current["rules"]) == set(mine.rule_id)
    for r in mine.itertuples():
        got = current["rules"][r.rule_id]
        assert (got["text"], got["title"], got["parent"], got["lineage"]) == (r.text, r.title, r.parent, r.lineage_id)
        assert got["examples"] == list(r.examples) and got["references"] == list(r.references)
        if r.parent in current["rules"]:
            assert r.rule_id in current["rules"][r.parent]["children"]
    assert current == docs[f"editions/{current['edition']}.json.gz"]


def test_seed_changes_hold_every_changed_rule_and_no_plain_unchanged_one(seeds_run):
    _, processed = seeds_run
    doc = check_files(processed)["changes.json"]
    changes = pd.DataFrame(map(asdict, unchanged.every_change(processed)))  # the plain unchanged ones too
    assert len(changes) > len(pd.read_parquet(processed / "changes.parquet"))
    shown = changes[(changes.change != "unchanged") | changes.renumbered]
    assert sum(len(s["changes"]) for s in doc["steps"]) == len(shown)
    for step in doc["steps"]:
        mine = changes[(changes.from_edition == step["from"]) & (changes.to_edition == step["to"])]
        assert step["counts"] == mine.change.value_counts().to_dict()
    ops = [c for s in doc["steps"] for c in s["changes"] if c["class"] == "modified"][0]["ops"]
    assert ops and all(len(op) == 7 for op in ops)


def test_json_bytes_are_the_same_for_the_same_run(seeds_run, tmp_path):
    result, processed = seeds_run
    for out in (tmp_path / "a", tmp_path / "b"):
        jsonout.write(out, result.rules, result.history, result.editions)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files and all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() ==
                         (processed / f).read_bytes() for f in files)


def test_the_data_package_lists_each_json_file_with_its_schema(seeds_run):
    _, processed = seeds_run
    package = json.loads((processed / "datapackage.json").read_text())
    listed = {r["path"]: r for r in package["resources"] if r["format"] == "json"}
    assert set(listed) == {f"json/{name}" for name in jsonout.FILES}
    for resource in listed.values():
        assert (processed / resource["path"]).is_file() and (processed / resource["jsonSchema"]).is_file()
    assert "json/editions/" in (processed / "README.md").read_text()


def test_they_load_in_one_line_of_python_and_of_javascript(seeds_run):
    _, processed = seeds_run
    line = f"import json; print(json.load(open('{processed}/json/current.json'))['rules']['205.1a']['text'][:20])"
    python = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True, check=True).stdout
    gz = f"import gzip, json; print(json.load(gzip.open('{processed}/json/editions/2006-07-15.json.gz'))['edition'])"
    assert subprocess.run([sys.executable, "-c", gz], capture_output=True, text=True).stdout == "2006-07-15\n"
    if not shutil.which("node"):
        pytest.skip("no node here for the JavaScript line")
    js = (f"console.log(JSON.parse(require('fs').readFileSync('{processed}/json/current.json'))"
          ".rules['205.1a'].text.slice(0, 20))")
    assert subprocess.run(["node", "-e", js], capture_output=True, text=True, check=True).stdout == python
    js_gz = ("console.log(JSON.parse(require('zlib').gunzipSync(require('fs')"
             f".readFileSync('{processed}/json/editions/2006-07-15.json.gz'))).edition)")
    assert subprocess.run(["node", "-e", js_gz], capture_output=True, text=True).stdout == "2006-07-15\n"


def test_the_docs_give_the_one_liners_they_test():
    text = (ROOT / "docs" / "datasets.md").read_text(encoding="utf-8")
    assert "json.load(open(\"processed/json/current.json\"))" in text
    assert "JSON.parse(require(\"fs\").readFileSync(\"processed/json/current.json\"))" in text


@needs_archive
def test_archive_json_validates_follows_212_1b_and_reports_its_sizes(archive_run):
    _, processed = archive_run
    docs = check_files(processed)
    lineage = docs["lineages.json"]["lineages"]["2003-10-01:212.1b"]
    assert [n for _, _, n in lineage["numbers"]] == ["212.1b", "204.1a", "205.1a"]
    assert lineage["numbers"][0][:2] == ["2003-10-01", "2009-05-01"]
    assert docs["current.json"]["edition"] == "2026-01-16" and docs["current.json"]["set_code"]
    assert docs["current.json"]["rules"]["702.19b"]["lineage"] == "2003-10-01:502.9b"
    july = next(s for s in docs["changes.json"]["steps"] if s["to"] == "2009-07-11")
    moved = next(c for c in july["changes"] if c["old"] == "212.1b")
    assert (moved["new"], moved["renumbered"]) == ("204.1a", True)
    ended = [v["end"] for v in docs["lineages.json"]["lineages"].values() if "end" in v]
    assert {e["class"] for e in ended} == {"removed", "merged"}
    sizes = {p.relative_to(processed).as_posix(): p.stat().st_size for p in (processed / "json").rglob("*.json*")}
    print("json sizes:", json.dumps(sizes, indent=1))
    assert sizes["json/current.json"] < 3_000_000 and sizes["json/lineages.json"] < 2_000_000


def test_changes_json_keeps_the_published_steps_before_the_tail_and_goes_through_the_later_changes_only(monkeypatch):
    """changes.json made step by step is the whole document's bytes; given the published file and where its
    steps are, the steps into editions before the tail are its bytes (not made again from the changes) and the
    later ones are made: the same bytes; marks that do not fit the file make it whole."""
    from pipeline.records import RuleChange

    def change(a, b, number, kind="modified"):
        return RuleChange(a, b, f"{a}:{number}", number, number, "rule", kind, False, 90.0, False, "fuzzy", 90.0,
                          (("replace", 0, 1, 0, 1, "x", "y"),))
    editions = ["2001-01-01", "2002-01-01", "2003-01-01", "2004-01-01"]
    changes = [change("2001-01-01", "2002-01-01", "100.1"), change("2002-01-01", "2003-01-01", "100.2"),
               change("2002-01-01", "2003-01-01", "100.3", "unchanged"), change("2003-01-01", "2004-01-01", "100.1")]
    whole = (jsonout.ENCODE(jsonout.changes_document(changes, editions)) + "\n").encode("utf-8")
    text, marks = jsonout.changes_json(changes, editions)
    assert text == whole and [m[:2] for m in marks] == [[a, b] for a, b in zip(editions, editions[1:])]
    assert all(json.loads(text[i:j]) == step for (*_, i, j), step in zip(marks, json.loads(text)["steps"]))
    seen = []
    real = jsonout.changes_document
    monkeypatch.setattr(jsonout, "changes_document", lambda cs, eds: seen.append(len(cs)) or real(cs, eds))
    assert jsonout.changes_json(changes, editions, ("2004-01-01", marks, whole))[0] == whole
    assert seen == [1]  # the tail's change alone
    planted = whole.replace(b'"class":"modified"', b'"class":"MODIFIED"', 1)  # the first step: kept as published
    assert jsonout.changes_json(changes, editions, ("2004-01-01", marks, planted))[0] == planted
    shifted = [[a, b, i + 1, j + 1] for a, b, i, j in marks]
    assert jsonout.changes_json(changes, editions, ("2004-01-01", shifted, whole))[0] == whole


def test_an_edition_s_file_that_did_not_change_is_left_in_place_and_listed_again(tmp_path):
    """Adding an edition leaves the earlier editions' json/editions/ files where they are (not made, read or
    copied), listed again with the same digest; the new edition's, changes.json and the rest are made; the
    folder holds what a cold run's does."""
    from pipeline import run as stages
    from pipeline.publish import transaction as publish
    from conftest import two_small_editions
    from published import contents
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _, b = two_small_editions(corpus)
    (tmp_path / "raw").mkdir()
    stages.run_all(tmp_path / "raw", [corpus], tmp_path / "p", None, quiet=True)
    old = tmp_path / "p" / "json" / "editions" / "2009-05-01.json.gz"
    before, listed = old.stat(), publish.listing(tmp_path / "p")["json/editions/2009-05-01.json.gz"]
    (corpus / "c.txt").write_text(b.read_text(encoding="utf-8").replace("July 11, 2009", "October 1, 2009")
                                  .replace("Each game", "Every game"), encoding="utf-8")
    stages.run_all(tmp_path / "raw", [corpus], tmp_path / "p", None, quiet=True)
    after = old.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert publish.listing(tmp_path / "p")["json/editions/2009-05-01.json.gz"] == listed
    assert (tmp_path / "p" / "json" / "editions" / "2009-10-01.json.gz").exists()
    stages.run_all(tmp_path / "raw", [corpus], tmp_path / "cold", None, quiet=True)
    assert contents(tmp_path / "p") == contents(tmp_path / "cold")
