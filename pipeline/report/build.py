"""HTML reports, rendered from processed/ with jinja2 (autoescape on, StrictUndefined).

Pages: index (timeline, steps, search), one per pair of editions, one per lineage, one per edition,
one per rule number that ever existed, sources audit (with each source's lines), terminology; and the Atom
feed, feed.xml (pipeline/report/feed.py). Static files only: the script, stylesheet and
search index are written into reports/ too, so everything opens from the file system.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from pipeline.ingest.clean import LINE_BREAK
from pipeline.align.diff import observed_note
from pipeline import registry
from pipeline.query import cite
from pipeline.report import feed
from pipeline.publish import jsonout
from pipeline.publish import load
from pipeline.report import pagekeys
from pipeline.publish import transaction as publish
from pipeline.report import editionpages as reader
from pipeline.report import redline
from pipeline.report import rulepages
from pipeline.schema import BY_NAME
from pipeline.records import CleanDoc
from pipeline.ruleid import chapter as chapter_of, sort_key as natural_key
from pipeline.atomic import write_atomic, write_if_changed

NEEDED = ("editions", "sources", "discards", "rules", "changes", "citations", "terminology", "renumberings",
          "observations")
CLASSES = ("unchanged", "cosmetic", "reference", "modified", "renamed", "added", "removed", "split", "merged",
           "first_seen", "not_covered")
HIDDEN_BY_DEFAULT = ("unchanged", "cosmetic", "reference", "not_covered")
STATIC = ("style.css", "app.js")
DATASETS = ("rules", "changes", "lineages", "editions", "glossary", "references", "citations", "terminology",
            "renumberings", "sources", "discards", "texts")
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
HASHED = re.compile(r"(?:\d+_)?[0-9a-f]{12,}")  # a file named by its content hash says nothing to a reader


def environment() -> Environment:
    env = Environment(loader=PackageLoader("pipeline.report", "templates"), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["lineage_href"] = lineage_file
    env.filters["pair_href"] = pair_file
    env.filters["prose"] = reader.plain
    env.filters["change_anchor"] = reader.change_anchor
    env.globals["source_pages"] = set()
    env.globals["source_names"] = {}
    env.globals["run_id"] = ""
    return env


@lru_cache(maxsize=1 << 16)
def lineage_file(lineage_id: str) -> str:
    """2003-10-01:212.1b -> 2003-10-01_212.1b.html; awkward ids (glossary terms) get a hash."""
    safe = lineage_id.replace(":", "_").replace("#", "~")
    if not re.fullmatch(r"[A-Za-z0-9._~-]+", safe):
        digest = hashlib.sha1(lineage_id.encode("utf-8")).hexdigest()[:10]
        safe = re.sub(r"[^A-Za-z0-9._~-]+", "-", safe)[:60] + "-" + digest
    return f"lineage/{safe}.html"


def pair_file(a: str, b: str) -> str:
    return f"pairs/{a}_{b}.html"


RULE_COLUMNS = ["edition", "source", "rule_id", "kind", "lineage_id", "title", "text", "examples", "citations",
                "rule_flags", "line_start", "line_end"]  # what the pages show of the rules table


def _rows(processed: Path, name: str, only: list[str] | None = None) -> list[dict]:
    """A table's rows as the typed loader gives them (booleans, lists, numbers as they were
    exported); the caller has checked the run (verify), or holds its staging folder."""
    if not (processed / f"{name}.parquet").exists():
        raise publish.missing(processed, f"{name}.parquet")
    return load.rows(processed, name, only=only, check=False)


def _read(processed: Path, name: str) -> pd.DataFrame:
    return pd.DataFrame(_rows(processed, name), columns=BY_NAME[name].names, dtype=object)


def render(processed: Path, reports: Path, docs: list[CleanDoc] | None = None, progress=None,
           run_id: str | None = None) -> list[Path]:
    """Write every page, tagged with the run id of the datasets; `docs` (the cleaned sources) adds a
    line-by-line page per source. Without `run_id`, the tables must all be from one published run."""
    if run_id is None:
        run_id = publish.verify(processed, [f"{name}.parquet" for name in NEEDED])
    data = {name: _read(processed, name) for name in NEEDED if name != "rules"}
    env = environment()
    env.globals["run_id"] = run_id
    env.globals["source_pages"] = {d.source.source_id for d in docs or ()}  # link only to pages written
    written: list[Path] = []
    put = _writer(reports, written)

    def page(name: str, template: str, **context) -> None:
        depth = name.count("/")
        put(name, env.get_template(template).render(root="../" * depth, **context))

    rules = _rows(processed, "rules", only=RULE_COLUMNS)
    editions = _editions(data["editions"])
    names = _source_names(data["sources"])
    env.globals["source_names"] = names  # sources are shown by name wherever they are named
    steps = _steps(data["changes"], data["renumberings"])
    used = int((data["sources"]["rejection"] == "").sum())
    page("index.html", "index.html", editions=editions, steps=steps, classes=CLASSES,
         timeline=_timeline(editions, steps), sources=used, unused=len(data["sources"]) - used, names=names,
         datasets=_datasets(processed, reports))
    grouped = reader.by_edition(rules)
    digests = {edition: pagekeys.digest(records) for edition, records in grouped.items()}  # shared by many keys
    by_step = _changes_by_step(data["changes"])
    _pair_pages(page, put, steps, rules, by_step, digests)
    put("feed.xml", feed.render(editions, steps, by_step, pair_file, reader.change_anchor))
    complete = [e["edition"] for e in editions if e["status"] == "complete"]
    remapper = cite.from_tables(rules, data["changes"], data["editions"])  # commentary shows the numbers now
    lineages = _lineage_inputs(rules, data["changes"], data["citations"], complete[-1] if complete else "",
                               lambda lineage, edition: cite.now(remapper, lineage, edition), data["observations"],
                               {e["edition"] for e in editions if e["status"] == "fragment"})
    index = _lineage_pages(page, put, (progress or iter)(lineages), env)
    _reader_pages(page, put, grouped, digests, editions, env)
    _number_pages(page, put, grouped, remapper)
    del rules, grouped
    sources = _sources(data["sources"], data["discards"])
    texts = {d.source.source_id: d for d in docs or ()}
    page("sources.html", "sources.html", sources=sources, with_lines=set(texts), names=names)
    _source_pages(page, put, texts, remapper, names)
    page("terminology.html", "terminology.html", **_terminology(data["terminology"]))
    put("search-index.js", "window.CR_INDEX = " + json.dumps(index, ensure_ascii=False, separators=(",", ":")) + ";\n")
    for name in STATIC:
        put(name, (Path(__file__).parent / "templates" / name).read_bytes())
    _remove_stale(reports, set(written))
    put.finish()
    return written


def _pair_pages(page, put, steps: list[dict], rules: list[dict], by_step: dict[tuple[str, str], list[dict]],
                digests: dict[str, str]) -> None:
    """A page per step: what it changed, with redlines. Its key is the step, its changes and the
    records of its two editions (the texts, titles and examples it shows)."""
    texts = _texts(rules)
    for step in steps:
        a, b = step["from"], step["to"]
        shown = by_step.get((a, b), [])
        if put.skip(pair_file(a, b), pagekeys.key(pair_file(a, b), step, shown, digests.get(a), digests.get(b))):
            continue
        rows = _pair_rows(shown, lambda rid, a=a: texts.get((a, rid)), lambda rid, b=b: texts.get((b, rid)))
        title_of = lambda n, a=a, b=b: (texts.get((b, n)) or texts.get((a, n)) or {}).get("title")  # noqa: E731
        page(pair_file(a, b), "pair.html", step=step, classes=CLASSES, hidden=HIDDEN_BY_DEFAULT,
             rows=rows, chapters=_chapters(rows, title_of))


def _lineage_pages(page, put, lineages, env: Environment) -> list:
    """A page per lineage, keyed by what `_lineage_inputs` gives and by the names of the sources it
    links to; returns the search index's entries (of every lineage, rendered or not)."""
    names, with_pages = env.globals["source_names"], env.globals["source_pages"]
    index = []
    for inputs in lineages:  # one at a time: bounded memory
        name = lineage_file(inputs["id"])
        cited = sorted({s for both in {r["source"] for r in inputs["records"]} for s in both.split(";")} |
                       {n["source"].split(";")[0] for n in inputs["notes"]})
        sources = [(s, names.get(s), s in with_pages) for s in cited]
        if not put.skip(name, pagekeys.key(name, inputs, sources)):
            page(name, "lineage.html", lineage=_lineage(inputs))
        index.append(_index_entry(inputs["id"], inputs["records"]))
    return index


def _source_pages(page, put, texts: dict[str, CleanDoc], remapper, names: dict[str, dict]) -> None:
    """A page per source with each of its lines; keyed by its text, what was discarded of it, its
    name and address, and (commentary) the rule numbers its citations have now."""
    for source_id, doc in sorted(texts.items()):
        name = f"sources/{source_id}.html"
        now = _numbers_now(doc, remapper)
        discards = [(d.line, d.reason) for d in doc.discards]
        if put.skip(name, pagekeys.key(name, doc.source.text, doc.source.format, discards, doc.source.url,
                                       names.get(source_id, {}), now)):
            continue
        lines = _lines(doc)
        for line in lines:
            line["now"] = now.get(line["no"], "")
        page(name, "source.html", source_id=source_id, lines_html=_lines_html(lines), url=doc.source.url,
             names=names.get(source_id, {}))


def _numbers_now(doc: CleanDoc, remapper) -> dict[int, str]:
    """{line number: the numbers now of the rules it cites} for a dated commentary source's lines."""
    if doc.source.kind != "commentary" or not doc.edition:
        return {}
    lines = LINE_BREAK.split(doc.source.text)
    return {i: "; ".join(cite.line_notes(remapper, line, doc.edition)) for i, line in enumerate(lines, 1)
            if "CR" in line}


def _reader_pages(page, put, grouped: dict[str, list[dict]], digests: dict[str, str], editions: list[dict],
                  env: Environment) -> None:
    """An edition page per edition (keyed by its records and its neighbours), and editions.js: the complete
    editions, the registry's set codes and the run's editions' set names (for `?as-of=`)."""
    shown = [e for e in editions if e["edition"] in grouped]
    entry_html = _entry_renderer(env.get_template("edition_entry.html"))
    for i, e in enumerate(shown):
        name = f"editions/{e['edition']}.html"
        prev, next_ = shown[i - 1]["edition"] if i else "", shown[i + 1]["edition"] if i + 1 < len(shown) else ""
        if put.skip(name, pagekeys.key(name, e, prev, next_, digests[e["edition"]])):
            continue
        context = reader.edition_page(e, grouped[e["edition"]], lineage_file)
        first_glossary = next((x["id"] for x in context["entries"] if x["kind"] == "glossary"), None)
        body = Markup("").join(entry_html(x, x["id"] == first_glossary) for x in context["entries"])
        page(name, "edition.html", prev=prev, next=next_, body=body, **context)
    complete = [e["edition"] for e in editions if e["status"] == "complete"]
    sets = {s.set_code: [s.effective, s.set_name] for s in registry.entries()}
    labels = {e["edition"]: f"{e['set_code']}, {e['set_name']}" for e in editions if e["set_code"]}
    put("editions.js", "window.CR_EDITIONS = " + json.dumps(complete) + ";\nwindow.CR_SETS = " +
        json.dumps(sets, ensure_ascii=False, sort_keys=True) + ";\nwindow.CR_LABELS = " +
        json.dumps(labels, ensure_ascii=False, sort_keys=True) + ";\n")


def _number_pages(page, put, grouped: dict[str, list[dict]], remapper) -> None:
    """A page per rule number that ever existed (rulepages), keyed by all it shows."""
    words = {(r["edition"], r["rule_id"]): r["text"] or r["title"] for records in grouped.values() for r in records
             if r["kind"] not in cite.UNNUMBERED}
    for rule in rulepages.pages(remapper, lambda edition, number: words.get((edition, number), "")):
        name = f"rules/{rule['number']}.html"
        if not put.skip(name, pagekeys.key(name, rule)):
            page(name, "rule.html", rule=rule)


def _writer(reports: Path, written: list[Path]):
    """put(name, data) writes a file of the reports; into a run's staging folder, only when the
    published one differs: an identical page is left in place (publish.keep lists it), so a run
    that changes a few pages rewrites only those. `put.skip(name, key)` records a page's key and
    says whether the page can be left in place without even rendering it (pagekeys). `put.finish()`
    writes the keys and records what was kept."""
    published = reports.parent if reports.name == publish.STAGING else None
    listed, previous = pagekeys.published(published) if published is not None else ({}, {})
    kept: dict[str, list] = {}
    keys: dict[str, str] = {}

    def put(name: str, data: str | bytes) -> None:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if published is not None and publish.same(published / name, raw):
            kept[name] = [len(raw), hashlib.sha256(raw).hexdigest()]
        else:
            write_if_changed(reports / name, raw)
        written.append(reports / name)

    def skip(name: str, key: str) -> bool:
        keys[name] = key
        if previous.get(name) != key or not publish.still_listed(published / name, listed.get(name)):
            return False
        kept[name] = listed[name]
        written.append(reports / name)
        return True

    def finish() -> None:
        put(pagekeys.FILE, pagekeys.encode(keys))
        if kept:
            publish.keep(reports, kept)

    put.skip, put.finish = skip, finish
    return put


def _entry_renderer(template):
    """An edition page's entry as HTML, rendered once per distinct entry: most rules read the same,
    with the same links, in edition after edition."""
    done: dict[tuple, Markup] = {}

    def entry_html(entry: dict, first_glossary: bool) -> Markup:
        key = (first_glossary, entry["id"], entry["number"], entry["kind"], entry["title"], entry["html"],
               entry["history"], tuple((x["id"], x["html"]) for x in entry["examples"]))
        if key not in done:
            done[key] = Markup(template.render(e=entry, first_glossary=first_glossary, root="../"))
        return done[key]
    return entry_html


def _datasets(processed: Path, reports: Path) -> list[dict]:
    """Links to the published tables, relative to the published reports (both may be staging
    folders while a run writes them: the links are to where they will be)."""
    final = lambda p: p.parent if p.name == publish.STAGING else p  # noqa: E731
    base = Path(os.path.relpath(final(processed).resolve(), final(reports).resolve())).as_posix()
    names = ["datapackage.json", "README.md", "crdiff.sqlite"] + [f"{n}.{ext}" for ext in ("csv", "parquet")
                                                                   for n in DATASETS]
    names += [f"{jsonout.FOLDER}/{name}" for name in jsonout.FILES]
    return [{"name": n, "href": f"{base}/{n}"} for n in names if (processed / n).exists()]


def _remove_stale(reports: Path, written: set[Path]) -> None:
    """Pages an earlier run wrote that this one did not (a lineage that no longer exists); a page folder
    that is a symbolic link is refused, never emptied (publish.confined)."""
    for sub in ("pairs", "lineage", "sources", "editions", "rules"):
        pages = publish.confined(reports, sub)
        for path in pages.glob("*.html") if pages.is_dir() else ():
            if path not in written:
                path.unlink()


def _editions(frame: pd.DataFrame) -> list[dict]:
    out = frame.to_dict(orient="records")
    for e in out:
        e["numbered"] = sum(int(e[k]) for k in ("parts", "chapters", "sections", "rules", "subrules", "rulings"))
    return out


def _steps(changes: pd.DataFrame, runs: pd.DataFrame) -> list[dict]:
    out = []
    for (a, b), group in changes.groupby(["from_edition", "to_edition"], sort=True):
        counts = Counter(group["change"])
        out.append({"from": a, "to": b, "counts": {c: counts.get(c, 0) for c in CLASSES},
                    "changed": sum(counts.get(c, 0) for c in feed.SUBSTANTIVE),
                    "renumbered": int(group["renumbered"].sum()),
                    "review": int(group["review"].sum()),
                    "runs": runs[(runs.from_edition == a) & (runs.to_edition == b)].to_dict(orient="records")})
    return out


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


def _lineage_inputs(rules: list[dict], changes: pd.DataFrame, citations: pd.DataFrame, current: str = "",
                    now=lambda lineage, edition: "", observations: pd.DataFrame | None = None,
                    standing: set[str] = frozenset()):
    """Everything a lineage's page shows, one lineage at a time: its records by edition, the change that
    reached each (or, for a copy's record, what it shows of the edition it observes), how it ended, the
    commentary citing it, its splits and merges, its current number."""
    worth = changes[(changes.change != "unchanged") | changes.renumbered.astype(bool)]  # the rest reads "unchanged"
    by_step = {(c["lineage_id"], c["to_edition"]): c for c in worth.to_dict(orient="records")}
    for o in ([] if observations is None else observations.to_dict(orient="records")):
        by_step[(o["lineage_id"], o["edition"])] = {"change": "observed", "note": observed_note(o), "renumbered": False}
    ends = {}
    for c in changes[changes.change.isin(["removed", "merged"])].to_dict(orient="records"):
        ends.setdefault(c["lineage_id"], c)
    notes: dict[str, list[dict]] = {}
    commentary = {(r["edition"], r["rule_id"]): r for r in rules if r["kind"] == "commentary"}
    for c in citations.to_dict(orient="records"):
        if c["lineage_id"] and c["cited_by"] == "CR":
            note = commentary.get((c["edition"], c["rule_id"]))
            if note and all(n["rule_id"] != note["rule_id"] for n in notes.get(c["lineage_id"], [])):
                notes.setdefault(c["lineage_id"], []).append({**note, "cited": c["value"], "linked_by": c["linked_by"],
                                                               "now": now(c["lineage_id"], c["edition"]),
                                                               "examples": note["examples"]})
    groups: dict[str, list[dict]] = {}
    for r in rules:
        if r["lineage_id"]:
            groups.setdefault(r["lineage_id"], []).append(r)
    relations = _relations(rules, changes)
    for lineage in sorted(groups):
        records = sorted(groups[lineage], key=lambda r: r["edition"])
        last = records[-1]
        yield {"id": lineage, "records": records, "steps": [by_step.get((lineage, r["edition"])) for r in records],
               "copies": [r["edition"] in standing for r in records],
               "end": ends.get(lineage), "notes": notes.get(lineage, []), "relations": relations.get(lineage, []),
               "current": (last["rule_id"] if last["edition"] == current
                           and last["kind"] not in ("glossary", "commentary") else "")}


def _lineage(inputs: dict) -> dict:
    """A lineage's page: its versions with their redlines, runs of unchanged versions collapsed."""
    versions, previous = [], None
    for r, step, copy in zip(inputs["records"], inputs["steps"], inputs["copies"]):
        change = step["change"] if step else ("first" if previous is None else "unchanged")
        # a copy's text, shown whole; the next version is compared with the last official one
        observed = change == "observed"
        if previous is None or observed:
            parts = redline.parts(r, r, {}, segments)
        else:  # an unchanged version is one line of a run, without its text (_collapse)
            parts = redline.parts(previous, r, step, segments) if step else []
        since = None if observed else previous
        versions.append({**r, "change": change, "note": step["note"] if step else "",
                         "renumbered": bool(step) and bool(step["renumbered"]),
                         "parts": parts, "from_edition": since["edition"] if since is not None else "",
                         "from_rule_id": since["rule_id"] if since is not None else "",
                         "anchor": reader.anchor(r["rule_id"], r["kind"]), "examples": r["examples"],
                         "citations": r["citations"], "flags": r["rule_flags"],
                         "source_ids": r["source"].split(";"), "unofficial": copy})
        if not observed:
            previous = r
    return {"id": inputs["id"], "versions": versions, "end": inputs["end"], "rows": _collapse(versions),
            "current": inputs["current"], "numbers": list(dict.fromkeys(v["rule_id"] for v in versions)),
            "kind": versions[-1]["kind"], "notes": inputs["notes"], "relations": inputs["relations"]}


def _collapse(versions: list[dict]) -> list[dict]:
    """Runs of unchanged versions (same words, same number) become one line each."""
    rows: list[dict] = []
    for v in versions:
        if v["change"] == "unchanged" and not v["renumbered"]:
            if rows and "run" in rows[-1]:
                rows[-1]["run"].append(v)
            else:
                rows.append({"run": [v]})
        else:
            rows.append({"version": v})
    return rows


def _relations(rules: list[dict], changes: pd.DataFrame) -> dict[str, list[dict]]:
    """Splits and merges seen from each lineage involved: where a rule came from, which pieces were
    cut from it, which ended rules it took in. Each entry links to the other lineage."""
    lineage_of = {(r["edition"], r["rule_id"]): r["lineage_id"] for r in rules if r["kind"] != "commentary"}
    out: dict[str, list[dict]] = {}
    moved = changes[changes.change.isin(["split", "merged"])].to_dict(orient="records")
    for c in moved:
        old = lineage_of.get((c["from_edition"], c["old_rule_id"]), "")
        new = lineage_of.get((c["to_edition"], c["new_rule_id"]), "")
        if c["change"] == "split":
            out.setdefault(c["lineage_id"], []).append(
                _relation("split from", c["old_rule_id"], c["from_edition"], old))
            out.setdefault(old, []).append(_relation("piece split off into", c["new_rule_id"], c["to_edition"], new))
        else:
            out.setdefault(new, []).append(_relation("took in", c["old_rule_id"], c["from_edition"], old))
    return out


def _relation(how: str, rule_id: str, edition: str, lineage: str) -> dict:
    return {"how": how, "rule_id": rule_id, "edition": edition, "href": lineage_file(lineage) if lineage else ""}


def _index_entry(lineage_id: str, records: list[dict]) -> list:
    last = records[-1]
    return [lineage_file(lineage_id), "\t".join(dict.fromkeys(r["rule_id"] for r in records)), last["kind"],
            records[0]["edition"], last["edition"], last["text"] or last["title"]]


def _source_names(sources: pd.DataFrame) -> dict[str, dict]:
    """A readable name per source id, with what it is (kind, format, edition): its file name, or,
    when that is only a content hash (000_3c08dd261a4ed4b0.txt), what it is and when."""
    out, seen = {}, Counter()
    for s in sorted(sources.to_dict(orient="records"), key=lambda s: s["source_id"]):
        when = s["edition"] + (f"..{s['edition_end']}" if s["edition_end"] else "") if s["edition"] else "undated"
        what = " · ".join(x for x in (s["kind"], s["format"], when) if x)
        name = Path(s["path"]).name
        if HASHED.fullmatch(Path(name).stem):
            name = f"{(s['kind'] or 'source').capitalize()}, {when}"
            seen[name] += 1
            name += f" ({seen[name]})" if seen[name] > 1 else ""
        out.setdefault(s["source_id"], {"file": name, "what": what})
    return out


def _sources(sources: pd.DataFrame, discards: pd.DataFrame) -> list[dict]:
    out = sources.to_dict(orient="records")
    for s in out:
        s["discards"] = discards[discards["source_id"] == s["source_id"]].to_dict(orient="records")
    return out


def _lines(doc: CleanDoc) -> list[dict]:
    """Each line of a source with what became of it: kept, or the reasons it was discarded."""
    reasons: dict[int, set[str]] = {}
    for d in doc.discards:
        if d.reason not in ("line breaks", "indentation and trailing spaces") and d.line:
            reasons.setdefault(d.line, set()).add(d.reason)
    lines = LINE_BREAK.split(doc.source.text)
    out = [{"no": i, "text": line, "why": ", ".join(sorted(reasons.get(i, ()))), "label": "", "now": ""}
           for i, line in enumerate(lines, 1)]
    if doc.source.format == "pdf":  # a PDF's lines are also shown as page:line (a form feed ends each page)
        page, first = 1, 1
        for row in out:
            row["label"] = f"{page}:{row['no'] - first + 1}"
            if row["text"] == "\f":
                page, first = page + 1, row["no"] + 1
    return out


@lru_cache(maxsize=1 << 16)  # most lines repeat from edition to edition
def _escaped(text: str) -> str:
    return str(escape(text))


def _lines_html(lines: list[dict]) -> Markup:
    """A source page's lines, each with its anchor, number and what became of it, as HTML built here
    rather than in a template loop: the simulated archive's sources have 7.6 million lines, and the
    loop was two fifths of the report stage. Every text is escaped."""
    out = []
    for line in lines:
        no, why, now = line["no"], _escaped(line["why"]), line["now"]
        out.append(f'<span id="L{no}" class="line dropped" title="{why}">' if why
                   else f'<span id="L{no}" class="line">')
        out.append(f'<a class="no" href="#L{no}">{_escaped(line["label"]) or no}</a>{_escaped(line["text"])}')
        if why:
            out.append(f'<span class="why">{why}</span>')
        if now:
            out.append(f'<span class="now">{_escaped(now)}</span>')
        out.append("</span>\n")
    return Markup("".join(out))


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


def render_comparison(changes, old_rules, new_rules, reports: Path, name: str) -> Path:
    """A pair page for any two editions or files (`compare A B --report`), outside the run's pages."""
    olds = {r.rule_id: {"text": r.text, "title": r.title, "examples": list(r.examples)} for r in old_rules}
    news = {r.rule_id: {"text": r.text, "title": r.title, "examples": list(r.examples)} for r in new_rules}
    counts = Counter(c.change for c in changes)
    step = {"from": name.split("_")[0], "to": name.split("_")[-1], "counts": {c: counts.get(c, 0) for c in CLASSES},
            "renumbered": sum(c.renumbered for c in changes), "review": sum(c.review for c in changes), "runs": []}
    shown = [{"old_rule_id": c.old_rule_id, "new_rule_id": c.new_rule_id, "change": c.change,
              "renumbered": c.renumbered, "review": c.review, "similarity": c.similarity,
              "ops": [list(op) for op in c.ops], "title_ops": [list(op) for op in c.title_ops],
              "example_ops": [[list(op) for op in e] for e in c.example_ops], "lineage_id": "",
              "note": c.note}
             for c in changes if c.change != "unchanged" or c.renumbered]
    rows = _pair_rows(shown, olds.get, news.get)
    title_of = lambda n: (news.get(n) or olds.get(n) or {}).get("title")  # noqa: E731
    html = environment().get_template("pair.html").render(root="../", step=step, classes=CLASSES,
                                                          hidden=HIDDEN_BY_DEFAULT,
                                                          rows=rows, chapters=_chapters(rows, title_of))
    path = reports / "compare" / f"{name}.html"
    write_atomic(path, html)
    for static in STATIC:
        write_if_changed(reports / static, (Path(__file__).parent / "templates" / static).read_bytes())
    return path
