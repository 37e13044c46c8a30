"""processed/metadata.json: what Datasette shows over processed/crdiff.sqlite, written with the
datasets (under the name Datasette looks for in a folder; `serve` passes it, with the settings the
big tables need): the title, the licence, each table's and column's description from
pipeline/schema.py, units, the labels that show a key into `texts` as its wording (and a lineage
as its current number), and the canned queries, each reading its few rows by index.

Written by the pipeline rather than shipped in the package, so it always describes the database
beside it (the same schema.py wrote both) and travels with the published folder.
"""
from __future__ import annotations

import json
import sqlite3

from pipeline import options
from pipeline.schema import BY_NAME, DESCRIPTION, LICENCE, TABLES, TITLE, in_database

METADATA = "metadata.json"
DATABASE = "crdiff"  # Datasette names a database by its file's stem
FAN_CONTENT_POLICY = "https://company.wizards.com/en/legal/fancontentpolicy"
LABELS = {"texts": "text", "lineages": "current_rule_id"}  # a key into these shows as this column
UNITS = {"changes": {"similarity": "percent", "score": "percent"}, "observations": {"similarity": "percent"},
         "sources": {"bytes": "byte"}}

# A rule's every version, by the lineages that carried the number (in `edition`, when given): its
# number, text and change class in each edition, then the change that ended it, if one did. A
# version no row of `changes` reaches, after an earlier one of the history, is unchanged (those rows
# are left out: pipeline/publish/unchanged.py).
HISTORY = """WITH carried AS (SELECT DISTINCT lineage_id FROM rules WHERE rule_id = :rule AND kind <> 'commentary'
    AND (:edition = '' OR edition = :edition))
SELECT r.lineage_id, r.edition, e.status AS edition_status, r.rule_id, r.kind, r.title, t.text,
    coalesce((SELECT group_concat(c.change || CASE WHEN c.renumbered THEN ' (renumbered)' ELSE '' END, ', ')
        FROM changes AS c WHERE c.lineage_id = r.lineage_id AND c.to_edition = r.edition
        AND c.new_rule_id = r.rule_id),
        CASE WHEN e.status <> 'copy' AND EXISTS (SELECT 1 FROM rules AS p JOIN editions AS pe ON pe.edition = p.edition
            WHERE p.lineage_id = r.lineage_id AND p.edition < r.edition AND p.kind <> 'commentary'
            AND pe.status <> 'copy') AND NOT EXISTS (SELECT 1 FROM changes AS c WHERE c.lineage_id = r.lineage_id
            AND c.to_edition = r.edition) THEN 'unchanged' END) AS change
FROM carried JOIN rules AS r ON r.lineage_id = carried.lineage_id LEFT JOIN texts AS t ON t.text_id = r.text_id
    LEFT JOIN editions AS e ON e.edition = r.edition
WHERE r.kind <> 'commentary'
UNION ALL
SELECT c.lineage_id, c.to_edition, e.status, c.old_rule_id, c.kind, NULL, NULL,
    c.change || coalesce(' into ' || c.new_rule_id, '')
FROM carried JOIN changes AS c ON c.lineage_id = carried.lineage_id LEFT JOIN editions AS e ON e.edition = c.to_edition
WHERE c.change IN ('removed', 'merged', 'not_covered')
ORDER BY 1, 2"""
# Any two editions, rule by rule: the same lineage is the same rule. One pass over the two editions'
# rows, grouped by lineage (a join of the two took seconds). A step of the history has its finer
# classes (cosmetic, reference, split, merged ...) in the `changes` table.
BETWEEN = """WITH pairs AS (SELECT lineage_id,
        max(CASE WHEN edition = :from THEN rule_id END) AS old_rule_id,
        max(CASE WHEN edition = :to THEN rule_id END) AS new_rule_id,
        coalesce(max(CASE WHEN edition = :to THEN kind END), max(kind)) AS kind,
        max(CASE WHEN edition = :from THEN title END) AS old_title,
        max(CASE WHEN edition = :to THEN title END) AS new_title,
        max(CASE WHEN edition = :from THEN text_id END) AS old_id,
        max(CASE WHEN edition = :to THEN text_id END) AS new_id,
        max(CASE WHEN edition = :from THEN rowid END) AS old_n, max(CASE WHEN edition = :to THEN rowid END) AS new_n
    FROM rules WHERE edition IN (:from, :to) AND kind <> 'commentary' AND occurrence = 1 AND lineage_id IS NOT NULL
    GROUP BY lineage_id)
SELECT CASE WHEN old_rule_id IS NULL THEN 'added' WHEN new_rule_id IS NULL THEN 'removed'
        WHEN old_id IS NOT new_id OR old_title IS NOT new_title THEN 'reworded'
        WHEN kind = 'glossary' THEN 'renamed' ELSE 'renumbered' END AS change,
    old_rule_id, new_rule_id, kind, old_title, new_title, o.text AS old_text, t.text AS new_text, lineage_id
FROM pairs LEFT JOIN texts AS o ON o.text_id = old_id LEFT JOIN texts AS t ON t.text_id = new_id
WHERE old_rule_id IS NOT new_rule_id OR old_id IS NOT new_id OR old_title IS NOT new_title
ORDER BY new_n IS NULL, coalesce(new_n, old_n)"""
# Each distinct wording is indexed once; a hit is every rule that had it, with its editions. An
# empty search (the page opened before anything is typed) finds nothing rather than an FTS5 error.
SEARCH = """SELECT r.rule_id, r.kind, min(r.edition) AS first_edition, max(r.edition) AS last_edition,
    count(*) AS editions, t.text, r.lineage_id
FROM texts_fts JOIN texts AS t ON t.rowid = texts_fts.rowid JOIN rules AS r ON r.text_id = t.text_id
WHERE :q <> '' AND texts_fts MATCH :q
GROUP BY t.rowid, r.rule_id, r.lineage_id ORDER BY min(texts_fts.rank), r.rule_id"""
# Every number a lineage carried, with the editions it carried it in: the rows of `rules` with its lineage_id,
# read by the index on (lineage_id, edition). It was the lineages table's `numbers` column, a second copy of
# those rows (4.3 MB of CSV and 5.3 MB of database on 110 simulated editions).
NUMBERS = """SELECT rule_id, json_group_array(edition) AS editions FROM (SELECT rule_id, edition FROM rules
WHERE lineage_id = :lineage ORDER BY edition) GROUP BY rule_id ORDER BY min(edition)"""
# A rule's sentences spelled out: they are stored as [start, end] offsets into its text (the title
# when there is none); substr counts characters from 1, as Python's slices count them from 0.
SPELLED = """SELECT r.edition, r.kind, r.rule_id, r.occurrence, s.key + 1 AS n,
    CASE WHEN s.type = 'text' THEN s.value ELSE substr(coalesce(t.text, r.title, ''), json_extract(s.value, '$[0]') + 1,
        json_extract(s.value, '$[1]') - json_extract(s.value, '$[0]')) END AS sentence
FROM rules AS r JOIN texts AS t ON t.text_id = r.text_id, json_each(t.sentences) AS s"""
SENTENCES = SPELLED + "\nWHERE r.edition = :edition AND r.rule_id = :rule ORDER BY r.rowid, n"
# An edition's rules with their wording in place, examples one per line in the cell: what a spreadsheet
# wants (Datasette's CSV link); the rules table names the wording by text_id. Read by the edition index.
EDITION = """SELECT r.edition, r.kind, r.rule_id, r.occurrence, r.title, t.text,
    (SELECT group_concat(x.value, char(10)) FROM json_each(t.examples) AS x) AS examples,
    r.lineage_id, r.source, r.line_start, r.line_end
FROM rules AS r LEFT JOIN texts AS t ON t.text_id = r.text_id
WHERE r.edition = :edition ORDER BY r.rowid"""

QUERIES = {
    "history": {"title": "A rule's history", "sql": HISTORY, "params": ["rule", "edition"],
                "description": "Every version of the rule numbered `rule` (in `edition`, YYYY-MM-DD, when given; "
                               "empty: in any edition), by lineage: its number, text and change class in each "
                               "edition, and the edition that removed or merged it."},
    "between": {"title": "What changed between two editions", "sql": BETWEEN, "params": ["from", "to"],
                "description": "Rules added, removed, reworded or renumbered from edition `from` to edition `to` "
                               "(any two, YYYY-MM-DD), matched by lineage. For one step of the history the "
                               "`changes` table has the finer classes (cosmetic, reference, split, merged ...)."},
    "search": {"title": "Search the rules", "sql": SEARCH, "params": ["q"],
               "description": "Full-text search (SQLite FTS5: words, \"a phrase\", OR, NOT, prefix*; stemmed, so "
                              "'attacks' finds 'attacking') over every wording: the rules that had it, their "
                              "number and first and last edition."},
    "edition": {"title": "An edition's rules with their wording", "sql": EDITION, "params": ["edition"],
                "description": "Every rule of `edition` (YYYY-MM-DD) in file order with its title, text and examples "
                               "(one per line in the cell) in place: download it as CSV for a spreadsheet."},
    "numbers": {"title": "A lineage's numbers", "sql": NUMBERS, "params": ["lineage"],
                "description": "Every number the lineage `lineage` (its lineage_id) carried, each with the editions it "
                               "carried it in (a JSON list), from the rows of `rules` with its lineage_id."},
    "sentences": {"title": "A rule's sentences", "sql": SENTENCES, "params": ["edition", "rule"],
                  "description": "The sentences of rule `rule` in `edition`, spelled out from the offsets stored "
                                 "in `texts.sentences`."},
}


def _table(name: str) -> dict:
    table = in_database(BY_NAME[name])
    out: dict = {"description": table.description, "columns": {c.name: c.description for c in table.columns}}
    for key, value in (("label_column", LABELS.get(name)), ("units", UNITS.get(name))):
        if value:
            out[key] = value
    return out


def metadata() -> dict:
    """Datasette's metadata for the database (the keys of Datasette 0.65's metadata.json)."""
    return {
        "title": TITLE, "description": DESCRIPTION,
        "license": LICENCE, "license_url": FAN_CONTENT_POLICY,
        "source": "Magic: The Gathering Comprehensive Rules (Wizards of the Coast)", "source_url": options.RULES_PAGE,
        "databases": {DATABASE: {
            "description": DESCRIPTION,
            "tables": {t.name: _table(t.name) for t in TABLES},
            "queries": QUERIES,
        }},
    }


def as_json() -> str:
    return json.dumps(metadata(), indent=2, ensure_ascii=False) + "\n"


def sample(con: sqlite3.Connection) -> dict[str, str]:
    """Real values of the canned queries' parameters: the last step, a rule of its new edition, one
    of that rule's words (the longest), its text's key and its lineage."""
    step = con.execute("SELECT from_edition, to_edition FROM changes ORDER BY rowid DESC LIMIT 1").fetchone()
    if step is None:
        step = (con.execute("SELECT max(edition) FROM rules").fetchone()[0],) * 2
    rule_id, text_id, text, lineage = con.execute(
        "SELECT r.rule_id, r.text_id, t.text, r.lineage_id FROM rules AS r JOIN texts AS t ON t.text_id = r.text_id "
        "WHERE r.edition = ? AND r.kind IN ('rule', 'subrule') AND t.text IS NOT NULL ORDER BY r.rowid LIMIT 1",
        [step[1]]).fetchone()
    word = max((w.strip(".,;:()\"'") for w in text.split()), key=len)
    return {"from": step[0], "to": step[1], "edition": step[1], "rule": rule_id, "q": word, "text_id": text_id,
            "lineage": lineage or ""}
