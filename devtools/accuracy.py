"""How right the history is: hand-checked cases (read from the texts, never from the pipeline's
output) against what alignment and lineage say, with precision and recall per relation.

A case names two editions, an old and/or a new rule number (or glossary term) and the relation
a reader of both texts finds: same (one lineage), split (the new rule is a piece of the old),
merged (the old rule ended inside the new), renamed (a glossary term), added, removed,
unrelated. "same|split" accepts either (which piece keeps the lineage is a judgement); the first
one is the case's class in the table.
"""
from __future__ import annotations

import csv
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.ingest.discover import ingest
from pipeline.align.lineage import build, rule_key
from pipeline.patterns import PART_DIGIT, RULE_NUMBER
from pipeline.segment import read

RELATIONS = ("same", "split", "merged", "renamed", "added", "removed", "unrelated")
COLUMNS = ("from_edition", "to_edition", "old", "new", "expected", "evidence")


@dataclass(frozen=True, slots=True)
class Case:
    line: int
    from_edition: str
    to_edition: str
    old: str
    new: str
    expected: tuple[str, ...]
    evidence: str


@dataclass(frozen=True, slots=True)
class Verdict:
    case: Case
    found: str

    @property
    def right(self) -> bool:
        return self.found in self.case.expected


def read_cases(path: Path) -> list[Case]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise PipelineError(f"cannot read the cases: {e}", path=path) from e
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise PipelineError(f"line 1: the columns must be {', '.join(COLUMNS)}", path=path)
    cases = []
    for n, row in enumerate(rows, start=2):
        if None in row or None in row.values():
            raise PipelineError(f"line {n}: {len(COLUMNS)} fields expected", path=path)
        expected = tuple(row["expected"].split("|"))
        bad = [e for e in expected if e not in RELATIONS]
        if bad or not (row["old"] or row["new"]):
            raise PipelineError(f"line {n}: expected one of {', '.join(RELATIONS)} and an old or new rule, "
                                f"got {row['expected']!r}", path=path)
        cases.append(Case(n, row["from_edition"], row["to_edition"], row["old"], row["new"], expected,
                          row["evidence"]))
    return cases


def judge(cases: list[Case], corpus: Path) -> list[Verdict]:
    """Run segmentation and alignment on each pair of editions the cases name, then read off the
    relation the pipeline gives each case."""
    with tempfile.TemporaryDirectory() as empty:
        docs = ingest(Path(empty), [corpus]).docs
    wanted = {c.from_edition for c in cases} | {c.to_edition for c in cases}
    docs = [d for d in docs if d.edition in wanted and d.complete]
    missing = sorted(wanted - {d.edition for d in docs})
    if missing:
        raise PipelineError(f"no complete edition of {', '.join(missing)} in the folder", path=corpus)
    rules, eds = read.editions(docs)
    verdicts = []
    for pair in sorted({(c.from_edition, c.to_edition) for c in cases}):
        subset = [r for r in rules if r.edition in pair]
        history = build(subset, [e for e in eds if e.edition in pair])
        lineage = {(r.edition, _label(r)): history.lineage[rule_key(r)] for r in subset if r.kind != "commentary"}
        verdicts += [Verdict(c, _relation(c, history, lineage)) for c in cases
                     if (c.from_edition, c.to_edition) == pair]
    return sorted(verdicts, key=lambda v: v.case.line)


def _label(r) -> str:
    return r.rule_id if r.kind != "glossary" else f"g:{r.rule_id}"


def _key(name: str) -> str:
    return name if RULE_NUMBER.match(name) or re.fullmatch(PART_DIGIT, name) else f"g:{name}"  # a part: "4"


def _relation(c: Case, history, lineage) -> str:
    old = lineage.get((c.from_edition, _key(c.old))) if c.old else None
    new = lineage.get((c.to_edition, _key(c.new))) if c.new else None
    if (c.old and old is None) or (c.new and new is None):
        return "missing"  # the case names a rule the edition does not hold: the case or the segmentation is wrong
    rows = [x for x in history.changes if x.from_edition == c.from_edition and x.to_edition == c.to_edition]
    if c.old and c.new:
        for x in rows:
            if x.old_rule_id == c.old and x.new_rule_id == c.new and x.change in ("split", "merged", "renamed"):
                return x.change
        return "same" if old == new else "unrelated"
    if c.new:
        changes = {x.change for x in rows if x.new_rule_id == c.new and x.lineage_id == new}
        return "added" if "added" in changes else ("split" if "split" in changes else "same")
    changes = {x.change for x in rows if x.old_rule_id == c.old and x.lineage_id == old}
    return "removed" if "removed" in changes else ("merged" if "merged" in changes else "same")


def table(verdicts: list[Verdict]) -> list[dict]:
    """Precision and recall per relation: a case counts for the first relation it accepts."""
    out = []
    for relation in RELATIONS:
        expected = [v for v in verdicts if v.case.expected[0] == relation]
        found = [v for v in verdicts if v.found == relation]
        if expected or found:
            out.append({"relation": relation, "cases": len(expected), "found": len(found),
                        "precision": sum(v.right for v in found) / len(found) if found else None,
                        "recall": sum(v.right for v in expected) / len(expected) if expected else None})
    return out


def summary(verdicts: list[Verdict]) -> str:
    lines = [f"{'relation':<10} {'cases':>5} {'found':>5} {'precision':>9} {'recall':>7}"]
    for row in table(verdicts):
        p = "-" if row["precision"] is None else f"{row['precision']:.2f}"
        r = "-" if row["recall"] is None else f"{row['recall']:.2f}"
        lines.append(f"{row['relation']:<10} {row['cases']:>5} {row['found']:>5} {p:>9} {r:>7}")
    right = sum(v.right for v in verdicts)
    lines.append(f"{right} of {len(verdicts)} cases right")
    for v in verdicts:
        if not v.right:
            c = v.case
            lines.append(f"  line {c.line}: {c.from_edition} {c.old or '-'} -> {c.to_edition} {c.new or '-'}: "
                         f"expected {'|'.join(c.expected)}, found {v.found} ({c.evidence})")
    return "\n".join(lines)
