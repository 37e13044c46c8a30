"""The sources audit's page models: a readable name per source, what was discarded of each, and a page
per source with each of its lines and what became of it."""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape

from pipeline.ingest.clean import LINE_BREAK
from pipeline.query import cite
from pipeline.records import CleanDoc
from pipeline.report import editionpages as reader


HASHED = re.compile(r"(?:\d+_)?[0-9a-f]{12,}")  # a file named by its content hash says nothing to a reader


def _numbers_now(doc: CleanDoc, remapper) -> dict[int, str]:
    """{line number: the numbers now of the rules it cites} for a dated commentary source's lines."""
    if doc.source.kind != "commentary" or not doc.edition:
        return {}
    lines = LINE_BREAK.split(doc.source.text)
    return {i: "; ".join(cite.line_notes(remapper, line, doc.edition)) for i, line in enumerate(lines, 1)
            if "CR" in line}


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


def _sources(sources: pd.DataFrame, discards: pd.DataFrame, with_lines: set[str]) -> list[dict]:
    """Each source's row with its discarded passages (`discards`, how many) and their table's rows as HTML
    (`discards_html`): built here, not in a template loop, as the 19,600 rows of 110 simulated editions took
    the template 1.5 s on every run. A line links to the source's page when it has one (`with_lines`)."""
    by_source: dict[str, list[tuple]] = {}
    for row in zip(discards["source_id"], discards["line"], discards["reason"], discards["text"]):
        by_source.setdefault(row[0], []).append(row[1:])
    out = sources.to_dict(orient="records")
    for s in out:
        rows = by_source.get(s["source_id"], [])
        s["discards"] = len(rows)
        s["discards_html"] = _discards_html(s["source_id"], rows, s["source_id"] in with_lines)
    return out


def _discards_html(source_id: str, rows: list[tuple], linked: bool) -> Markup:
    """A source's discarded passages as table rows (no optional end tag: </td>, </tr>), each line a link to
    the line on the source's page (the address bare when it can be)."""
    page = "sources/" + _urlencode(source_id) + ".html#L"
    out = []
    for line, reason, text in rows:
        number = str(line)
        cell = f"<a href={reader.bare(page + number)}>{number}</a>" if linked else number
        out.append(f"<tr><td class=n>{cell}<td>{escape(reason)}<td><pre>{escape(text)}</pre>")
    return Markup("".join(out))


def _urlencode(value: str) -> str:
    """As the templates' urlencode filter writes a source id into an address."""
    from jinja2.filters import do_urlencode
    return do_urlencode(value)


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


@lru_cache(maxsize=1 << 16)
def _content(text: str) -> str:
    return str(reader.content(text))


def _lines_html(lines: list[dict], printed: dict[int, list[tuple[str, tuple[str, ...]]]] | None = None) -> Markup:
    """A source page's lines, each with its anchor and what became of it, as HTML built here rather than
    in a template loop: the simulated archive's sources have 7.6 million lines, and the loop was two fifths
    of the report stage. A line's number is not written: style.css counts the lines (a PDF's page:line
    label is written, as data-n), app.js makes the number a link to the line. Every text is escaped.

    `printed` ({line: [(anchor, forms)]}, editionpages.printed_lines) says what its edition page shows of
    each line: a line the page shows word for word is written as how it begins (its number as printed,
    "103.4." or "Example:"), a link to it on the edition page (the page's <base>), and style.css adds " …":
    each edition's text is in reports/ once, not twice (it was 80 MB of 245 on 110 editions). A blank line
    is its anchor alone, <a id=L2></a>: 271,000 of the 7.6 million lines of 110 simulated editions. No newline
    between the lines: each is a block of its own (style.css), and 680,000 newlines were 0.7 MB."""
    printed = printed or {}
    out = []
    for line in lines:
        no, text, why, now, label = line["no"], line["text"], line["why"], line["now"], line["label"]
        n = f' data-n="{_escaped(label)}"' if label else ""
        if why or now:
            out.append(f"<span id=L{no}{n}" + (' class="dropped">' if why else ">") + _content(text) +
                       (f'<span class="why">{_escaped(why)}</span>' if why else "") +
                       (f'<span class="now">{_content(now)}</span>' if now else "") + "</span>")
        elif not text:
            out.append(f"<a id=L{no}{n}></a>")
        else:
            anchor = next((a for a, forms in printed[no] if text in forms), None) if no in printed else None
            if anchor:
                out.append(f'<a id=L{no}{n} href={reader.bare("#" + anchor)}>{_content(text.split(" ", 1)[0])}</a>')
            else:
                out.append(f"<span id=L{no}{n}>{_content(text)}</span>")
    return Markup("".join(out))
