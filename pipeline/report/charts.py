"""The charts: the index's timeline and the terminology page's small multiples. Bars are drawn in an SVG
stretched to the page's width, their text set in HTML at a fixed size, so which labels fit is worked out
here per width tier (style.css's breakpoints)."""
from __future__ import annotations

from collections import Counter

import pandas as pd



TOP_TERMS = 8
# The charts draw their bars in an SVG stretched to the page's width and set their text in HTML at a fixed
# size, so a label reads the same at 320 px as at 1400 px; which labels fit is worked out per width tier,
# from the narrowest box the chart can have in it (style.css shows tier 1 from 700 px, tier 2 from 1100 px;
# main's padding taken off, at most the chart's 64em).
TIERS = (300, 655, 960)
Y_AXIS_PX = 52  # the timeline's counts on the left (style.css: .chart.with-y)
CHAR_PX = 7.3  # a character of the charts' labels (12px monospace), rounded up
LABEL_GAP = 8  # between two labels, with the tick mark beside one
STATUS = {  # an edition's status: its bar's colour and what the legend says
    "complete": ("#8fb3e0", "complete official edition"),
    "truncated": ("#5aa17f", "official text that stops early"),
    "fragment": ("#d9c48f", "fragment standing in for its edition"),
    "copy": ("#a9a9a9", "unofficial copy of an edition (no step of its own)"),
}
OTHER_COLOUR = "#6b6b6b"  # a status not listed above, named as it is in the legend
CHANGED = ("#d0583c", "added, removed or reworded on the way in")


def _timeline(editions: list[dict], steps: list[dict]) -> dict:
    """The index's chart, a slot per edition: its numbered entries (coloured by status) above what changed
    on the way to it (on a scale of its own: it is a few percent of the first), a legend of every colour
    the bars use, and per width tier the axis labels and bar numbers that fit."""
    changed = Counter()
    for s in steps:  # a fragment in between splits a step in two: count both halves
        changed[s["to"]] += s["changed"]
    counts = [e["numbered"] for e in editions]
    moved = [changed.get(e["edition"], 0) for e in editions]
    status = [_status(e["status"]) for e in editions]
    titles = [f"{e['edition']}: {n:,} numbered entries ({what})" for e, n, (_, what) in zip(editions, counts, status)]
    totals = _bars(counts, [colour for colour, _ in status], _scale(max(counts, default=0)), titles)
    changes = _bars(moved, [CHANGED[0]] * len(moved), _scale(max(moved, default=0)),
                    [f"{e['edition']}: {n:,} {CHANGED[1]}" for e, n in zip(editions, moved)])
    labels = [b["label"] for b in totals["bars"] + changes["bars"]]
    return {"slots": len(editions), "totals": totals, "changes": changes, "legend": _legend(editions),
            "axis": _axis([e["edition"] for e in editions], Y_AXIS_PX),
            "numbers_from": _numbers_from(labels, len(editions), Y_AXIS_PX)}


def _legend(editions: list[dict]) -> list[dict]:
    """Every colour the timeline uses, with what it means: the statuses present (known ones in STATUS
    order, with how many editions have each), then the changes."""
    counts = Counter(e["status"] for e in editions)
    present = [s for s in STATUS if counts[s]] + sorted(s for s in counts if s not in STATUS)
    out = [{"colour": _status(s)[0], "label": _status(s)[1], "count": counts[s]} for s in present]
    return out + [{"colour": CHANGED[0], "label": CHANGED[1], "count": 0}] if editions else out


def _status(status: str) -> tuple[str, str]:
    """A status's colour and what the legend calls it; one not in STATUS is named as it is."""
    return STATUS.get(status, (OTHER_COLOUR, status))


def _scale(peak: int, most: int = 4) -> tuple[int, int]:
    """(step, top) of a value axis that holds `peak` in at most `most` round steps (1, 2 or 5 times a power of ten)."""
    power = 1
    while True:
        for m in (1, 2, 5):
            step = m * power
            if peak <= step * most:
                return step, step * max(1, -(-peak // step))
        power *= 10


def _bars(values: list[int], fills: list[str], scale: tuple[int, int], titles: list[str], least: float = 1.5) -> dict:
    """Bars for a plot of one slot per value, in the units of its SVG (a slot wide, 100 high: it is stretched
    to the page, its text is not in it), with the gridlines of `scale`; a count above zero stays `least` high."""
    step, top = scale
    bars = []
    for i, (n, fill, title) in enumerate(zip(values, fills, titles)):
        h = max(100 * n / top, least) if n else 0
        bars.append({"x": round(i + 0.15, 2), "y": round(100 - h, 2), "h": round(h, 2), "fill": fill, "n": n,
                     "label": f"{n:,}", "cx": _pct(i + 0.5, len(values)), "title": title})
    grid = [{"y": _pct(t, top), "label": f"{t:,}"} for t in range(0, top + 1, step)] if step else []
    return {"bars": bars, "grid": grid}


def _pct(value: float, total: float) -> float:
    return round(100 * value / total, 3)


def _numbers_from(labels: list[str], slots: int, offset: int) -> int | None:
    """The first width tier from which every bar's number fits above it; None: at no width (the bars'
    titles and the tables below give them)."""
    widest = max(map(len, labels), default=0) * CHAR_PX + 2
    return next((tier for tier, px in enumerate(TIERS) if slots and (px - offset) / slots >= widest), None)


def _axis(dates: list[str], offset: int) -> list[list[dict]]:
    """Per width tier, the labels under a chart of one slot per date that fit: every one (2009-05) when
    all do, else years (_years)."""
    tiers = []
    for px in TIERS:
        each = _fit([(i, d[:7]) for i, d in enumerate(dates)], len(dates), px - offset, centred=True)
        tiers.append(each if len(each) == len(dates) else _years(dates, px - offset))
    return tiers


def _years(dates: list[str], width: float) -> list[dict]:
    """Years, each at its first slot. A regular rhythm (every 2nd, 5th, 10th year..., all of them) reads better
    than 2005, 2007, 2008, if it keeps more than three fifths of the labels that fit one after another:
    editions years apart, then months apart, have no rhythm to show."""
    starts = [(i, d[:4]) for i, d in enumerate(dates) if not i or d[:4] != dates[i - 1][:4]]
    packed = _fit(starts, len(dates), width, centred=False)
    for step in (1, 2, 5, 10, 20, 50):
        chosen = [(i, y) for i, y in starts if y.isdigit() and int(y) % step == 0]
        kept = _fit(chosen, len(dates), width, centred=False)
        names, whole = [t["label"] for t in kept], [y for _, y in chosen]
        regular = names == whole or names == whole[:-2] + whole[-1:]  # the last may push out the one before
        if kept and regular and 5 * len(kept) > 3 * len(packed):
            return kept
    return packed


def _fit(labels: list[tuple[int, str]], slots: int, width: float, centred: bool) -> list[dict]:
    """The labels that fit `width` px without touching: the last one (where the axis ends), then left to
    right the others that fit before it. Each is centred on its slot or starts at its middle; one that would
    run off an edge starts (or ends) at its middle instead. A wider screen only spreads them further apart."""
    placed = [_place(i, text, slots, width, centred) for i, text in labels]
    last = placed[-1:] if placed and placed[-1]["start"] >= 0 else []
    kept, right = [], -LABEL_GAP
    for label in placed[:-1]:
        if label["start"] >= max(right + LABEL_GAP, 0) and all(label["end"] + LABEL_GAP <= x["start"] for x in last):
            kept.append(label)
            right = label["end"]
    return [{"x": x["x"], "label": x["label"], "align": x["align"]} for x in kept + last]


def _place(i: int, text: str, slots: int, width: float, centred: bool) -> dict:
    """Where a label of slot `i` goes on an axis `width` px wide, and how it is aligned there."""
    middle, size = (i + 0.5) * width / slots, len(text) * CHAR_PX + 4  # with its tick mark
    align, start = ("middle", middle - size / 2) if centred else ("start", middle)
    if start < 0:
        align, start = "start", middle
    if start + size > width:
        align, start = "end", middle - size
    return {"x": _pct(i + 0.5, slots), "label": text, "align": align, "start": start, "end": start + size}


def _terminology(terms: pd.DataFrame) -> dict:
    """The main wording substitutions as small multiples: a row each, one bar per step between editions
    (each row on its own scale: the shape over time is what matters), under one axis of the steps' new
    editions; and the list of the most frequent."""
    if terms.empty:
        return {"series": [], "slots": 0, "ticks": [], "numbers_from": None, "top": []}
    terms = terms.assign(count=terms["count"].astype(int))
    totals = terms.groupby(["old", "new"])["count"].sum().sort_values(ascending=False, kind="stable")
    steps = sorted({(a, b) for a, b in zip(terms.from_edition, terms.to_edition)}, key=lambda s: (s[1], s[0]))
    series = [_term_row(terms, old, new, steps) for old, new in totals.index[:TOP_TERMS]]
    labels = [b["label"] for s in series for b in s["bars"]]
    return {"series": series, "slots": len(steps), "ticks": _axis([b for _, b in steps], 0),
            "numbers_from": _numbers_from(labels, len(steps), 0),
            "top": [{"old": o, "new": n, "total": int(totals[(o, n)])} for o, n in totals.index[:25]]}


def _term_row(terms: pd.DataFrame, old: str, new: str, steps: list[tuple[str, str]]) -> dict:
    """One substitution's row: a bar for each step it was seen in, scaled to its own peak."""
    seen = terms[(terms.old == old) & (terms.new == new)]
    by_step = {(a, b): int(c) for a, b, c in zip(seen.from_edition, seen.to_edition, seen["count"])}
    values = [by_step.get(s, 0) for s in steps]
    peak = max(values)
    names = [f"{a} → {b}" for a, b in steps]
    row = _bars(values, [CHANGED[0]] * len(values), (0, peak), [f"{n}: {v:,}" for n, v in zip(names, values)], least=8)
    return {"old": old, "new": new, "total": sum(values), "peak": peak, "peak_step": names[values.index(peak)],
            "bars": [b for b in row["bars"] if b["n"]], "grid": []}
