"""The lineage index: which number each lineage has in each edition, and what became of a rule between two
editions (renumbered, split, merged, removed), built from the published tables (rules, changes, editions).
Written by the export (processed/json/), read by the reports and by `cite`."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipeline import lookup
from pipeline.errors import PipelineError

UNNUMBERED = ("commentary", "glossary")  # records a citation by number cannot mean
OFFICIAL = ("complete", "truncated")  # editions whose numbering a writer cites
ENDINGS = ("removed", "merged")
# The status shown for a citation: the first of its marks in this order.
RULE_COLUMNS = ["edition", "rule_id", "kind", "lineage_id"]
CHANGE_COLUMNS = ["from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "change"]
SEVERITY = ("unknown", "removed", "not in edition", "not yet", "merged", "split", "modified", "renumbered")


@dataclass(frozen=True, slots=True)
class Fate:
    """What became of one cited rule: its number(s) in the target edition (its own first, then the
    pieces split off it), and the marks that say how it got there."""

    numbers: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    detail: str = ""

    @property
    def status(self) -> str:
        return next((m for m in SEVERITY if m in self.marks), "unchanged")


class Remapper:
    """Lineages and change classes, indexed for look-ups by (edition, number) and by lineage."""

    def __init__(self, rules: Iterable[tuple[str, str, str, str]],
                 changes: Iterable[tuple[str, str, str, str, str, str]], editions: Iterable[tuple[str, str]]):
        self.lineage: dict[tuple[str, str], str] = {}  # (edition, rule_id) -> lineage_id
        self.number: dict[tuple[str, str], str] = {}  # (lineage_id, edition) -> rule_id
        self.versions: dict[str, list[tuple[str, str]]] = {}  # lineage_id -> [(edition, rule_id)]
        held: set[str] = set()
        for edition, rule_id, kind, lineage in rules:
            if kind in UNNUMBERED or not lineage:
                continue
            held.add(edition)
            self.lineage.setdefault((edition, rule_id), lineage)
            if (lineage, edition) not in self.number:
                self.number[lineage, edition] = rule_id
                self.versions.setdefault(lineage, []).append((edition, rule_id))
        self.steps: dict[str, list[tuple[str, str, str, str]]] = {}  # lineage -> [(to, change, old, new)]
        self.pieces: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (from, old) -> [(to, piece lineage)]
        for a, b, lineage, old, new, change in changes:
            self.steps.setdefault(lineage, []).append((b, change, old, new))
            if change == "split":
                self.pieces.setdefault((a, old), []).append((b, lineage))
        statuses = dict(editions)
        official = sorted(e for e in held if statuses.get(e) in OFFICIAL)
        self.editions = official or sorted(held)  # a run of fragments only: their own numbers
        complete = [e for e in self.editions if statuses.get(e) == "complete"]
        self.latest = (complete or self.editions or [""])[-1]

    def spans(self, lineage: str) -> list[list[str]]:
        """The numbers a lineage had, as [first, last, number] runs of consecutive editions of `editions`
        ([["2003-10-01", "2009-05-01", "212.1b"], ["2009-07-11", "2013-05-01", "204.1a"], ...])."""
        order = {e: i for i, e in enumerate(self.editions)}
        out: list[list[str]] = []
        last = -2
        for edition, rule_id in sorted(self.versions.get(lineage, ())):
            i = order.get(edition)
            if i is None:  # a fragment or copy among official editions: not a period of its own
                continue
            if out and out[-1][2] == rule_id and i == last + 1:
                out[-1][1] = edition
            else:
                out.append([edition, edition, rule_id])
            last = i
        return out

    def edition(self, date: str) -> tuple[str, str]:
        """The edition a date or set code names, and a note when it is not one (the edition in force then)."""
        if not self.editions:
            raise PipelineError("the datasets hold no numbered rules: run `python -m pipeline run` first")
        return lookup.edition(date, self.editions)

    def remap(self, rule_id: str, a: str, b: str) -> Fate:
        """Where rule `rule_id` of edition `a` is in edition `b`."""
        lineage = self.lineage.get((a, rule_id))
        if lineage is None:
            close = lookup.suggestions(rule_id, {n for e, n in self.lineage if e == a})
            return Fate((), ("unknown",),
                        f"no rule {rule_id} in {a}" + (f"; did you mean {', '.join(close)}?" if close else ""))
        return self.follow(lineage, a, b, rule_id)

    def follow(self, lineage: str, a: str, b: str, cited: str = "", depth: int = 0) -> Fate:
        """A lineage from edition `a` to edition `b` (either way in time)."""
        early, late = sorted((a, b))
        steps = [s for s in self.steps.get(lineage, ()) if early < s[0] <= late]
        marks = ["modified"] if any(s[1] == "modified" for s in steps) else []
        now = self.number.get((lineage, b))
        if now is not None:
            cited = cited or self.number.get((lineage, a), now)
            if now != cited:
                marks.append("renumbered")
            pieces = self._pieces(lineage, a, b, depth) if a < b else []
            if pieces:
                marks.append("split")
            detail = f"pieces split off: now {', '.join(pieces)}" if pieces else ""
            return Fate((now, *pieces), tuple(marks), detail)
        end = next((s for s in steps if s[1] in ENDINGS), None) if a < b else None
        if end and end[1] == "merged" and depth < 5:
            into = self.lineage.get((end[0], end[3]))
            later = self.follow(into, end[0], b, end[3], depth + 1) if into else Fate()
            return Fate(later.numbers, ("merged", *marks, *later.marks),
                        f"merged into {end[3]} in {end[0]}" + (f" (now {later.numbers[0]})" if later.numbers else ""))
        if end:
            return Fate((), ("removed", *marks), f"removed in {end[0]}")
        if a > b:
            return Fate((), ("not yet", *marks), f"not yet in {b}")
        return Fate((), ("not in edition", *marks), f"{b} does not hold it")

    def _pieces(self, lineage: str, a: str, b: str, depth: int) -> list[str]:
        """The numbers in `b` of the pieces cut from this lineage between `a` and `b`."""
        out = []
        for edition, rule_id in self.versions.get(lineage, ()):
            if a <= edition < b and depth < 5:
                for to, piece in self.pieces.get((edition, rule_id), ()):
                    if to <= b and piece != lineage:
                        out += [n for n in self.follow(piece, to, b, "", depth + 1).numbers if n not in out]
        return out


def from_tables(rules: Iterable, changes, editions) -> Remapper:
    """A Remapper from tables already read: rules as (edition, rule_id, kind, lineage_id) tuples or
    rules.csv dicts; changes and editions as their DataFrames."""
    rows = ((r["edition"], r["rule_id"], r["kind"], r["lineage_id"]) if isinstance(r, dict) else r for r in rules)
    return Remapper(rows, changes[CHANGE_COLUMNS].itertuples(index=False),
                    zip(editions["edition"], editions["status"]))
