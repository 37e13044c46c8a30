"""Every change visible: the redlines of a rule's title, text and examples, built from the word
operations stored in changes.csv (computed here only when a side has none: an added or removed
rule is shown whole, as one insertion or deletion)."""
from __future__ import annotations

import json

from pipeline.align.diff import word_ops


def _ops(stored, old: str, new: str) -> list:
    ops = json.loads(stored) if isinstance(stored, str) else stored
    if not ops and old != new:
        ops = [list(op) for op in word_ops(old, new)]
    return [list(op) for op in ops or ()]


def _examples(record: dict) -> list[str]:
    examples = record.get("examples") or []
    return json.loads(examples) if isinstance(examples, str) else list(examples)


def parts(old: dict, new: dict, change: dict, segments) -> list[dict]:
    """[{part, changed, inline, left, right}] for the title, the text and each example of a rule
    between two versions (`old` or `new` may be {}: added, removed). `segments(old, new, ops)` turns
    operations into (inline, left, right). Unchanged examples are left out; the title and text are
    always given, so a change in an example still shows which rule it belongs to."""
    out = []

    def add(part: str, a: str, b: str, stored) -> None:
        ops = _ops(stored, a, b) if a != b else []
        inline, left, right = segments(a, b, ops) if ops else ([("same", b)], [("same", a)], [("same", b)])
        # side by side is the inline redline without its insertions (left) or deletions (right): when it is,
        # exactly, app.js builds it from the inline one, and the page does not carry the texts twice more
        derived = left == [x for x in inline if x[0] != "ins"] and right == [x for x in inline if x[0] != "del"]
        out.append({"part": part, "changed": a != b, "inline": inline, "left": left, "right": right,
                    "derived": derived})

    old_title, new_title = old.get("title") or "", new.get("title") or ""
    if old_title or new_title:
        add("title", old_title, new_title, change.get("title_ops") or [])
    old_text, new_text = old.get("text") or "", new.get("text") or ""
    if old_text or new_text or not out:
        add("text", old_text, new_text, change.get("ops") or [])
    old_ex, new_ex = _examples(old), _examples(new)
    stored = change.get("example_ops") or []
    stored = json.loads(stored) if isinstance(stored, str) else stored
    if len(old_ex) == len(new_ex):
        for i, (a, b) in enumerate(zip(old_ex, new_ex)):
            if a != b:
                add("example", a, b, stored[i] if i < len(stored) else [])
    else:  # examples added or dropped: the stored operations are over all of them, one per line
        add("example", "\n".join(old_ex), "\n".join(new_ex), stored[0] if len(stored) == 1 else [])
    return out
