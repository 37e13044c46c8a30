"""A stable page per rule number that ever existed (`rules/212.1b.html`), for the links people and bots already
wrote: what the number named in each period of editions, with its words, and where that rule went (its number
in the next edition, merged, removed; its number now), each period linked to its lineage.

A number of the latest complete edition forwards to it, as before; `?as-of=DATE|SET` forwards to the rule in
the edition in force then (app.js), and `#periods` stays on the page. Plain data here; rule.html renders it.

A page never names the latest edition: a period that reaches it is open (its `last` is ""), and the page says
"the latest edition of these reports", which editions.js names. So a number that simply goes on into a new
edition keeps its page, unrendered (its key is its data), and the page says only true things without script.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline import registry
from pipeline.publish.remap import Remapper

SAFE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.\-]*")  # a number that can be a file name as it is (all real ones)


def numbers(remapper: Remapper) -> dict[str, list[tuple[int, str]]]:
    """Every number of the official editions: {number: [(edition index, lineage), ...]} in edition order."""
    order = {e: i for i, e in enumerate(remapper.editions)}
    out: dict[str, list[tuple[int, str]]] = {}
    for (edition, number), lineage in remapper.lineage.items():
        if edition in order and SAFE.fullmatch(number):
            out.setdefault(number, []).append((order[edition], lineage))
    for held in out.values():
        held.sort()
    return out


def periods(held: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Runs of consecutive editions in which one lineage had the number: [(first, last, lineage)]."""
    out: list[list] = []
    for i, lineage in held:
        if out and out[-1][2] == lineage and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i, lineage])
    return [tuple(p) for p in out]


def page(number: str, held: list[tuple[int, str]], remapper: Remapper, text_of) -> dict:
    """One number's page: its periods (each with the rule's words, what followed, its number now), whether
    it is a number of the latest edition, and, when it is, the spans of the rule that has it now (`?as-of=`
    looks there first, then at the editions that had the number). `text_of(edition, number)` gives a rule's words."""
    eds, latest = remapper.editions, remapper.latest
    shown = []
    for first, last, lineage in periods(held):
        a, z = eds[first], eds[last]
        open_ = z == latest == eds[-1]  # it goes on in the latest edition: the page does not name it
        shown.append({"first": a, "last": "" if open_ else z, "first_label": registry.label(a),
                      "last_label": "" if open_ else registry.label(z),
                      "lineage_id": lineage, "text": text_of(z, number), "after": _after(remapper, lineage, last),
                      "now": _now(remapper, lineage, z, number)})
    about = remapper.lineage.get((latest, number), "")
    spans = [[a, "" if z == latest == eds[-1] else z, n] for a, z, n in remapper.spans(about)] if about else []
    return {"number": number, "current": bool(about), "periods": shown, "spans": spans,
            "held": [[p["first"], p["last"]] for p in shown], "lineage_id": about}


def _after(remapper: Remapper, lineage: str, last: int) -> dict:
    """What the rule of a period became in the next official edition: a number, or how it ended."""
    eds = remapper.editions
    if last + 1 >= len(eds):
        return {"number": "", "edition": "", "what": "in force in the latest edition"}
    following = eds[last + 1]
    moved = remapper.number.get((lineage, following))
    if moved:
        return {"number": moved, "edition": following, "what": f"numbered {moved} from {registry.label(following)}"}
    fate = remapper.follow(lineage, eds[last], following)
    return {"number": "", "edition": following, "what": fate.detail or f"not in {registry.label(following)}"}


def _now(remapper: Remapper, lineage: str, last: str, number: str) -> dict:
    """Its number(s) in the latest edition, or what ended it ("merged into 300.1 in 2009-07-11 (now ...)")."""
    if last == remapper.latest:
        return {"numbers": [number], "what": ""}
    fate = remapper.follow(lineage, last, remapper.latest, number)
    what = ", ".join(m for m in fate.marks if m in ("merged", "split")) if fate.numbers else fate.detail
    return {"numbers": list(fate.numbers), "what": what}


def pages(remapper: Remapper, text_of) -> Iterator[dict]:
    """Every number's page, in no particular order (each page is one file)."""
    for number, held in sorted(numbers(remapper).items()):
        yield page(number, held, remapper, text_of)
