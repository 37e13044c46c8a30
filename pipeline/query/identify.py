"""`identify`: date an undated fragment against the editions of a finished run. How a fragment's rules agree
with an edition, and the window that makes, is pipeline/segment/dating.py (the run dates "auto" sources the
same way); here the editions are read from the published crdiff.sqlite, only the rules the fragment names
(pipeline/query/history.py reads it the same way).
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.query.history import query
from pipeline.records import Rule
from pipeline.segment.dating import RANK, SKIPPED, Texts, Window, key, version, window
from pipeline.segment.dating import label  # noqa: F401 (the CLI imports it from here)

def read_processed(processed: Path, fragment: list[Rule]) -> Texts:
    """The versions, in every complete edition of a finished run, of the rules `fragment` names (glossary
    terms: every term, their spelling folded), from crdiff.sqlite through its rule_id index."""
    return query(processed, lambda db: _texts(db, fragment))


def _texts(db: sqlite3.Connection, fragment: list[Rule]) -> Texts:
    complete = [e for (e,) in db.execute("SELECT edition FROM editions WHERE status = 'complete' ORDER BY edition")]
    out: Texts = {e: {} for e in complete}
    ids = sorted({r.rule_id for r in fragment if r.kind not in SKIPPED + ("glossary",)})
    select = ("SELECT r.edition, r.rule_id, r.kind, r.title, t.text, t.examples FROM rules AS r "
              "LEFT JOIN texts AS t ON t.text_id = r.text_id WHERE r.occurrence = 1 AND ")
    queries = [(select + f"r.rule_id IN ({', '.join('?' * len(ids))})", ids)] if ids else []
    if any(r.kind == "glossary" for r in fragment):
        queries.append((select + "r.kind = 'glossary'", []))
    for sql, params in queries:
        for edition, rule_id, kind, title, text, examples in db.execute(sql, params):
            if edition in out and kind not in SKIPPED:
                out[edition][key(rule_id, kind)] = version(text or title or "", json.loads(examples or "[]"))
    return out


@dataclass(frozen=True, slots=True)
class Identified:
    files: tuple[Path, ...]
    read_as: tuple[tuple[str, str], ...]  # per file: what it was read as, and how that was chosen
    window: Window


def identify_files(paths: list[Path], processed: Path, fmt: str | None = None) -> Identified:
    """The window of the editions in `processed` that every rule of these files (one fragment) agrees with."""
    from pipeline.segment import fragment
    read = [fragment.read(path, fmt) for path in paths]
    rules = fragment.rules_of([doc for doc, _, _ in read])
    wanted = [r for r in rules if r.kind not in SKIPPED]
    if not wanted:
        what = "; ".join(f"{doc.source.path.name}: {what} ({how})" for doc, what, how in read)
        raise PipelineError(f"the fragment holds no numbered rule to compare (read as {what})")
    return Identified(tuple(paths), tuple((what, how) for _, what, how in read),
                      window(rules, read_processed(processed, wanted)))


def summary(found: Identified) -> dict:
    """What `identify` reports of one fragment, as data (the --json output; the text is made from it):
    the window, the closest editions (the window, or the editions most rules agree with), those whose
    typography the most rules have, and how each rule agrees with the best of them, or not."""
    w = found.window
    closest, exactly = w.closest, w.exactly
    best = (exactly or closest or (None,))[0]
    return {
        "files": [str(p) for p in found.files], "rules": w.rules,
        "read_as": [{"as": what, "chosen_by": how} for what, how in found.read_as],
        "window": {"first": w.editions[0], "last": w.editions[-1], "editions": list(w.editions)} if w.editions
        else None,
        "closest": list(closest), "agree": w.agreeing(closest[0]) if closest else 0,
        "exactly": {"editions": list(exactly), "rules": w.printed_as(exactly[0]),
                    "others": max(w.printed_as(e) for e in closest if e not in exactly)} if exactly else None,
        "compared_with": best,
        "rules_by_verdict": {v: [rule_id for rule_id, by in w.verdicts.items() if by[best] == v]
                             for v in RANK if best and any(by[best] == v for by in w.verdicts.values())},
        "alone": {rule_id: list(editions) for rule_id, editions in w.misses.items()},
    }


def fragments(paths: list[Path], each: bool) -> list[list[Path]]:
    """The fragments to date: each file of a folder alone (hidden files, sub-folders and a manifest.toml
    left out); the
    files named, together as one fragment, or each alone."""
    from pipeline.ingest.discover import IGNORED
    groups: list[list[Path]] = []
    named: list[Path] = []
    for path in paths:
        if path.is_dir():
            groups += [[p] for p in sorted(path.iterdir())
                       if not p.name.startswith(".") and p.name not in IGNORED and not p.is_dir()]
        else:
            named.append(path)
    if named:
        groups = ([[p] for p in named] if each else [named]) + groups
    if not groups:
        raise PipelineError("no files to identify in " + ", ".join(map(str, paths)))
    return groups
