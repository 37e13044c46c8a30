"""HTML reports, rendered from processed/ with jinja2 (autoescape on, StrictUndefined).

Pages: index (timeline, steps, search), one per pair of editions, one per lineage, one per edition,
one per rule number that ever existed, sources audit (with each source's lines), terminology; and the Atom
feed, feed.xml (pipeline/report/feed.py). Static files only: the script, stylesheet and
search index are written into reports/ too, so everything opens from the file system.

This module loads the tables and renders every page in turn; the page models are modules of their
own (pairpages, lineagepages, sourcepages, editionpages, rulepages, charts for the index's timeline
and the terminology page), links says where each page lives, writer writes only what changed.
"""
from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow as pa
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from pipeline import registry
from pipeline.query import cite
from pipeline.report import feed
from pipeline.publish import jsonout
from pipeline.publish import load, parquet, remap, unchanged
from pipeline.report import pagekeys
from pipeline.publish import transaction as publish
from pipeline.report import editionpages as reader
from pipeline.report import rulepages
from pipeline.schema import BY_NAME
from pipeline.records import CHANGES, CleanDoc
from pipeline.atomic import write_atomic, write_if_changed
from pipeline.report.links import lineage_file, pair_file
from pipeline.report.writer import Writer, _remove_stale
from pipeline.report.charts import _terminology, _timeline
from pipeline.report.pairpages import HIDDEN_BY_DEFAULT, _changes_by_step, _chapters, _pair_rows, _texts
from pipeline.report.lineagepages import _index_entry, _lineage, _lineage_inputs, open_tail
from pipeline.report.sourcepages import _lines, _lines_html, _numbers_now, _source_names, _sources

NEEDED = ("editions", "sources", "discards", "rules", "changes", "citations", "terminology", "renumberings",
          "observations")
STATIC = ("style.css", "app.js")
DATASETS = ("rules", "changes", "lineages", "editions", "glossary", "references", "citations", "terminology",
            "renumberings", "sources", "discards", "texts")


def environment() -> Environment:
    env = Environment(loader=PackageLoader("pipeline.report", "templates"), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["lineage_href"] = lineage_file
    env.filters["pair_href"] = pair_file
    env.filters["prose"] = reader.plain
    env.filters["change_anchor"] = reader.change_anchor
    env.filters["bare"] = reader.bare
    env.filters["text"] = reader.content  # only & < > escaped: a quote is a quote in an element's content
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    env.globals["source_pages"] = set()
    env.globals["source_names"] = {}
    env.globals["run_id"] = ""
    return env


RULE_COLUMNS = ["edition", "source", "rule_id", "kind", "lineage_id", "title", "text", "examples", "citations",
                "rule_flags", "line_start", "line_end"]  # what the pages show of the rules table


def _rows(processed: Path, name: str) -> list[dict]:
    """A table's rows as the typed loader gives them (booleans, lists, numbers as they were
    exported); the caller has checked the run (verify), or holds its staging folder."""
    if not (processed / f"{name}.parquet").exists():
        raise publish.missing(processed, f"{name}.parquet")
    return load.rows(processed, name, check=False)


def _rules(processed: Path) -> tuple[list[dict], dict[str, str]]:
    """The rules' rows the pages show (RULE_COLUMNS, as the typed loader gives them: load.rows), and per
    edition a digest of its rows, in order (pagekeys.rows_digest of its run of rows: rules.parquet is in edition
    order). A page's key that holds an edition's digest changes whenever any value of its rows does."""
    if not (processed / "rules.parquet").exists():
        raise publish.missing(processed, "rules.parquet")
    table = load.read(processed, "rules", columns=RULE_COLUMNS, check=False)
    data = load.columns(table)
    rows = [dict(zip(RULE_COLUMNS, values))
            for values in zip(*(_once(parquet.python("rules", n, data[n])) for n in RULE_COLUMNS))]
    spans: dict[str, list[tuple[int, int]]] = {}
    start = 0
    for edition, run in itertools.groupby(data["edition"]):
        count = sum(1 for _ in run)
        spans.setdefault(edition, []).append((start, count))
        start += count
    return rows, {edition: pagekeys.rows_digest(pa.concat_tables([table.slice(*span) for span in runs]))
                  for edition, runs in spans.items()}


def _once(values: list) -> list:
    """A column's values with each repeated text one object, and every empty list one list (never changed): an
    edition, a source, a kind or a wording recurs in thousands of rows, each read back as its own object."""
    seen: dict = {}
    empty: list = []
    return [seen.setdefault(v, v) if isinstance(v, str) else (empty if v == [] else v) for v in values]


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
    put = Writer(reports, written)

    def page(name: str, template: str, **context) -> None:
        depth = name.count("/")
        put(name, env.get_template(template).render(root="../" * depth, **context))

    rules, digests = _rules(processed)  # digests: each edition's rows, shared by many keys
    editions = _editions(data["editions"])
    names = _source_names(data["sources"])
    env.globals["source_names"] = names  # sources are shown by name wherever they are named
    steps = _steps(data["changes"], data["renumberings"], _left_out(rules, data["changes"], data["editions"]))
    used = int((data["sources"]["rejection"] == "").sum())
    page("index.html", "index.html", editions=editions, steps=steps, classes=CHANGES,
         timeline=_timeline(editions, steps), sources=used, unused=len(data["sources"]) - used, names=names,
         datasets=_datasets(processed, reports))
    grouped = reader.by_edition(rules)
    placed = _Placed(grouped)
    by_step = _changes_by_step(data["changes"])
    _pair_pages(page, put, steps, rules, by_step, digests)
    put("feed.xml", feed.render(editions, steps, by_step, pair_file, reader.change_anchor))
    complete = [e["edition"] for e in editions if e["status"] == "complete"]
    remapper = remap.from_tables(rules, data["changes"], data["editions"])  # commentary shows the numbers now
    lineages = _lineage_inputs(rules, data["changes"], data["citations"], complete[-1] if complete else "",
                               lambda lineage, edition: cite.now(remapper, lineage, edition), data["observations"],
                               {e["edition"] for e in editions if e["status"] == "fragment"})
    at = {id(r): (digests[edition], i) for edition, records in grouped.items() for i, r in enumerate(records)}
    index = _lineage_pages(page, put, (progress or iter)(lineages), env, complete, at)
    _reader_pages(page, put, grouped, placed, digests, editions, env)
    _number_pages(page, put, grouped, remapper)
    del rules
    texts = {d.source.source_id: d for d in docs or ()}
    sources = _sources(data["sources"], data["discards"], set(texts))
    page("sources.html", "sources.html", sources=sources, with_lines=set(texts), names=names)
    _source_pages(page, put, texts, remapper, names, grouped, placed, digests)
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
        page(pair_file(a, b), "pair.html", step=step, classes=CHANGES, hidden=HIDDEN_BY_DEFAULT,
             rows=rows, chapters=_chapters(rows, title_of))


def _lineage_pages(page, put, lineages, env: Environment, complete: list[str], at: dict[int, tuple[str, int]]) -> list:
    """A page per lineage, keyed by what `_lineage_inputs` gives, cut where it goes on unchanged into the
    latest edition (`open_tail`), and by the names of the sources it links to; returns the search index's
    entries (of every lineage, rendered or not). A record is in the key by where it is (`at`: its edition's
    digest and its place among the edition's rows), which says all it holds, at a fraction of hashing it."""
    names, with_pages = env.globals["source_names"], env.globals["source_pages"]
    index = []
    for whole in lineages:  # one at a time: bounded memory
        index.append(_index_entry(whole["id"], whole["records"]))
        inputs = open_tail(whole, complete)
        name = lineage_file(inputs["id"])
        cited = sorted({s for both in {r["source"] for r in inputs["records"]} for s in both.split(";")} |
                       {n["source"].split(";")[0] for n in inputs["notes"]})
        sources = [(s, names.get(s), s in with_pages) for s in cited]
        where = [at[id(r)] for r in inputs["records"]]
        if not put.skip(name, pagekeys.key(name, {**inputs, "records": where}, sources)):
            page(name, "lineage.html", lineage=_lineage(inputs))
    return index


def _source_pages(page, put, texts: dict[str, CleanDoc], remapper, names: dict[str, dict],
                  grouped: dict[str, list[dict]], placed, digests: dict[str, str]) -> None:
    """A page per source with each of its lines; keyed by its text, what was discarded of it, its
    name and address, (commentary) the rule numbers its citations have now, and the records of its
    edition's page, which shows the lines that became rules (editionpages.printed_lines)."""
    for source_id, doc in sorted(texts.items()):
        name = f"sources/{source_id}.html"
        now = _numbers_now(doc, remapper)
        discards = [(d.line, d.reason) for d in doc.discards]
        edition = doc.edition if doc.edition in grouped else ""
        if put.skip(name, pagekeys.key(name, doc.source.text, doc.source.format, discards, doc.source.url,
                                       names.get(source_id, {}), now, edition, digests.get(edition))):
            continue
        printed = reader.printed_lines(grouped[edition], placed[edition]).get(source_id, {}) if edition else {}
        lines = _lines(doc)
        for line in lines:
            line["now"] = now.get(line["no"], "")
        page(name, "source.html", source_id=source_id, lines_html=_lines_html(lines, printed), url=doc.source.url,
             names=names.get(source_id, {}), edition=edition if printed else "")


def _reader_pages(page, put, grouped: dict[str, list[dict]], placed, digests: dict[str, str], editions: list[dict],
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
        context = reader.edition_page(e, grouped[e["edition"]], lineage_file, placed[e["edition"]])
        page(name, "edition.html", prev=prev, next=next_, body=_body(context["entries"], entry_html), **context)
    complete = [e["edition"] for e in editions if e["status"] == "complete"]
    sets = {s.set_code: [s.effective, s.set_name] for s in registry.entries()}
    labels = {e["edition"]: f"{e['set_code']}, {e['set_name']}" for e in editions if e["set_code"]}
    put("editions.js", "window.CR_EDITIONS = " + json.dumps(complete) + ";\nwindow.CR_SETS = " +
        json.dumps(sets, ensure_ascii=False, sort_keys=True) + ";\nwindow.CR_LABELS = " +
        json.dumps(labels, ensure_ascii=False, sort_keys=True) + ";\n")


def _number_pages(page, put, grouped: dict[str, list[dict]], remapper) -> None:
    """A page per rule number that ever existed (rulepages), keyed by all it shows."""
    words = {(r["edition"], r["rule_id"]): r["text"] or r["title"] for records in grouped.values() for r in records
             if r["kind"] not in remap.UNNUMBERED}
    for rule in rulepages.pages(remapper, lambda edition, number: words.get((edition, number), "")):
        name = f"rules/{rule['number']}.html"
        if not put.skip(name, pagekeys.key(name, rule)):
            page(name, "rule.html", rule=rule)


class _Placed(dict):
    """Each edition's records in print order with their anchors (editionpages.anchored), sorted once when first
    asked for: its page and its source's page both need them (sorting each edition twice was 1.5 s of a cold
    report of 110 simulated editions, profiled)."""

    def __init__(self, grouped: dict[str, list[dict]]):
        super().__init__()
        self.grouped = grouped

    def __missing__(self, edition: str) -> list[tuple[dict, str]]:
        self[edition] = list(reader.anchored(self.grouped[edition]))
        return self[edition]


def _body(entries: list[dict], entry_html) -> Markup:
    """An edition page's entries, the glossary's first term opening its one <dl> and its last closing it (the
    terms are one run in print order)."""
    terms = [x["id"] for x in entries if x["kind"] == "glossary"]
    first, last = (terms[0], terms[-1]) if terms else (None, None)
    return Markup("").join(entry_html(x, x["id"] == first, x["id"] == last) for x in entries)


def _entry_renderer(template):
    """An edition page's entry as HTML, rendered once per distinct entry: most rules read the same,
    with the same links, in edition after edition."""
    done: dict[tuple, Markup] = {}

    def entry_html(entry: dict, first_glossary: bool, last_glossary: bool) -> Markup:
        key = (first_glossary, last_glossary, entry["id"], entry["number"], entry["kind"], entry["title"],
               entry["html"], entry["history"], tuple((x["id"], x["html"]) for x in entry["examples"]))
        if key not in done:
            done[key] = Markup(template.render(e=entry, edge={"first": first_glossary, "last": last_glossary},
                                                 root="../"))
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


def _editions(frame: pd.DataFrame) -> list[dict]:
    out = frame.to_dict(orient="records")
    for e in out:
        e["numbered"] = sum(int(e[k]) for k in ("parts", "chapters", "sections", "rules", "subrules", "rulings"))
    return out


def _left_out(rules: list[dict], changes: pd.DataFrame, editions: pd.DataFrame) -> Counter:
    """How many plain unchanged rules each step has: the change table leaves them out (publish/unchanged.py)."""
    rows = unchanged.continuations(((r["edition"], r["kind"], r["rule_id"], r["lineage_id"], 0) for r in rules),
                                   dict(zip(editions["edition"], editions["status"])),
                                   set(zip(changes["lineage_id"], changes["to_edition"])))
    return Counter((a, b) for a, b, *_ in rows)


def _steps(changes: pd.DataFrame, runs: pd.DataFrame, left_out: Counter) -> list[dict]:
    """Each step with its counts by class (`left_out`: its plain unchanged rules, which have no row)."""
    groups = dict(iter(changes.groupby(["from_edition", "to_edition"], sort=True)))
    out = []
    for a, b in sorted(set(groups) | set(left_out)):
        group = groups.get((a, b), changes.iloc[:0])
        counts = Counter(group["change"])
        counts["unchanged"] += left_out[a, b]
        out.append({"from": a, "to": b, "counts": {c: counts.get(c, 0) for c in CHANGES},
                    "changed": sum(counts.get(c, 0) for c in feed.SUBSTANTIVE),
                    "renumbered": int(group["renumbered"].sum()),
                    "review": int(group["review"].sum()),
                    "runs": runs[(runs.from_edition == a) & (runs.to_edition == b)].to_dict(orient="records")})
    return out


def render_comparison(changes, old_rules, new_rules, reports: Path, name: str) -> Path:
    """A pair page for any two editions or files (`compare A B --report`), outside the run's pages."""
    olds = {r.rule_id: {"text": r.text, "title": r.title, "examples": list(r.examples)} for r in old_rules}
    news = {r.rule_id: {"text": r.text, "title": r.title, "examples": list(r.examples)} for r in new_rules}
    counts = Counter(c.change for c in changes)
    step = {"from": name.split("_")[0], "to": name.split("_")[-1], "counts": {c: counts.get(c, 0) for c in CHANGES},
            "renumbered": sum(c.renumbered for c in changes), "review": sum(c.review for c in changes), "runs": []}
    shown = [{"old_rule_id": c.old_rule_id, "new_rule_id": c.new_rule_id, "change": c.change,
              "renumbered": c.renumbered, "review": c.review, "similarity": c.similarity,
              "ops": [list(op) for op in c.ops], "title_ops": [list(op) for op in c.title_ops],
              "example_ops": [[list(op) for op in e] for e in c.example_ops], "lineage_id": "",
              "note": c.note}
             for c in changes if c.change != "unchanged" or c.renumbered]
    rows = _pair_rows(shown, olds.get, news.get)
    title_of = lambda n: (news.get(n) or olds.get(n) or {}).get("title")  # noqa: E731
    html = environment().get_template("pair.html").render(root="../", step=step, classes=CHANGES,
                                                          hidden=HIDDEN_BY_DEFAULT,
                                                          rows=rows, chapters=_chapters(rows, title_of))
    path = reports / "compare" / f"{name}.html"
    write_atomic(path, html)
    for static in STATIC:
        write_if_changed(reports / static, (Path(__file__).parent / "templates" / static).read_bytes())
    return path
