"""One rule's history, read from processed/crdiff.sqlite by lineage through its indexes (no table
is read whole, and neither pyarrow nor pandas is imported: `history` answers in a fraction of a
second); and records for `compare`, through pipeline/publish/load.py."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

from pipeline import lookup
from pipeline.publish import transaction as publish
from pipeline.align.diff import observed_note, redline, redlines, swaps
from pipeline.errors import PipelineError

COPY_NOTE = "from an unofficial copy"
DATABASE = "crdiff.sqlite"  # pipeline.publish.database.NAME (that module imports numpy)


def history(processed: Path, rule_id: str, edition: str | None = None) -> list[dict]:
    """Every lineage that carried `rule_id` (in `edition`, if given), edition by edition."""
    return query(processed, lambda db: _history(db, processed, rule_id, edition))


def query(processed: Path, read):
    """`read(db)` on the run's crdiff.sqlite, opened read-only; a database that cannot be read is a
    PipelineError saying to run again."""
    db = _open(processed)
    try:
        return read(db)
    except sqlite3.Error as e:
        raise PipelineError(f"{DATABASE} cannot be read ({e}): run `python -m pipeline run` again",
                            path=processed) from None
    finally:
        db.close()


def _open(processed: Path) -> sqlite3.Connection:
    publish.verify(processed, [DATABASE], quick=True)
    try:
        return sqlite3.connect(f"{(processed / DATABASE).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise PipelineError(f"{DATABASE} cannot be read ({e})", path=processed) from None


def _rows(db: sqlite3.Connection, sql: str, params=()) -> list[SimpleNamespace]:
    """Rows in the tables' order (rowid), columns as attributes, an empty field (NULL) as ''."""
    cursor = db.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [SimpleNamespace(**{n: "" if v is None else v for n, v in zip(names, row)}) for row in cursor]


def _marks(values) -> str:
    return ", ".join("?" * len(values))


WITH_TEXT = "rules AS r LEFT JOIN texts AS t ON t.text_id = r.text_id"  # each wording is stored once, in texts


def _history(db: sqlite3.Connection, processed: Path, rule_id: str, edition: str | None) -> list[dict]:
    rule_id, edition, notes = _resolve(db, rule_id, edition)
    found = _rows(db, "SELECT lineage_id FROM rules WHERE rule_id = ? AND kind <> 'commentary'"
                      + (" AND edition = ?" if edition else "") + " ORDER BY rowid",
                  [rule_id] + [edition] * bool(edition))
    lineages = list(dict.fromkeys(r.lineage_id for r in found if r.lineage_id))
    if not lineages:
        _missing(db, rule_id, edition, processed, notes)
    mine = _rows(db, "SELECT r.edition, r.rule_id, r.kind, r.title, r.source, t.text, t.examples, r.line_start, "
                     f"r.line_end, r.lineage_id FROM {WITH_TEXT} WHERE r.lineage_id IN ({_marks(lineages)}) "
                     "ORDER BY r.rowid", lineages)
    for r in mine:
        r.examples = json.loads(r.examples or "[]")
    changes = _rows(db, "SELECT lineage_id, to_edition, change, note, renumbered, new_rule_id FROM changes "
                        f"WHERE lineage_id IN ({_marks(lineages)}) ORDER BY rowid", lineages)
    numbers = sorted({r.rule_id for r in mine})
    moved = _rows(db, "SELECT change, lineage_id, from_edition, old_rule_id, to_edition, new_rule_id FROM changes "
                      "WHERE change IN ('split', 'merged') AND (lineage_id IN ({0}) OR old_rule_id IN ({1}) "
                      "OR new_rule_id IN ({1})) ORDER BY rowid".format(_marks(lineages), _marks(numbers)),
                  lineages + numbers + numbers)  # only the rows _relations can use
    cited = _rows(db, "SELECT rule_id, edition, value, lineage_id FROM citations WHERE cited_by = 'CR' AND "
                      f"lineage_id IN ({_marks(lineages)}) ORDER BY rowid", lineages)
    comments = {}
    for c in cited:
        for r in _rows(db, f"SELECT t.text FROM {WITH_TEXT} WHERE r.edition = ? AND r.rule_id = ? "
                           "AND r.kind = 'commentary' ORDER BY r.rowid", [c.edition, c.rule_id]):
            comments[(c.edition, c.rule_id)] = r.text
    latest = db.execute("SELECT MAX(edition) FROM rules").fetchone()[0]
    seen_in = {(o.edition, o.rule_id): o for o in _rows(
        db, "SELECT edition, rule_id, observes, official_rule_id, agreement, differences FROM observations "
            f"WHERE lineage_id IN ({_marks(lineages)}) ORDER BY rowid", lineages)}
    standing = {e.edition for e in _rows(db, "SELECT edition FROM editions WHERE status = 'fragment'")}
    out = []
    for lineage in lineages:
        versions = sorted((r for r in mine if r.lineage_id == lineage), key=lambda r: r.edition)
        steps, previous = [], None
        for r in versions:
            seen = seen_in.get((r.edition, r.rule_id))
            if seen is not None:  # a copy: evidence about an edition, shown against it, never a step
                steps.append(_observed(r, seen, lineage, cited))
                continue
            step = next((c for c in changes if c.lineage_id == lineage and c.to_edition == r.edition), None)
            change = step.change if step else ("first" if previous is None else "unchanged")
            note = "; ".join(filter(None, [step.note if step else "", COPY_NOTE if r.edition in standing else ""]))
            steps.append({"edition": r.edition, "rule_id": r.rule_id, "kind": r.kind, "title": r.title,
                          "source": r.source, "change": change, "note": note,
                          "renumbered": bool(step and step.renumbered), "text": r.text, "examples": r.examples,
                          "redline": redline(previous.text, r.text) if previous is not None else "",
                          "redlines": redlines(previous, r) if previous is not None else [],
                          "swaps": swaps(previous, r) if previous is not None and change == "cosmetic" else "",
                          "lines": f"{r.line_start}-{r.line_end}",
                          "commentary": sorted({c.rule_id for c in cited if c.lineage_id == lineage})})
            previous = r
        ends = [c for c in changes if c.lineage_id == lineage and c.change in ("removed", "merged")]
        seen, commentary = set(), []
        for c in cited:
            if c.lineage_id == lineage and c.rule_id not in seen:
                seen.add(c.rule_id)
                commentary.append({"rule_id": c.rule_id, "edition": c.edition, "cited": c.value,
                                   "text": comments.get((c.edition, c.rule_id), "")})
        had = [r.edition for r in versions if r.rule_id == rule_id] or [""]
        out.append({"lineage_id": lineage, "versions": steps, "carried": [had[0], had[-1]],
                    "now": versions[-1].rule_id if versions[-1].edition == latest and not ends else "",
                    "query": {"rule": rule_id, "edition": edition or "", "notes": notes, "matched": len(lineages)},
                    "commentary": commentary,
                    "ends": [{"edition": c.to_edition, "change": c.change, "into": c.new_rule_id} for c in ends],
                    "relations": _relations(moved, lineage, versions)})
    return out


def _observed(r, seen, lineage: str, cited: list) -> dict:
    """A copy's record as the history shows it: what it says of the official edition it observes."""
    note = observed_note(vars(seen) | {"rule_id": r.rule_id})
    return {"edition": r.edition, "rule_id": r.rule_id, "kind": r.kind, "title": r.title, "source": r.source,
            "change": "observed", "note": note, "renumbered": False, "text": r.text, "examples": r.examples,
            "redline": "", "redlines": [], "swaps": "", "lines": f"{r.line_start}-{r.line_end}",
            "commentary": sorted({c.rule_id for c in cited if c.lineage_id == lineage})}


def _resolve(db: sqlite3.Connection, rule_id: str, edition: str | None) -> tuple[str, str | None, list[str]]:
    """The number as the datasets spell it, and the edition in force on a date that is not one."""
    notes = []
    wanted = lookup.normalise(rule_id)
    if wanted != rule_id:
        notes.append(f"read {rule_id!r} as {wanted}")
    if not _rows(db, "SELECT 1 FROM rules WHERE rule_id = ? LIMIT 1", [wanted]):  # a glossary term in another case
        same = [r.rule_id for r in _rows(db, "SELECT DISTINCT rule_id FROM rules")
                if r.rule_id.lower() == wanted.lower()]
        wanted = same[0] if len(same) == 1 else wanted
    if edition and not _rows(db, "SELECT 1 FROM rules WHERE edition = ? LIMIT 1", [edition]):
        editions = sorted(r.edition for r in _rows(db, "SELECT DISTINCT edition FROM rules"))
        edition, note = lookup.edition(edition, editions)
        notes.append(note)
    return wanted, edition, notes


def _missing(db: sqlite3.Connection, rule_id: str, edition: str | None, processed: Path, notes: list[str]):
    """No such rule: say what is near, and which editions have it."""
    where = f" in edition {edition}" if edition else ""
    elsewhere = sorted({r.edition for r in _rows(db, "SELECT edition FROM rules WHERE rule_id = ?", [rule_id])})
    if elsewhere:
        hint = f"; it is in {', '.join(elsewhere[:3])}{' …' if len(elsewhere) > 3 else ''}"
    else:
        known = {r.rule_id for r in _rows(db, "SELECT rule_id FROM rules WHERE kind <> 'commentary'")}
        close = lookup.suggestions(rule_id, known)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
    said = f" ({'; '.join(notes)})" if notes else ""
    raise PipelineError(f"no rule {rule_id}{where} in {processed / DATABASE}{hint}{said}")


SPLIT_FROM, SPLIT_OFF, TOOK_IN = "split from", "piece split off into", "took in"  # a relation's "how"


def _relations(moved: list, lineage: str, versions: list) -> list[dict]:
    """Splits and merges this lineage took part in: where it came from, what was cut from it, what it took in."""
    mine = {(r.edition, r.rule_id) for r in versions}
    out = []
    for c in moved:
        if c.change == "split" and c.lineage_id == lineage:
            out.append({"how": SPLIT_FROM, "rule_id": c.old_rule_id, "edition": c.from_edition})
        elif c.change == "split" and (c.from_edition, c.old_rule_id) in mine:
            out.append({"how": SPLIT_OFF, "rule_id": c.new_rule_id, "edition": c.to_edition})
        elif c.change == "merged" and (c.to_edition, c.new_rule_id) in mine:
            out.append({"how": TOOK_IN, "rule_id": c.old_rule_id, "edition": c.from_edition})
    return out


def relations_by_step(lineage: dict) -> dict[int | None, list[dict]]:
    """A lineage's splits and merges by the index of the version where each happened. A piece split
    off names the edition it went to: that step; a rule split from, or taken in, names the edition
    it left: the next step (a copy's observation is no step). None: no step of this lineage is there."""
    steps = [(i, v["edition"]) for i, v in enumerate(lineage["versions"]) if v["change"] != "observed"]
    out: dict[int | None, list[dict]] = {}
    for x in lineage["relations"]:
        at = next((i for i, edition in steps
                   if edition > x["edition"] or (x["how"] == SPLIT_OFF and edition == x["edition"])), None)
        out.setdefault(at, []).append(x)
    return out


def load_rules(processed: Path, edition: str) -> list:
    """The Rule records of one edition."""
    from pipeline.publish import load
    return load.rules(processed, edition).rules
