"""The page model of a step between two editions (pairs/A_B.html, and `compare --report`): its changes
with the redlines of their titles, texts and examples, and the chapter filter."""
from __future__ import annotations


import pandas as pd

from pipeline.report import editionpages as reader
from pipeline.report import redline
from pipeline.ruleid import chapter as chapter_of, sort_key as natural_key
from pipeline.report.links import lineage_file


HIDDEN_BY_DEFAULT = ("unchanged", "cosmetic", "reference", "not_covered")


def segments(old: str, new: str, ops: list) -> tuple[list, list, list]:
    """(inline, left, right) lists of (tag, text) built from word operations; the template escapes.
    A space that closes both sides of a replacement is shown plain, so only the words are highlighted."""
    inline, left, right = [], [], []
    pos_a = pos_b = 0
    for _tag, a0, a1, b0, b1, old_text, new_text in ops:
        if a0 > pos_a or b0 > pos_b:
            inline.append(("same", old[pos_a:a0]))
            left.append(("same", old[pos_a:a0]))
            right.append(("same", new[pos_b:b0]))
        tail = old_text[len(old_text.rstrip()):]
        if not (old_text.strip() and new_text.strip() and new_text.endswith(tail)):
            tail = ""  # only a space both sides end with is shown plain
        old_core, new_core = old_text[:len(old_text) - len(tail)], new_text[:len(new_text) - len(tail)]
        if old_core:
            inline.append(("del", old_core))
            left.append(("del", old_core))
        if new_core:
            inline.append(("ins", new_core))
            right.append(("ins", new_core))
        for parts in (inline, left, right):
            parts.append(("same", tail))
        pos_a, pos_b = a1, b1
    inline.append(("same", old[pos_a:]))
    left.append(("same", old[pos_a:]))
    right.append(("same", new[pos_b:]))
    drop_empty = lambda parts: [(t, x) for t, x in parts if x]  # noqa: E731
    return drop_empty(inline), drop_empty(left), drop_empty(right)


def _texts(rules: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["edition"], r["rule_id"]): r for r in rules if r["kind"] != "commentary"}


def _changes_by_step(changes: pd.DataFrame) -> dict[tuple[str, str], list[dict]]:
    """The rows a pair page shows (all but the plain unchanged), grouped by step."""
    shown = changes[(changes.change != "unchanged") | changes.renumbered.astype(bool)]
    out: dict[tuple[str, str], list[dict]] = {}
    for c in shown.to_dict(orient="records"):
        out.setdefault((c["from_edition"], c["to_edition"]), []).append(c)
    return out


def _pair_rows(changes: list[dict], old_of, new_of) -> list[dict]:
    """A pair page's rows: each change with the redlines of its title, text and examples. `old_of` /
    `new_of` give a rule's record (a dict with text, title, examples) by number; ops may be JSON
    (from changes.csv) or lists."""
    rows = []
    for c in changes:
        old, new = old_of(c["old_rule_id"]) or {}, new_of(c["new_rule_id"]) or {}
        number = c["new_rule_id"] or c["old_rule_id"]
        chapter = chapter_of(number)
        rows.append({**c, "parts": redline.parts(old, new, c, segments), "chapter": chapter,
                     "part": chapter[0] if chapter.isdigit() else "",
                     "key": natural_key(number), "anchor": reader.change_anchor(c["old_rule_id"], c["new_rule_id"]),
                     "both": bool(c["old_rule_id"] and c["new_rule_id"]),
                     "lineage_href": lineage_file(c["lineage_id"]) if c["lineage_id"] else ""})
    rows.sort(key=lambda r: (r["key"], r["old_rule_id"]))
    return rows


def _chapters(rows: list[dict], title_of) -> list[dict]:
    """The chapter filter's options, in numeric order, with their titles: the parts (each shows every chapter
    in it), the chapters, the glossary."""
    numbers = sorted({r["chapter"] for r in rows} | {r["part"] for r in rows if r["part"]},
                     key=lambda n: (not n.isdigit(), natural_key(n)))
    label = lambda n: f"{n}. " + reader.ITALICS.sub(r"\1", title_of(n)) if title_of(n) else n  # noqa: E731  (no tags)
    groups = [("Parts (every chapter in it)", [n for n in numbers if len(n) == 1 and n.isdigit()]),
              ("Chapters", [n for n in numbers if len(n) > 1 and n.isdigit()]),
              ("Other", [n for n in numbers if not n.isdigit()])]
    return [{"label": name, "options": [{"value": n, "label": label(n) if n.isdigit() else n} for n in group]}
            for name, group in groups if group]
