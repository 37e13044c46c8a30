"""The rows the change table leaves out, and how to get them back.

`changes` holds only the steps where something happened. A rule that goes on into the next edition
word for word, under the same number, matched by that number (class unchanged, method same, score and
similarity 100, nothing to review or note) has no row: the rules table already says it, by the
rule's `lineage_id` in both editions. On the 12-edition archive those rows were 13,042 of 25,859; on
110 simulated editions 303,410 of 312,417 (35 of the CSV's 37 MB). Every other row stays, an unchanged one that
was renumbered or found otherwise (moved, fuzzy, traced) included.

`plain` says which rows are left out; `continuations` rebuilds them from the rules and editions
tables: a rule whose lineage was in an earlier edition of the history (a copy is evidence about an
edition, never a step) and has no row reaching this edition continued unchanged from its previous
record. The database has them as the view `changes_unchanged` (and the old whole table as
`changes_all`, pipeline/publish/database.py); processed/README.md gives the same in pandas.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pipeline.records import RuleChange
from pipeline.ruleid import sort_key as natural_key

NO_STEP = "copy"  # an edition of this status makes no step of the history: its records join no change


def plain(c: RuleChange, examples: int) -> bool:
    """The change is exactly the row `continuations` rebuilds (the new rule has `examples` examples)."""
    return (c.change == "unchanged" and not c.renumbered and c.method == "same" and c.similarity == 100
            and c.score == 100 and not c.review and not c.note and not c.ops and not c.title_ops
            and not c.substitutions and c.old_rule_id == c.new_rule_id
            and len(c.example_ops) == examples and not any(c.example_ops))


def continuations(rules: Iterable[tuple], statuses: dict[str, str], reached: set[tuple[str, str]]) -> list[tuple]:
    """The left-out rows, as (from_edition, to_edition, lineage_id, old_rule_id, new_rule_id, kind, examples)
    tuples (`examples`: how many the rule has, one empty `example_ops` entry each). `rules` are
    (edition, kind, rule_id, lineage_id, examples) tuples, `statuses` each edition's status, `reached`
    the (lineage_id, to_edition) pairs that have a row in `changes`."""
    previous: dict[str, tuple[str, str]] = {}
    out = []
    for edition, kind, rule_id, lineage, examples in sorted(rules, key=lambda r: r[0]):  # stable: document order
        if not lineage or kind == "commentary" or statuses.get(edition) == NO_STEP:
            continue
        before = previous.get(lineage)
        previous[lineage] = (edition, rule_id)
        if before is not None and (lineage, edition) not in reached:
            out.append((before[0], edition, lineage, before[1], rule_id, kind, examples))
    return out


def row(from_edition: str, to_edition: str, lineage_id: str, old_rule_id: str, new_rule_id: str, kind: str,
        examples: int) -> dict:
    """A left-out row in full, as the typed loader gives a row of `changes`."""
    return {"from_edition": from_edition, "to_edition": to_edition, "lineage_id": lineage_id,
            "old_rule_id": old_rule_id, "new_rule_id": new_rule_id, "kind": kind, "change": "unchanged",
            "renumbered": False, "similarity": 100.0, "score": 100.0, "review": False, "method": "same",
            "ops": [], "title_ops": [], "example_ops": [[] for _ in range(examples)], "substitutions": [], "note": ""}


def record(*continuation) -> RuleChange:
    """A left-out row as the record the typed loader gives (pipeline/publish/load.py: tuples, not lists)."""
    return RuleChange(**{**row(*continuation), "ops": (), "title_ops": (), "substitutions": (),
                         "example_ops": ((),) * continuation[-1]})


def left_out(processed: Path, reached: set[tuple[str, str]], filters=None) -> list[RuleChange]:
    """The left-out rows of the run published in `processed` (of the editions pyarrow `filters` keep),
    `reached` the (lineage_id, to_edition) pairs of the rows `changes` has."""
    from pipeline.publish import load
    rules = load.columns(load.read(processed, "rules", columns=["edition", "kind", "rule_id", "lineage_id", "examples"],
                                   filters=filters))
    editions = load.columns(load.read(processed, "editions", columns=["edition", "status"]))
    rows = zip(*(rules[k] for k in ("edition", "kind", "rule_id", "lineage_id")), map(len, rules["examples"]))
    return [record(*c) for c in continuations(rows, dict(zip(editions["edition"], editions["status"])), reached)]


def every_change(processed: Path) -> list[RuleChange]:
    """Every change of the run published in `processed`, the left-out ones included, in the table's order."""
    from pipeline.publish import load
    changes = load.changes(processed)
    return sorted(changes + left_out(processed, {(c.lineage_id, c.to_edition) for c in changes}), key=order)


def order(c) -> tuple:
    """The change table's row order (of RuleChange records, or of anything with their attributes)."""
    return (c.to_edition, c.from_edition, natural_key(c.new_rule_id or c.old_rule_id), c.old_rule_id, c.change,
            c.lineage_id)

