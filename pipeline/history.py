"""Reading the datasets back: one rule's history, and records for `compare`."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline import lookup, publish
from pipeline.diff import redline
from pipeline.errors import PipelineError
from pipeline.records import Citation, Rule

LIST_FIELDS = ("examples", "sentences", "references", "flags", "variants")


def _read(processed: Path, name: str) -> pd.DataFrame:
    path = processed / name
    if not path.exists():
        raise PipelineError(f"{name} is missing: run `python -m pipeline run` first", path=processed)
    return pd.read_csv(path, keep_default_na=False, dtype=str)


def history(processed: Path, rule_id: str, edition: str | None = None) -> list[dict]:
    """Every lineage that carried `rule_id` (in `edition`, if given), edition by edition."""
    rules = _read(processed, "rules.csv")
    changes = _read(processed, "changes.csv")
    publish.verify(processed, ["rules.csv", "changes.csv", "citations.csv"])  # never mix two runs' tables
    rule_id, edition, notes = _resolve(rules, rule_id, edition)
    hits = rules[(rules.rule_id == rule_id) & (rules.kind != "commentary")]
    if edition:
        hits = hits[hits.edition == edition]
    if hits.empty:
        _missing(rules, rule_id, edition, processed, notes)
    citations = _read(processed, "citations.csv")
    notes_of = rules[rules.kind == "commentary"]
    comments = dict(zip(zip(notes_of.edition, notes_of.rule_id), notes_of.text))
    out = []
    for lineage in dict.fromkeys(hits.lineage_id):
        versions = rules[rules.lineage_id == lineage].sort_values("edition")
        steps, previous = [], None
        for _, row in versions.iterrows():
            step = changes[(changes.lineage_id == lineage) & (changes.to_edition == row.edition)]
            change = step.change.iloc[0] if len(step) else ("first" if previous is None else "unchanged")
            old_text = previous.text if previous is not None else ""
            steps.append({"edition": row.edition, "rule_id": row.rule_id, "kind": row.kind, "title": row.title,
                          "source": row.source,
                          "change": change, "note": step.note.iloc[0] if len(step) else "", "renumbered": bool(len(step)) and step.renumbered.iloc[0] == "True",
                          "text": row.text, "redline": redline(old_text, row.text) if previous is not None else "",
                          "lines": f"{row.line_start}-{row.line_end}",
                          "commentary": sorted(set(citations[(citations.lineage_id == lineage) &
                                                             (citations.cited_by == "CR")].rule_id))})
            previous = row
        ends = changes[(changes.lineage_id == lineage) & changes.change.isin(["removed", "merged"])]
        cited = citations[(citations.lineage_id == lineage) & (citations.cited_by == "CR")]
        out.append({"lineage_id": lineage, "versions": steps, "query": {"rule": rule_id, "edition": edition or "",
                                                                       "notes": notes, "matched": hits.lineage_id.nunique()},
                    "commentary": [{"rule_id": c.rule_id, "edition": c.edition, "cited": c.value,
                                    "text": comments.get((c.edition, c.rule_id), "")}
                                   for c in cited.drop_duplicates("rule_id").itertuples()],
                    "ends": [{"edition": r.to_edition, "change": r.change, "into": r.new_rule_id}
                             for _, r in ends.iterrows()],
                    "relations": _relations(changes, lineage, versions)})
    return out


def _resolve(rules: pd.DataFrame, rule_id: str, edition: str | None) -> tuple[str, str | None, list[str]]:
    """The number as the datasets spell it, and the edition in force on a date that is not one."""
    notes = []
    wanted = lookup.normalise(rule_id)
    if wanted != rule_id:
        notes.append(f"read {rule_id!r} as {wanted}")
    if wanted not in set(rules.rule_id):  # a glossary term typed in another case
        same = [r for r in set(rules.rule_id) if r.lower() == wanted.lower()]
        wanted = same[0] if len(same) == 1 else wanted
    editions = sorted(set(rules.edition))
    if edition and edition not in editions:
        resolved = lookup.in_force(edition, editions)
        notes.append(f"{edition} is not an edition: {resolved} is the edition in force on that date")
        edition = resolved
    return wanted, edition, notes


def _missing(rules: pd.DataFrame, rule_id: str, edition: str | None, processed: Path, notes: list[str]):
    """No such rule: say what is near, and which editions have it."""
    where = f" in edition {edition}" if edition else ""
    elsewhere = sorted(set(rules[rules.rule_id == rule_id].edition))
    if elsewhere:
        hint = f"; it is in {', '.join(elsewhere[:3])}{' …' if len(elsewhere) > 3 else ''}"
    else:
        close = lookup.suggestions(rule_id, set(rules[rules.kind != "commentary"].rule_id))
        hint = f"; did you mean {', '.join(close)}?" if close else ""
    said = f" ({'; '.join(notes)})" if notes else ""
    raise PipelineError(f"no rule {rule_id}{where} in {processed / 'rules.csv'}{hint}{said}")


def _relations(changes: pd.DataFrame, lineage: str, versions: pd.DataFrame) -> list[dict]:
    """Splits and merges this lineage took part in: where it came from, what was cut from it, what it took in."""
    mine = set(zip(versions.edition, versions.rule_id))
    moved = changes[changes.change.isin(["split", "merged"])]
    out = []
    for _, c in moved.iterrows():
        if c.change == "split" and c.lineage_id == lineage:
            out.append({"how": "split from", "rule_id": c.old_rule_id, "edition": c.from_edition})
        elif c.change == "split" and (c.from_edition, c.old_rule_id) in mine:
            out.append({"how": "piece split off into", "rule_id": c.new_rule_id, "edition": c.to_edition})
        elif c.change == "merged" and (c.to_edition, c.new_rule_id) in mine:
            out.append({"how": "took in", "rule_id": c.old_rule_id, "edition": c.from_edition})
    return out


def load_rules(processed: Path, edition: str) -> list[Rule]:
    """The Rule records of one edition, read back from rules.jsonl."""
    path = processed / "rules.jsonl"
    if not path.exists():
        raise PipelineError("rules.jsonl is missing: run `python -m pipeline run` first", path=processed)
    publish.verify(processed, ["rules.jsonl"])
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["edition"] != edition:
                continue
            fields = {k: row[k] for k in ("edition", "source", "rule_id", "kind", "parent", "title", "text",
                                          "compare", "line_start", "line_end", "occurrence")}
            fields.update({k: tuple(row[k]) for k in LIST_FIELDS})
            fields["citations"] = tuple(Citation(**c) for c in row["citations"])
            out.append(Rule(**fields))
    return out
