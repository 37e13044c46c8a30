"""processed/crdiff.sqlite: every table in one SQLite database, for sqlite3, Datasette or DuckDB.

The tables as the CSV holds them: each distinct wording (text, examples, sentences) once, in
`texts`, named by `text_id` in `rules`; the view `rules_text` puts it back (the Parquet twin's
columns), and `glossary` is a view of the rules of kind glossary. Keys as in pipeline/schema.py
(primary and foreign), indexes on the columns people filter by, full-text search over the texts
(FTS5, external content: the index stores no second copy, and indexes each distinct text once), a
view `changes_text` that puts the old and new titles and texts beside each change, and a view
`rule_sentences` that spells out the sentences stored as offsets. Lists are JSON text (SQLite's
JSON functions read them), booleans 0/1, dates ISO text; an empty field is NULL, as in the CSV.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np

from pipeline import schema
from pipeline.schema import BY_NAME, TABLES, WORDING, Table
from pipeline.store import _naming

NAME = "crdiff.sqlite"
SQL_TYPE = {"string": "TEXT", "date": "TEXT", "integer": "INTEGER", "number": "REAL", "boolean": "INTEGER",
            "array": "TEXT", "object": "TEXT"}
FILTERED = ("edition", "rule_id", "lineage_id", "from_edition", "to_edition", "old_rule_id", "new_rule_id", "text_id")
SEARCH = """CREATE VIRTUAL TABLE texts_search USING fts5(text, content='texts', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2')"""
CHANGES_TEXT = """CREATE VIEW changes_text AS
SELECT c.*, o.title AS old_title, o.text AS old_text, n.title AS new_title, n.text AS new_text
FROM changes AS c
LEFT JOIN rules_text AS o ON o.edition = c.from_edition AND o.rule_id = c.old_rule_id AND o.occurrence = 1
    AND o.kind <> 'commentary'
LEFT JOIN rules_text AS n ON n.edition = c.to_edition AND n.rule_id = c.new_rule_id AND n.occurrence = 1
    AND n.kind <> 'commentary'"""
# Sentences are stored as [start, end] offsets into the text (the title when there is none): this
# view spells them out. substr counts characters from 1, as Python's slices count them from 0.
RULE_SENTENCES = """CREATE VIEW rule_sentences AS
SELECT r.edition, r.kind, r.rule_id, r.occurrence, s.key + 1 AS n,
    CASE WHEN s.type = 'text' THEN s.value ELSE substr(coalesce(r.text, r.title, ''),
        json_extract(s.value, '$[0]') + 1, json_extract(s.value, '$[1]') - json_extract(s.value, '$[0]')) END AS sentence
FROM rules_text AS r, json_each(r.sentences) AS s"""


RULES_TEXT = "CREATE VIEW rules_text AS SELECT {}\nFROM rules AS r LEFT JOIN texts AS t ON t.text_id = r.text_id"
# The glossary is the rules of kind glossary under other names: a view, not a second copy
GLOSSARY = """CREATE VIEW glossary AS
SELECT r.edition, r.title AS term, r.occurrence, t.text AS definition, t.examples, r."references", r.lineage_id,
    r.source, r.line_start, r.line_end
FROM rules AS r LEFT JOIN texts AS t ON t.text_id = r.text_id WHERE r.kind = 'glossary'"""
VIEWS = {"glossary"}  # tables of the CSV that the database gives as views


def rules_text() -> str:
    """The view `rules_text`: the rules with their wording in place, the Parquet twin's columns."""
    moved = WORDING["rules"]
    return RULES_TEXT.format(", ".join(f't."{c}"' if c in moved else f'r."{c}"' for c in BY_NAME["rules"].names))


for _numpy, _python in ((np.int64, int), (np.float64, float), (np.bool_, bool)):
    sqlite3.register_adapter(_numpy, _python)


def create_sql(table: Table) -> str:
    columns = [f'"{c.name}" {SQL_TYPE[c.type]}' for c in table.columns]
    if table.primary_key:
        columns.append("PRIMARY KEY (" + ", ".join(f'"{k}"' for k in table.primary_key) + ")")
    for fields, target, target_fields in table.foreign_keys:
        columns.append(f"FOREIGN KEY ({', '.join(fields)}) REFERENCES {target} ({', '.join(target_fields)})")
    return f'CREATE TABLE "{table.name}" (\n  ' + ",\n  ".join(columns) + "\n)"


class Database:
    """Built in a temporary file beside its final name, one table chunk at a time; `close` adds the
    indexes, search tables and view, and renames it into place."""

    def __init__(self, folder: Path):
        self.path = folder / NAME
        self.tmp = folder / f".{NAME}.tmp"
        self.tmp.unlink(missing_ok=True)
        self.con = sqlite3.connect(self.tmp, isolation_level=None)
        self.con.execute("PRAGMA journal_mode = OFF")  # a failed build is thrown away whole
        self.con.execute("PRAGMA synchronous = OFF")
        self.con.execute("BEGIN")
        self.created: set[str] = set()

    def add(self, name: str, flat) -> None:
        """Rows of a table, flattened as for the CSV (lists as JSON text)."""
        if name in VIEWS:
            return
        table = schema.flat(BY_NAME[name])
        if name not in self.created:
            self.con.execute(create_sql(table))
            self.created.add(name)
        columns = [[None if v == "" else v for v in flat[c].tolist()] for c in flat.columns]  # "" is NULL
        marks = ", ".join("?" * len(table.columns))
        self.con.executemany(f'INSERT INTO "{name}" VALUES ({marks})', zip(*columns))

    def close(self) -> None:
        with _naming(self.path):
            for table in (schema.flat(t) for t in TABLES if t.name not in VIEWS):
                if table.name not in self.created:
                    self.con.execute(create_sql(table))
                for column in (c for c in FILTERED if c in table.names):
                    if table.primary_key[:1] != (column,):  # the key's own index serves its first column
                        self.con.execute(f'CREATE INDEX "{table.name}_{column}" ON "{table.name}" ("{column}")')
            self.con.execute(SEARCH)
            self.con.execute("INSERT INTO texts_search (rowid, text) SELECT rowid, text FROM texts")
            self.con.execute(rules_text())
            self.con.execute(GLOSSARY)
            self.con.execute(CHANGES_TEXT)
            self.con.execute(RULE_SENTENCES)
            self.con.execute("COMMIT")
            self.con.execute("VACUUM")
            self.con.close()
            os.chmod(self.tmp, 0o644)
            os.replace(self.tmp, self.path)

    def abandon(self) -> None:
        self.con.close()
        self.tmp.unlink(missing_ok=True)
