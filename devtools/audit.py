"""A blind measure of the history: a stratified random sample of change rows from a published run,
written as a worksheet for someone who did not write the code to judge against the source texts,
then scored as precision per class with a 95% interval.

`make accuracy` checks hand-picked cases, which the code was tuned on; this draws rows the code
chose, by a seed that is new for every audit. Each class is sampled on its own (so rare classes
such as "merged" get as many rows as "modified"), and within a class the rows are drawn round-robin
over the steps in a random order, so every era is represented, not only the step with most rows.
"""
from __future__ import annotations

import csv
import math
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

from pipeline.publish import load
from pipeline.errors import PipelineError

CLASSES = ("modified", "cosmetic", "reference", "renumbered", "renamed", "added", "removed", "split", "merged")
VERDICTS = ("right", "wrong", "unsure")
COLUMNS = ("row", "class", "from_edition", "to_edition", "old_rule_id", "new_rule_id", "kind", "method", "note",
           "old_source", "new_source", "verdict", "should_be", "comment")


def stratum(change: str, renumbered: bool) -> str | None:
    """The audit class of a change row: its change, or "renumbered" for a rule that kept its words
    under a new number; unchanged rows at their own number (nothing to judge) and rows of a copy or
    fragment (first_seen, not_covered) are not drawn."""
    if change == "unchanged":
        return "renumbered" if renumbered else None
    return change if change in CLASSES else None


def _strata(changes) -> dict[str, dict[tuple, list[int]]]:
    """class -> (from, to) -> the positions of that step's rows of that class in `changes`."""
    by_class: dict[str, dict[tuple, list[int]]] = defaultdict(lambda: defaultdict(list))
    for k, (change, renumbered, a, b) in enumerate(zip(changes.change, changes.renumbered,
                                                        changes.from_edition, changes.to_edition)):
        cls = stratum(change, bool(renumbered))
        if cls:
            by_class[cls][(a, b)].append(k)
    return by_class


def sample(processed: Path, seed: int, per_class: int) -> list[dict]:
    """`per_class` rows of each class (all of them when there are fewer), drawn by `seed`."""
    changes = load.read(processed, "changes", ["from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id",
                                                "kind", "change", "renumbered", "method", "note"]).to_pandas()
    changes = changes[changes.kind != "commentary"]
    rng = random.Random(seed)
    by_class = _strata(changes)
    picked = []
    for cls in CLASSES:
        steps = by_class.get(cls, {})
        pools = {step: rng.sample(rows, len(rows)) for step, rows in sorted(steps.items())}
        order = sorted(pools)
        rng.shuffle(order)
        drawn = []
        while len(drawn) < per_class and any(pools.values()):
            for step in order:
                if pools[step] and len(drawn) < per_class:
                    drawn.append(pools[step].pop())
        picked += [(cls, k) for k in drawn]
    rows = [dict(changes.iloc[k]) | {"class": cls} for cls, k in picked]
    return _with_texts(processed, rows)


def _with_texts(processed: Path, rows: list[dict]) -> list[dict]:
    rules = load.read(processed, "rules", ["edition", "source", "rule_id", "kind", "title", "text", "examples",
                                           "line_start", "line_end"]).to_pandas()
    paths = dict(load.read(processed, "sources", ["source_id", "path"]).to_pandas().itertuples(index=False))
    where = {}
    for r in rules.itertuples(index=False):  # a rule may change kind (102.8 -> 102.3d): the glossary apart
        where.setdefault((r.edition, r.kind == "glossary", r.rule_id), r)

    def side(edition: str, kind: str, rule_id: str) -> tuple[str, str]:
        r = where.get((edition, kind == "glossary", rule_id)) if rule_id else None
        if r is None:
            return "", ""
        text = "\n".join(filter(None, [r.title if r.title != r.rule_id else "", r.text]))  # a term is its title
        text += "".join(f"\nExample: {e}" for e in r.examples)
        source = r.source.split(";")[0]
        return f"{paths.get(source, source)}:{r.line_start}-{r.line_end}", text
    out = []
    for n, row in enumerate(rows, start=1):
        old_source, old_text = side(row["from_edition"], row["kind"], row["old_rule_id"])
        new_source, new_text = side(row["to_edition"], row["kind"], row["new_rule_id"])
        out.append({"row": n, "class": row["class"], "from_edition": row["from_edition"],
                    "to_edition": row["to_edition"], "old_rule_id": row["old_rule_id"],
                    "new_rule_id": row["new_rule_id"], "kind": row["kind"], "method": row["method"],
                    "note": row["note"], "old_source": old_source, "new_source": new_source,
                    "old_text": old_text, "new_text": new_text})
    return out


QUESTIONS = {
    "modified": "Did the wording of the rule really change (not only typography, quotes, symbols or cited numbers), "
                "and is the new rule the same rule as the old one?",
    "cosmetic": "Is the new rule the same rule, with only typography changed (quotes, dashes, spacing, case, "
                "symbol spelling such as (tm) or {oW})?",
    "reference": "Is the new rule the same rule, with only the rule numbers it cites changed?",
    "renumbered": "Is the new rule (same words, new number) really the old rule moved?",
    "renamed": "Is the new glossary term the old term under a new name?",
    "added": "Is the new rule really new: does no rule of the old edition hold its text (a sentence, a clause, an "
             "example, even reworded)? If one does, it is a split piece, a move or a rewrite: wrong.",
    "removed": "Did the old rule really go: is its text (a sentence, a clause, an example, even reworded) in no "
               "rule of the new edition? If it is, it was merged, moved or rewritten: wrong.",
    "split": "Is a real part of the old rule's text (a sentence, a clause, an example) in the new rule?",
    "merged": "Did the old rule end, its text carried into the new rule (which continues another rule)?",
}


def write(rows: list[dict], out: Path, seed: int) -> tuple[Path, Path]:
    """The worksheet as CSV (verdict, should_be and comment left blank to fill) and as Markdown
    (every row with both texts, for reading)."""
    out.mkdir(parents=True, exist_ok=True)
    sheet, readable = out / f"audit-{seed}.csv", out / f"audit-{seed}.md"
    with sheet.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({**r, "verdict": "", "should_be": "", "comment": ""} for r in rows)
    lines = [f"# Audit worksheet, seed {seed}", "",
             "Judge each row against the source texts (the files and lines are given; the old and new editions are "
             "complete files you can search). Write `right`, `wrong` or `unsure` in the `verdict` column of "
             f"`{sheet.name}`, and for a wrong row what it should be (`should_be`) and why (`comment`).", "",
             "The question per class:", ""]
    lines += [f"- **{cls}**: {q}" for cls, q in QUESTIONS.items()]
    for r in rows:
        lines += ["", f"## Row {r['row']}: {r['class']}  {r['from_edition']} {r['old_rule_id'] or '-'} -> "
                      f"{r['to_edition']} {r['new_rule_id'] or '-'} ({r['kind']})"]
        if r["note"]:
            lines.append(f"note: {r['note']}")
        for label, source, text in (("old", r["old_source"], r["old_text"]), ("new", r["new_source"], r["new_text"])):
            if source:
                lines += ["", f"{label} ({source}):", "", *("    " + t for t in text.splitlines())]
    readable.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sheet, readable


def wilson(right: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (sound at 0 or n, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def read_sheet(sheet: Path) -> list[dict]:
    try:
        with sheet.open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise PipelineError(f"cannot read the worksheet: {e}", path=sheet) from e


def score(sheet: Path) -> list[dict]:
    """Precision per class of a judged worksheet: unsure rows are counted apart, never as right."""
    rows = read_sheet(sheet)
    tally: dict[str, list[int]] = {cls: [0, 0, 0] for cls in CLASSES}
    for n, row in enumerate(rows, start=2):
        verdict = (row.get("verdict") or "").strip().lower()
        if verdict not in VERDICTS or row.get("class") not in tally:
            raise PipelineError(f"line {n}: verdict must be one of {', '.join(VERDICTS)} and class one of "
                                f"{', '.join(CLASSES)}, got {verdict!r} / {row.get('class')!r}", path=sheet)
        tally[row["class"]][VERDICTS.index(verdict)] += 1
    out = []
    for cls, (right, wrong, unsure) in tally.items():
        if right + wrong + unsure:
            low, high = wilson(right, right + wrong)
            out.append({"class": cls, "judged": right + wrong, "right": right, "unsure": unsure,
                        "precision": right / (right + wrong) if right + wrong else None, "low": low, "high": high})
    return out


# What a judge wrote a wrong row should be, by its first class word ("split piece of 406.1", "merged into
# 506.2", "modified: continues as 605.5b"): the missed pieces and merges recall is estimated from.
MEANT = re.compile(r"split|piece|merge|modif|cosmetic|reference|renumber|renam|added|removed|unchanged", re.I)
MISSED_AS = {"split": "added", "merged": "removed"}  # a missed piece reads as added, a missed merge as removed


def _meant(should_be: str) -> str | None:
    found = MEANT.search(should_be or "")
    word = found.group(0).lower() if found else ""
    return "split" if word in ("split", "piece") else "merged" if word == "merge" else None


def population(processed: Path) -> Counter:
    """(class, (from, to)) -> how many rows of that class the step has: what each judged row stands for."""
    columns = ["from_edition", "to_edition", "kind", "change", "renumbered"]
    changes = load.read(processed, "changes", columns).to_pandas()
    changes = changes[changes.kind != "commentary"]
    return Counter({(cls, step): len(rows) for cls, steps in _strata(changes).items() for step, rows in steps.items()})


def recall(rows: list[dict], counts: dict) -> list[dict]:
    """Estimated recall of split pieces and merges. The sample is drawn round-robin over the steps, not in
    proportion to them, so each judged row stands for its step's rows of its class: found = rows of the
    class x their step's precision; missed = `added` (or `removed`) rows x the share of that step's judged
    ones a judge said should be a split piece (or a merge). A step with no judged row of a class takes the
    class's rate over all steps. Unsure rows count on neither side. A rough figure: it rests on few rows."""
    judged, right, meant = Counter(), Counter(), Counter()
    for r in rows:
        verdict, step = (r.get("verdict") or "").strip().lower(), (r["from_edition"], r["to_edition"])
        if verdict not in ("right", "wrong"):
            continue
        judged[(r["class"], step)] += 1
        right[(r["class"], step)] += verdict == "right"
        if verdict == "wrong" and _meant(r.get("should_be", "")):
            meant[(_meant(r["should_be"]), r["class"], step)] += 1

    def rate(hits: Counter, cls: str, step, tag: tuple) -> float:
        """hits[(*tag, step)] per judged row of `cls` in `step` (over all steps when it has none)."""
        steps = [step] if judged[(cls, step)] else [s for (c, s) in list(judged) if c == cls]
        n = sum(judged[(cls, s)] for s in steps)
        return sum(hits[(*tag, s)] for s in steps) / n if n else 0.0
    out = []
    for cls, source in MISSED_AS.items():
        found = sum(n * rate(right, cls, step, (cls,)) for (c, step), n in sorted(counts.items()) if c == cls)
        missed = sum(n * rate(meant, source, step, (cls, source))
                     for (c, step), n in sorted(counts.items()) if c == source)
        out.append({"class": cls, "found": found, "missed": missed,
                    "recall": found / (found + missed) if found + missed else None,
                    "wrong_rows": sum(v for (t, c, _), v in meant.items() if t == cls)})
    return out


def recall_summary(table: list[dict]) -> str:
    lines = ["", "estimated recall (each judged row standing for its step's rows of its class):"]
    for t in table:
        r = "-" if t["recall"] is None else f"{t['recall']:.2f}"
        lines.append(f"{t['class']:<11} found ~{t['found']:.0f}, missed ~{t['missed']:.0f} (from {t['wrong_rows']} "
                     f"judged {MISSED_AS[t['class']]} rows): recall {r}")
    return "\n".join(lines)


def summary(table: list[dict]) -> str:
    lines = [f"{'class':<11} {'judged':>6} {'right':>5} {'unsure':>6} {'precision':>9}  95% interval"]
    for t in table:
        p = "-" if t["precision"] is None else f"{t['precision']:.2f}"
        lines.append(f"{t['class']:<11} {t['judged']:>6} {t['right']:>5} {t['unsure']:>6} {p:>9}  "
                     f"{t['low']:.2f}-{t['high']:.2f}")
    return "\n".join(lines)
