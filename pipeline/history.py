"""Reading the datasets back (through pipeline/load.py, as records): one rule's history, and
records for `compare`."""
from __future__ import annotations

from pathlib import Path

from pipeline import load, lookup
from pipeline.diff import redline
from pipeline.errors import PipelineError
from pipeline.records import Rule, RuleChange, rule_key


def history(processed: Path, rule_id: str, edition: str | None = None) -> list[dict]:
    """Every lineage that carried `rule_id` (in `edition`, if given), edition by edition."""
    index = load.columns(load.read(processed, "rules", columns=["edition", "rule_id", "kind"]))
    rule_id, edition, notes = _resolve(index, rule_id, edition)
    found = load.rules(processed, edition, filters=[("rule_id", "=", rule_id), ("kind", "!=", "commentary")])
    lineages = list(dict.fromkeys(found.lineage[rule_key(r)] for r in found.rules if rule_key(r) in found.lineage))
    if not lineages:
        _missing(index, rule_id, edition, processed, notes)
    mine = load.rules(processed, filters=[("lineage_id", "in", lineages)])
    changes = load.changes(processed, filters=[("lineage_id", "in", lineages)])
    moved = load.changes(processed, filters=[("change", "in", ["split", "merged"])])
    cited = load.rows(processed, "citations", filters=[("lineage_id", "in", lineages)])
    cited = [c for c in cited if c["cited_by"] == "CR"]
    notes_of = load.rules(processed, filters=[("kind", "=", "commentary")]).rules
    comments = {(r.edition, r.rule_id): r.text for r in notes_of}
    out = []
    for lineage in lineages:
        versions = sorted((r for r in mine.rules if mine.lineage.get(rule_key(r)) == lineage), key=lambda r: r.edition)
        steps, previous = [], None
        for r in versions:
            step = next((c for c in changes if c.lineage_id == lineage and c.to_edition == r.edition), None)
            change = step.change if step else ("first" if previous is None else "unchanged")
            steps.append({"edition": r.edition, "rule_id": r.rule_id, "kind": r.kind, "title": r.title,
                          "source": r.source, "change": change, "note": step.note if step else "",
                          "renumbered": bool(step and step.renumbered), "text": r.text,
                          "redline": redline(previous.text, r.text) if previous is not None else "",
                          "lines": f"{r.line_start}-{r.line_end}",
                          "commentary": sorted({c["rule_id"] for c in cited if c["lineage_id"] == lineage})})
            previous = r
        ends = [c for c in changes if c.lineage_id == lineage and c.change in ("removed", "merged")]
        seen, commentary = set(), []
        for c in cited:
            if c["lineage_id"] == lineage and c["rule_id"] not in seen:
                seen.add(c["rule_id"])
                commentary.append({"rule_id": c["rule_id"], "edition": c["edition"], "cited": c["value"],
                                   "text": comments.get((c["edition"], c["rule_id"]), "")})
        out.append({"lineage_id": lineage, "versions": steps,
                    "query": {"rule": rule_id, "edition": edition or "", "notes": notes, "matched": len(lineages)},
                    "commentary": commentary,
                    "ends": [{"edition": c.to_edition, "change": c.change, "into": c.new_rule_id} for c in ends],
                    "relations": _relations(moved, lineage, versions)})
    return out


def _resolve(index: dict[str, list], rule_id: str, edition: str | None) -> tuple[str, str | None, list[str]]:
    """The number as the datasets spell it, and the edition in force on a date that is not one."""
    notes = []
    wanted = lookup.normalise(rule_id)
    if wanted != rule_id:
        notes.append(f"read {rule_id!r} as {wanted}")
    numbers = set(index["rule_id"])
    if wanted not in numbers:  # a glossary term typed in another case
        same = [r for r in numbers if r.lower() == wanted.lower()]
        wanted = same[0] if len(same) == 1 else wanted
    editions = sorted(set(index["edition"]))
    if edition and edition not in editions:
        resolved = lookup.in_force(edition, editions)
        notes.append(f"{edition} is not an edition: {resolved} is the edition in force on that date")
        edition = resolved
    return wanted, edition, notes


def _missing(index: dict[str, list], rule_id: str, edition: str | None, processed: Path, notes: list[str]):
    """No such rule: say what is near, and which editions have it."""
    where = f" in edition {edition}" if edition else ""
    elsewhere = sorted({e for e, r in zip(index["edition"], index["rule_id"]) if r == rule_id})
    if elsewhere:
        hint = f"; it is in {', '.join(elsewhere[:3])}{' …' if len(elsewhere) > 3 else ''}"
    else:
        known = {r for r, k in zip(index["rule_id"], index["kind"]) if k != "commentary"}
        close = lookup.suggestions(rule_id, known)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
    said = f" ({'; '.join(notes)})" if notes else ""
    raise PipelineError(f"no rule {rule_id}{where} in {processed / 'rules.parquet'}{hint}{said}")


def _relations(moved: list[RuleChange], lineage: str, versions: list[Rule]) -> list[dict]:
    """Splits and merges this lineage took part in: where it came from, what was cut from it, what it took in."""
    mine = {(r.edition, r.rule_id) for r in versions}
    out = []
    for c in moved:
        if c.change == "split" and c.lineage_id == lineage:
            out.append({"how": "split from", "rule_id": c.old_rule_id, "edition": c.from_edition})
        elif c.change == "split" and (c.from_edition, c.old_rule_id) in mine:
            out.append({"how": "piece split off into", "rule_id": c.new_rule_id, "edition": c.to_edition})
        elif c.change == "merged" and (c.to_edition, c.new_rule_id) in mine:
            out.append({"how": "took in", "rule_id": c.old_rule_id, "edition": c.from_edition})
    return out


def load_rules(processed: Path, edition: str) -> list[Rule]:
    """The Rule records of one edition."""
    return load.rules(processed, edition).rules
