"""Datasette over the seeds' database, for real: started by pipeline/cli/serve.py on 127.0.0.1 on a free
port (a child process, always stopped), asked over HTTP. The search finds the right rule, the canned
queries answer, every page people open answers, and the texts show in place of their keys."""
import json
import sqlite3
import urllib.parse

import pytest
from click.testing import CliRunner

from pipeline.publish import browse
from pipeline.cli import serve
from pipeline.cli.main import main
from pipeline.schema import DATABASE_ONLY, LICENCE, TABLES

RULE, LINEAGE, WORD = "205.1a", "2008-03-17:212.1b", "stickers"  # a seed rule, its lineage, a word only it has


@pytest.fixture(scope="module")
def site(seeds_run):
    _, processed = seeds_run
    with serve.running(processed) as url:
        yield url, processed


def rows(url: str, path: str, **params) -> list[dict]:
    query = urllib.parse.urlencode({**params, "_shape": "objects"})
    status, body, _ = serve.fetch(f"{url}/crdiff/{path}.json?{query}")
    assert status == 200, body[:300]
    return json.loads(body)["rows"]


@pytest.mark.slow
def test_every_page_people_open_answers(site):
    url, processed = site
    paths = serve.pages(processed)
    assert {"/crdiff/rules", "/crdiff/changes", "/crdiff/glossary"} <= set(paths) and len(paths) > 20
    for path in paths:
        assert serve.fetch(url + path)[0] == 200, path


@pytest.mark.slow
def test_search_finds_the_rule(site):
    url, _ = site
    found = rows(url, "search", q=WORD)
    assert [(r["rule_id"], r["first_edition"]) for r in found] == [(RULE, "2025-06-06")]
    texts = rows(url, "texts", _search=WORD)  # Datasette's own search box: the table is searchable
    assert len(texts) == 1 and WORD in texts[0]["text"]
    assert rows(url, "search", q="") == []  # the page opened before anything is typed


@pytest.mark.slow
def test_canned_queries_answer(site):
    url, _ = site
    history = rows(url, "history", rule=RULE, edition="")
    assert [(r["lineage_id"], r["edition"], r["rule_id"]) for r in history] == \
        [(LINEAGE, "2008-03-17", "212.1b"), (LINEAGE, "2025-06-06", RULE)]
    assert "renumbered" in history[1]["change"] and WORD in history[1]["text"] and WORD not in history[0]["text"]
    assert rows(url, "history", rule="212.1b", edition="2008-03-17") == history
    between = {(r["old_rule_id"], r["new_rule_id"]): r for r in rows(url, "between", **{"from": "2008-03-17",
                                                                                      "to": "2025-06-06"})}
    assert between[("212.1b", RULE)]["change"] == "reworded" and WORD in between[("212.1b", RULE)]["new_text"]
    numbers = rows(url, "numbers", lineage=LINEAGE)  # what the lineages table's `numbers` column said
    assert [(r["rule_id"], json.loads(r["editions"])) for r in numbers] == [("212.1b", ["2008-03-17"]),
                                                                            (RULE, ["2025-06-06"])]
    sentences = rows(url, "sentences", edition="2025-06-06", rule=RULE)
    assert len(sentences) == 7 and sentences[3]["sentence"].startswith("Counters, stickers")
    status, body, _ = serve.fetch(f"{url}/crdiff/edition.csv?edition=2025-06-06&_size=max")  # for a spreadsheet
    assert status == 200 and body.startswith(b"edition,kind,rule_id,occurrence,title,text,examples,")
    assert b"Counters, stickers, effects" in body


def test_an_edition_s_rules_come_with_their_wording_for_a_spreadsheet(seeds_run):
    """The canned query `edition` gives the rows rules_text.csv held (the rules with their wording in
    place, examples one per line): the file is gone, the rows are not."""
    import pandas as pd
    _, processed = seeds_run
    con = sqlite3.connect(processed / "crdiff.sqlite")
    rules = pd.read_parquet(processed / "rules.parquet")
    for edition in sorted(set(rules["edition"])):
        got = con.execute(browse.EDITION, {"edition": edition})
        columns = [d[0] for d in got.description]
        mine = [tuple("" if v is None else v for v in row) for row in got]
        want = rules[rules["edition"] == edition]
        want = [tuple("" if v is None else v for v in row) for row in zip(
            want["edition"], want["kind"], want["rule_id"], want["occurrence"], want["title"], want["text"],
            ["\n".join(e) for e in want["examples"]], want["lineage_id"], want["source"], want["line_start"],
            want["line_end"])]
        assert columns[:7] == ["edition", "kind", "rule_id", "occurrence", "title", "text", "examples"]
        assert mine == want and mine, edition


@pytest.mark.slow
def test_table_pages_show_the_wording_in_place_of_its_key(site):
    url, _ = site
    status, page, _ = serve.fetch(f"{url}/crdiff/rules?rule_id={RULE}")
    assert status == 200 and b"Counters, stickers, effects" in page
    status, page, _ = serve.fetch(f"{url}/crdiff/changes?new_rule_id={RULE}")
    assert status == 200 and b"Counters, stickers, effects" in page and b"Counters, effects, and damage" in page
    status, page, _ = serve.fetch(f"{url}/")
    assert status == 200 and LICENCE.replace("'", "&#39;").encode() in page


def test_the_database_s_own_columns_hold_the_wording_each_change_names(seeds_run):
    _, processed = seeds_run
    con = sqlite3.connect(processed / "crdiff.sqlite")
    columns = [row[1] for row in con.execute("PRAGMA table_info(changes)")]
    assert columns[-2:] == [c.name for c in DATABASE_ONLY["changes"]]
    for old, new, old_id, new_id in con.execute(
            "SELECT old_rule_id, new_rule_id, old_text_id, new_text_id FROM changes"):
        assert (old is None) == (old_id is None) and (new is None) == (new_id is None)
    assert con.execute("SELECT count(*) FROM texts_fts WHERE texts_fts MATCH ?", [WORD]).fetchone() == (1,)


def test_metadata_describes_every_table_and_is_published(seeds_run):
    _, processed = seeds_run
    written = json.loads((processed / browse.METADATA).read_text(encoding="utf-8"))
    assert written == browse.metadata() and written["license"] == LICENCE
    tables = written["databases"]["crdiff"]["tables"]
    assert set(tables) == {t.name for t in TABLES} and tables["texts"]["label_column"] == "text"
    assert tables["changes"]["columns"]["old_text_id"].startswith("Database only")
    assert set(written["databases"]["crdiff"]["queries"]) == {"history", "between", "search", "edition",
                                                                   "numbers", "sentences"}


def test_serve_says_what_is_missing(tmp_path, monkeypatch):
    result = CliRunner().invoke(main, ["serve", "--processed", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path}: crdiff.sqlite is missing: run `python -m pipeline run` first\n"
    monkeypatch.setattr(serve.importlib.util, "find_spec", lambda name: None)
    result = CliRunner().invoke(main, ["serve", "--processed", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == "Error: datasette is not installed: pip install 'crdiff[serve]' (or `make serve`)\n"
