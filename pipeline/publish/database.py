"""processed/crdiff.sqlite: every table in one SQLite database, for sqlite3, Datasette or DuckDB.

The tables as the CSV holds them: each distinct wording (text, examples, sentences) once, in
`texts`, named by `text_id` in `rules`; `glossary` is a view of the rules of kind glossary. The
database's own columns (pipeline/schema.py DATABASE_ONLY): `changes.old_text_id` and `new_text_id`,
the wording of the rules each change names, filled in here. Keys as in pipeline/schema.py (primary
and foreign: Datasette shows a key into `texts` as its text), indexes on the columns people filter
by, full-text search over the texts (FTS5 `texts_fts`, external content: the index stores no second
copy, and indexes each distinct text once; declared `content="texts"`, as Datasette finds it).

No view joins whole tables: Datasette counts a view's rows and pages through it, so a view putting
the texts beside 300,000 rules or changes took seconds a page. The joins live in the canned queries
(pipeline/publish/browse.py), which pick their few rows by index first. Two views do rebuild rows,
and say so in their names: `changes_unchanged`, the plain unchanged rows `changes` leaves out
(pipeline/publish/unchanged.py), and `changes_all`, `changes` with them (the table as it was).
`references` is a view too: each rule's `references` list, one row per target, the target's kind
found by index (it was a second copy of those lists, with a key of its own: 17 of the 108 MB of 110
simulated editions; the view counts its 161,000 rows in under a second).
Lists are JSON text (SQLite's JSON functions read them), booleans 0/1, dates ISO text; an empty
field is NULL, as in the CSV. The same tables give the same bytes: rows in the CSV's order, no
timestamps.
"""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np

from pipeline.schema import BY_NAME, TABLES, Table, in_database
from pipeline.atomic import into_place, naming, temporary

NAME = "crdiff.sqlite"
SQL_TYPE = {"string": "TEXT", "edition": "TEXT", "date": "TEXT", "integer": "INTEGER", "number": "REAL",
            "boolean": "INTEGER", "array": "TEXT", "object": "TEXT"}
FILTERED = ("edition", "rule_id", "lineage_id", "from_edition", "to_edition", "old_rule_id", "new_rule_id", "text_id")
# A rule's lineage index also orders by edition: a version's previous one is one seek (the view
# changes_unchanged, one step of it in 0.03 s on 110 editions instead of 2 s; 3.5 MB)
ALSO = {("rules", "lineage_id"): ("edition",),
        # and a number's: a rule of an edition by its number is one seek (the view `references` finds each
        # target's kind so, and the wordings of the rules a change names are found so)
        ("rules", "rule_id"): ("edition",)}
SEARCH = """CREATE VIRTUAL TABLE texts_fts USING fts5(text, content="texts", content_rowid="rowid",
    tokenize="porter unicode61 remove_diacritics 2")"""
# The wording of the rules a change names (the first printing of the number, never a commentary
# note), looked up through the index on (rule_id, edition).
CHANGE_TEXTS = """UPDATE changes SET
    old_text_id = (SELECT r.text_id FROM rules AS r WHERE r.edition = changes.from_edition
        AND r.rule_id = changes.old_rule_id AND r.occurrence = 1 AND r.kind <> 'commentary'),
    new_text_id = (SELECT r.text_id FROM rules AS r WHERE r.edition = changes.to_edition
        AND r.rule_id = changes.new_rule_id AND r.occurrence = 1 AND r.kind <> 'commentary')"""
# The glossary is the rules of kind glossary under other names: a view, not a second copy
GLOSSARY = """CREATE VIEW glossary AS
SELECT r.edition, r.title AS term, r.occurrence, t.text AS definition, t.examples, r."references", r.lineage_id,
    r.source, r.line_start, r.line_end
FROM rules AS r LEFT JOIN texts AS t ON t.text_id = r.text_id WHERE r.kind = 'glossary'"""
# A rule's references, one row per target, as the CSV's `references` (pipeline/publish/export.py
# reference_rows: in the rules' order, each list in its order; a target exists when its edition has a rule
# of that number, not a glossary entry nor a commentary note, the first one giving its kind)
REFERENCES = """CREATE VIEW "references" AS
SELECT r.edition, r.rule_id, r.kind, r.occurrence, j.value AS target, t.kind IS NOT NULL AS target_exists,
    t.kind AS target_kind
FROM rules AS r JOIN json_each(r."references") AS j
    LEFT JOIN rules AS t ON t.rowid = (SELECT q.rowid FROM rules AS q WHERE q.rule_id = j.value
        AND q.edition = r.edition AND q.kind NOT IN ('glossary', 'commentary') ORDER BY q.rowid LIMIT 1)
WHERE r."references" <> '[]'"""
VIEWS = {"glossary", "references"}  # tables of the CSV that the database gives as views
# tables a grown database keeps the earlier editions' rows of (publish/grow.py), with the column whose edition
# orders their rows (also in the grown CSV and Parquet files; `edition` for the others)
GROWN = {"rules": "edition", "changes": "to_edition"}
# The rows `changes` leaves out (pipeline/publish/unchanged.py: a rule that goes on word for word under
# the same number), rebuilt as `unchanged.continuations` does: each rule after the previous record of its
# lineage (copies make no step), when no row of `changes` reaches it. Columns as in `changes`; a step
# (WHERE to_edition = ...) is read by index.
UNCHANGED = """CREATE VIEW changes_unchanged AS
SELECT p.edition AS from_edition, v.edition AS to_edition, v.lineage_id, p.rule_id AS old_rule_id,
    v.rule_id AS new_rule_id, v.kind, 'unchanged' AS change, 0 AS renumbered, 100.0 AS similarity, 100.0 AS score,
    0 AS review, 'same' AS method, '[]' AS ops, '[]' AS title_ops,
    '[' || rtrim(replace(hex(zeroblob(coalesce(json_array_length(t.examples), 0))), '00', '[],'), ',') || ']'
        AS example_ops,
    '[]' AS substitutions, NULL AS note,
    CASE WHEN p.occurrence = 1 THEN p.text_id ELSE (SELECT r.text_id FROM rules AS r WHERE r.edition = p.edition
        AND r.rule_id = p.rule_id AND r.occurrence = 1 AND r.kind <> 'commentary') END AS old_text_id,
    CASE WHEN v.occurrence = 1 THEN v.text_id ELSE (SELECT r.text_id FROM rules AS r WHERE r.edition = v.edition
        AND r.rule_id = v.rule_id AND r.occurrence = 1 AND r.kind <> 'commentary') END AS new_text_id
FROM rules AS v JOIN editions AS e ON e.edition = v.edition
    JOIN rules AS p ON p.rowid = (SELECT q.rowid FROM rules AS q JOIN editions AS qe ON qe.edition = q.edition
        WHERE q.lineage_id = v.lineage_id AND q.edition < v.edition AND q.kind <> 'commentary'
        AND qe.status <> 'copy' ORDER BY q.edition DESC LIMIT 1)
    LEFT JOIN texts AS t ON t.text_id = v.text_id
WHERE v.kind <> 'commentary' AND v.lineage_id IS NOT NULL AND e.status <> 'copy'
    AND NOT EXISTS (SELECT 1 FROM changes AS c WHERE c.lineage_id = v.lineage_id AND +c.to_edition = v.edition)"""
# (p: the version's previous record in its lineage, an index seek. example_ops: one empty list per
# example, "[[],[]]", written out with zeroblob's n zero bytes. The unary + keeps SQLite on the
# lineage index: without statistics it took the edition's, 100x slower. The wordings: the rule's
# own when it is the number's first printing, as the columns of `changes` say.)
# Every change, the left-out rows included: the change table as it was before it left them out
ALL_CHANGES = "CREATE VIEW changes_all AS SELECT * FROM changes UNION ALL SELECT * FROM changes_unchanged"


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
    """Built in a temporary file beside its final name, one table chunk at a time; `close` fills in
    the database's own columns, adds the indexes, the search table and the view, and renames it
    into place."""

    def __init__(self, folder: Path, base: Path | None = None):
        """With `base` (the published database), a copy of it to grow (`keep_before`), never the file itself."""
        self.path = folder / NAME
        self.tmp = temporary(self.path)
        self.grown = base is not None
        if base is not None:
            with naming(self.path):
                shutil.copyfile(base, self.tmp)
        self.con = sqlite3.connect(self.tmp, isolation_level=None)
        self.con.execute("PRAGMA journal_mode = OFF")  # a failed build is thrown away whole
        self.con.execute("PRAGMA synchronous = OFF")
        self.con.execute("BEGIN")
        self.created: set[str] = set()
        self.kept_changes = 0  # the rowid of the last change kept from `base`: the wordings of the later ones are found
        if self.grown:
            self.created = {t.name for t in TABLES if t.name not in VIEWS}

    def keep_before(self, edition: str) -> None:
        """Of a grown database, keep the rows of the grown tables' editions before `edition` and no row of
        the other tables (written whole again)."""
        for table in (t.name for t in TABLES if t.name not in VIEWS and t.name != "texts"):
            if table in GROWN:
                self.con.execute(f'DELETE FROM "{table}" WHERE "{GROWN[table]}" >= ?', (edition,))
            else:
                self.con.execute(f'DELETE FROM "{table}"')
        self.kept_changes = self.con.execute("SELECT coalesce(max(rowid), 0) FROM changes").fetchone()[0]

    def definitions(self) -> dict[tuple[str, str], str]:
        """(text, examples) -> the text_id of the first rule (in the table's order) with them, over the rules
        kept: what `export.Texts` knows of them once it has seen those rules."""
        found: dict[tuple[str, str], list[str]] = {}
        for text_id, text, examples in self.con.execute(
                "SELECT text_id, text, examples FROM texts AS t WHERE EXISTS "
                "(SELECT 1 FROM rules AS r WHERE r.text_id = t.text_id)"):
            found.setdefault((text or "", examples or "[]"), []).append(text_id)
        out = {}
        for wording, ids in found.items():
            if len(ids) > 1:  # the same text and examples cut into other sentences: the first rule's
                marks = ", ".join("?" * len(ids))
                ids = [self.con.execute(f"SELECT text_id FROM rules WHERE text_id IN ({marks}) ORDER BY rowid "
                                        "LIMIT 1", ids).fetchone()[0]]
            out[wording] = ids[0]
        return out

    def texts(self, texts) -> list[dict]:
        """Of a grown database: the wordings of `texts` (an `export.Texts` of the rules written again) added,
        those no rule names any more removed, the search index kept in step; the texts table's rows."""
        before = self.con.execute("SELECT coalesce(max(rowid), 0) FROM texts").fetchone()[0]
        self.con.executemany("INSERT OR IGNORE INTO texts (text_id, text, examples, sentences) VALUES (?, ?, ?, ?)",
                             ((k, *(None if v == "" else v for v in w)) for k, w in sorted(texts.wording.items())))
        self.con.execute("INSERT INTO texts_fts (rowid, text) SELECT rowid, text FROM texts WHERE rowid > ?", (before,))
        unused = self.con.execute("SELECT rowid, text FROM texts AS t WHERE NOT EXISTS "
                                  "(SELECT 1 FROM rules AS r WHERE r.text_id = t.text_id)").fetchall()
        self.con.executemany("INSERT INTO texts_fts (texts_fts, rowid, text) VALUES ('delete', ?, ?)", unused)
        self.con.executemany("DELETE FROM texts WHERE rowid = ?", [(rowid,) for rowid, _ in unused])
        return [{"text_id": k, "text": text or "", "examples": json.loads(examples), "sentences": json.loads(sentences)}
                for k, text, examples, sentences in self.con.execute(
                    "SELECT text_id, text, examples, sentences FROM texts ORDER BY text_id")]

    def add(self, name: str, flat) -> None:
        """Rows of a table, flattened as for the CSV (lists as JSON text); the database's own
        columns are filled in by `close`."""
        if name in VIEWS:
            return
        if name not in self.created:
            self.con.execute(create_sql(in_database(BY_NAME[name])))
            self.created.add(name)
        columns = [[None if v == "" else v for v in flat[c].tolist()] for c in flat.columns]  # "" is NULL
        names = ", ".join(f'"{c}"' for c in flat.columns)
        marks = ", ".join("?" * len(flat.columns))
        self.con.executemany(f'INSERT INTO "{name}" ({names}) VALUES ({marks})', zip(*columns))

    def close(self) -> None:
        """Fill in the wording each change names and publish; a database built whole also gets its empty
        tables, indexes, search table and views (a grown one has them: its new rows' wordings only)."""
        whole = not self.grown
        with naming(self.path):
            if whole:
                for table in (in_database(t) for t in TABLES if t.name not in VIEWS):
                    if table.name not in self.created:
                        self.con.execute(create_sql(table))
            if whole:
                self._indexes_search_views()
            self.con.execute(CHANGE_TEXTS + " WHERE rowid > ?", (self.kept_changes,))
            self.con.execute("COMMIT")
            if whole:
                self.con.execute("VACUUM")
            self.con.close()
            into_place(self.tmp, self.path, mode=0o644)

    def _indexes_search_views(self) -> None:
        for table in (in_database(t) for t in TABLES if t.name not in VIEWS):
            for column in (c for c in FILTERED if c in table.names):
                if table.primary_key[:1] != (column,):  # the key's own index serves its first column
                    columns = ", ".join(f'"{c}"' for c in (column, *ALSO.get((table.name, column), ())))
                    self.con.execute(f'CREATE INDEX "{table.name}_{column}" ON "{table.name}" ({columns})')
        self.con.execute(SEARCH)
        self.con.execute("INSERT INTO texts_fts (rowid, text) SELECT rowid, text FROM texts")
        self.con.execute(GLOSSARY)
        self.con.execute(REFERENCES)
        self.con.execute(UNCHANGED)
        self.con.execute(ALL_CHANGES)

    def abandon(self) -> None:
        self.con.close()
        self.tmp.unlink(missing_ok=True)
