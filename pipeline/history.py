"""Reading the datasets back (through pipeline/load.py, as records): one rule's history, and
records for `compare`."""
from __future__ import annotations

from pathlib import Path

from pipeline import load
from pipeline.diff import redline
from pipeline.errors import PipelineError
from pipeline.records import Rule, RuleChange, rule_key


def history(processed: Path, rule_id: str, edition: str | None = None) -> list[dict]:
    """Every lineage that carried `rule_id` (in `edition`, if given), edition by edition."""
    found = load.rules(processed, edition, filters=[("rule_id", "=", rule_id), ("kind", "!=", "commentary")])
    lineages = list(dict.fromkeys(found.lineage[rule_key(r)] for r in found.rules if rule_key(r) in found.lineage))
    if not lineages:
        where = f" in edition {edition}" if edition else ""
        raise PipelineError(f"no rule {rule_id}{where} in {processed / 'rules.parquet'}")
    mine = load.rules(processed, filters=[("lineage_id", "in", lineages)])
    changes = load.changes(processed, filters=[("lineage_id", "in", lineages)])
    moved = load.changes(processed, filters=[("change", "in", ["split", "merged"])])
    cited = {(c["lineage_id"], c["rule_id"]) for c in load.rows(processed, "citations",
                                                                 filters=[("lineage_id", "in", lineages)])
             if c["cited_by"] == "CR"}
    out = []
    for lineage in lineages:
        versions = sorted((r for r in mine.rules if mine.lineage.get(rule_key(r)) == lineage), key=lambda r: r.edition)
        steps, previous = [], None
        for r in versions:
            step = next((c for c in changes if c.lineage_id == lineage and c.to_edition == r.edition), None)
            change = step.change if step else ("first" if previous is None else "unchanged")
            steps.append({"edition": r.edition, "rule_id": r.rule_id, "source": r.source,
                          "change": change, "note": step.note if step else "", "renumbered": bool(step and step.renumbered),
                          "text": r.text, "redline": redline(previous.text, r.text) if previous is not None else "",
                          "lines": f"{r.line_start}-{r.line_end}",
                          "commentary": sorted(rid for lid, rid in cited if lid == lineage)})
            previous = r
        ends = [c for c in changes if c.lineage_id == lineage and c.change in ("removed", "merged")]
        out.append({"lineage_id": lineage, "versions": steps,
                    "ends": [{"edition": c.to_edition, "change": c.change, "into": c.new_rule_id} for c in ends],
                    "relations": _relations(moved, lineage, versions)})
    return out


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
