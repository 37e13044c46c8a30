"""What a published folder holds, for comparing two runs: every file's bytes, but the database's rows and the
listing without the database's digest. A database grown by a run that added an edition has the rows of a cold
run's, not its bytes (pipeline/publish/grow.py); every other file has the same bytes."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

DATABASE = "crdiff.sqlite"
SEARCHED = "player OR creature OR damage OR mana OR game"


def database_rows(path: Path) -> dict[str, list]:
    """Every table and view of a database with its rows sorted (rowids are not rows), its schema, and what a
    full-text search finds; the search index checked against its texts."""
    con = sqlite3.connect(path)
    try:
        names = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                           "AND name NOT LIKE 'texts_fts%' AND name NOT LIKE 'sqlite_%'")]
        out = {n: sorted(map(repr, con.execute(f'SELECT * FROM "{n}"'))) for n in names}
        out["schema"] = sorted(sql or "" for (sql,) in con.execute("SELECT sql FROM sqlite_master"))
        out["search"] = sorted(con.execute("SELECT t.text_id FROM texts_fts AS f JOIN texts AS t ON t.rowid = f.rowid "
                                           "WHERE texts_fts MATCH ?", (SEARCHED,)))
        con.execute("INSERT INTO texts_fts (texts_fts) VALUES ('integrity-check')")  # raises when out of step
    finally:
        con.close()
    return out


def contents(processed: Path) -> dict[str, object]:
    """Every published file and stage file (the cache apart) by path: its bytes, the database's rows, the
    listing without the database's digest."""
    out: dict[str, object] = {}
    for p in sorted(processed.rglob("*")):
        name = p.relative_to(processed).as_posix()
        if not p.is_file() or ".cache" in p.relative_to(processed).parts:
            continue
        if name == DATABASE:
            out[name] = database_rows(p)
        elif name == "run.json":
            listed = json.loads(p.read_text(encoding="utf-8"))
            listed["files"].pop(DATABASE, None)
            out[name] = listed
        else:
            out[name] = p.read_bytes()
    return out
