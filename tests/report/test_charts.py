"""The report's charts, from made-up editions: the index's timeline and the terminology rows, laid out
for every width tier; and the pages made from them, which test_browser.py looks at in Chromium at 320 to
1400 px (110 editions, as many as the simulated archive has: where the labels used to pile up).
"""
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
import pytest

from pipeline.records import CHANGES
from pipeline.report import build as report
from pipeline.report import charts

COUNTS = ("parts", "chapters", "sections", "rules", "subrules", "rulings", "examples", "glossary", "commentary",
          "conflicts")


def made_up_editions(count: int) -> list[dict]:
    """`count` editions 76 days apart from 2000 on, as report._editions gives them; every 25th an unofficial copy."""
    out = []
    for n in range(count):
        status = "copy" if n % 25 == 24 else "complete"
        e = {"edition": str(date(2000, 1, 1) + timedelta(days=76 * n)), "edition_end": "", "status": status,
             "sources": [], "set_code": "", "set_name": "", **{k: 0 for k in COUNTS}}
        e["rules"] = 0 if status == "copy" else 1900 + 9 * n
        e["numbered"] = e["rules"]
        out.append(e)
    return out


def made_up_steps(editions: list[dict]) -> list[dict]:
    complete = [e["edition"] for e in editions if e["status"] == "complete"]
    return [{"from": a, "to": b, "counts": {c: 0 for c in CHANGES}, "changed": 40 + (7 * i) % 60,
             "renumbered": 0, "review": 0, "runs": []} for i, (a, b) in enumerate(zip(complete, complete[1:]))]


def made_up_terms(editions: list[dict]) -> pd.DataFrame:
    """Substitutions seen here and there over the steps, one of them with markup in its words."""
    steps = list(zip([e["edition"] for e in editions], [e["edition"] for e in editions][1:]))
    words = [("<b>his or her</b>", "their"), ("play", "cast"), ("comes into play", "enters the battlefield")]
    rows = [{"from_edition": a, "to_edition": b, "old": old, "new": new, "count": 1 + (i * (k + 3)) % 250}
            for k, (old, new) in enumerate(words) for i, (a, b) in enumerate(steps) if (i + k) % 3 == 0]
    return pd.DataFrame(rows, columns=["from_edition", "to_edition", "old", "new", "count"])


def write_pages(folder: Path, count: int) -> Path:
    """index.html and terminology.html for `count` made-up editions, with the stylesheet, in `folder`."""
    env = report.environment()
    editions = made_up_editions(count)
    steps = made_up_steps(editions)
    index = env.get_template("index.html").render(
        root="", editions=editions, steps=steps, classes=CHANGES, timeline=charts._timeline(editions, steps),
        sources=count, unused=0, names={}, datasets=[])
    terms = env.get_template("terminology.html").render(root="", **charts._terminology(made_up_terms(editions)))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(index, encoding="utf-8")
    (folder / "terminology.html").write_text(terms, encoding="utf-8")
    (folder / "search-index.js").write_text("window.CR_INDEX = [];\n", encoding="utf-8")
    for name in report.STATIC:
        (folder / name).write_bytes((Path(report.__file__).parent / "templates" / name).read_bytes())
    return folder


def test_legend_names_every_status_even_an_unknown_one():
    editions = made_up_editions(30)
    editions[3]["status"], editions[5]["status"] = "fragment", "something new"
    timeline = charts._timeline(editions, made_up_steps(editions))
    legend = {x["label"]: x["colour"] for x in timeline["legend"]}
    fills = {b["fill"] for panel in ("totals", "changes") for b in timeline[panel]["bars"]}
    assert fills <= set(legend.values()) and "something new" in legend and charts.CHANGED[1] in legend
    assert timeline == charts._timeline(editions, made_up_steps(editions))  # same inputs, same chart


@pytest.mark.parametrize("peak, expected", [(0, (1, 1)), (1, (1, 1)), (7, (2, 8)), (40, (10, 40)), (41, (20, 60)),
                                            (1500, (500, 1500)), (3269, (1000, 4000))])
def test_value_axis_steps_are_round(peak, expected):
    assert charts._scale(peak) == expected




@pytest.mark.parametrize("count", [1, 2, 13, 110, 400])
def test_axis_labels_fit_the_narrowest_width_of_each_tier(count):
    """Where the template puts them (a label starts at, is centred on, or ends at its slot's middle), at the
    narrowest width of its tier they stay inside the plot and apart, by the width the layout counts for them."""
    dates = [e["edition"] for e in made_up_editions(count)]
    for px, ticks in zip(charts.TIERS, charts._axis(dates, charts.Y_AXIS_PX)):
        width, spans = px - charts.Y_AXIS_PX, []
        for t in ticks:
            middle, size = t["x"] * width / 100, len(t["label"]) * charts.CHAR_PX + 4
            start = {"start": middle, "middle": middle - size / 2, "end": middle - size}[t["align"]]
            spans.append((start, start + size))
        assert all(0 <= a and b <= width for a, b in spans), (px, ticks)
        assert all(b + charts.LABEL_GAP <= c for (_, b), (c, _) in zip(spans, spans[1:])), (px, ticks)
        assert ticks and ticks[0]["label"].startswith("2000")


def test_terminology_is_escaped_and_the_same_each_time():
    terms = made_up_terms(made_up_editions(20))
    env = report.environment()
    pages = [env.get_template("terminology.html").render(root="", **charts._terminology(terms)) for _ in range(2)]
    assert pages[0] == pages[1]
    assert "&lt;b&gt;his or her&lt;/b&gt;" in pages[0] and "<b>his" not in pages[0]
