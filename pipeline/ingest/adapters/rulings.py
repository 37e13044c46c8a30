"""The rulings-search page (rule 212 with [CompRules date] tags): as rendered text, or as HTML."""
from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from pipeline.ingest.clean import Ledger, check_size, unwrap
from pipeline.patterns import EXAMPLE_START, NUMBERED_START, RULINGS_BANNER, TABLE_RESIDUE
from pipeline.records import CleanDoc, SourceDoc

CELL_GAP = "  "  # how the text rendering separates table cells


def clean_text(doc: SourceDoc) -> CleanDoc:
    return _clean(doc, Ledger(doc.text, doc.path))


def clean_html(doc: SourceDoc) -> CleanDoc:
    check_size(doc.text, doc.path)
    text, headers = render_table(doc.text)
    return _clean(doc, Ledger(text, doc.path), html_chars=len(doc.text), header_lines=headers)


def render_table(html: str) -> tuple[str, set[int]]:
    """The page's rules table as text, one line per <br>-separated line, cells side by side.

    The page puts the *next* section's heading in the cell beside the current section's rules;
    the text keeps that order, because segmentation places rules by number, not by position.
    Returns the text and the (1-based) numbers of the lines that came from header rows.
    A table inside a cell is that cell's text: its rows are not rows of the table around it.
    """
    soup = BeautifulSoup(html, "html.parser")
    tables = soup.find_all("table")
    if not tables:
        return soup.get_text(), set()
    rows = {id(t): outermost(t, ("tr",), ("table",)) for t in tables}
    table = max(tables, key=lambda t: len(rows[id(t)]))
    lines: list[str] = []
    headers: set[int] = set()
    for tr in rows[id(table)]:
        own_cells = outermost(tr, ("td", "th"), ("table",))
        cells = [_cell_text(c).split("\n") for c in own_cells] or [[""]]
        row = [CELL_GAP.join(cell[0] for cell in cells)] + [line for cell in cells for line in cell[1:]]
        if not any(c.name == "td" for c in own_cells):
            headers.update(range(len(lines) + 1, len(lines) + len(row) + 1))
        lines += row
    return "\n".join(lines), headers


def outermost(tag: Tag, names: tuple[str, ...], closed: tuple[str, ...] = ()) -> list[Tag]:
    """The tags named `names` under `tag`, in document order, not looking inside one found or inside
    a `closed` tag (a nested table). Each tag is looked at once: nested tables cost linear time, not
    cubic (find_all walked every row's cells again for each table and row around them)."""
    found, stack = [], list(reversed(tag.contents))
    while stack:
        node = stack.pop()
        if not isinstance(node, Tag):
            continue
        if node.name in names:
            found.append(node)
        elif node.name not in closed:
            stack.extend(reversed(node.contents))
    return found


def _cell_text(cell: Tag) -> str:
    """A cell's text as the browser lays it out: <br> breaks a line, a newline in the source does not."""
    parts = []
    for node in cell.descendants:
        if isinstance(node, Tag) and node.name == "br":
            parts.append("\n")
        elif isinstance(node, NavigableString) and not isinstance(node, Comment):
            parts.append(re.sub(r"[\r\n]+", " ", str(node)))
    return "".join(parts)


def _clean(doc: SourceDoc, ledger: Ledger, html_chars: int | None = None,
           header_lines: frozenset[int] | set[int] = frozenset()) -> CleanDoc:
    warnings = []
    kept = []
    previous_blank = True
    for no, line in ledger.numbered():
        if no in header_lines:
            ledger.drop(no, line, "table header")
            continue
        if RULINGS_BANNER.match(line):
            ledger.drop(no, line, "page header/footer")
            previous_blank = True
            continue
        if not line.strip():
            ledger.drop(no, line, "blank lines")
            previous_blank = True
            continue
        if TABLE_RESIDUE.match(line):
            ledger.drop(no, line, "table residue")
            previous_blank = True
            continue
        text = ledger.keep_stripped(no, line)
        starts = previous_blank or bool(NUMBERED_START.match(text)) or bool(EXAMPLE_START.match(text))
        kept.append((no, text, starts))
        previous_blank = False
    if html_chars is not None:
        ledger.drop_markup(html_chars)
    ledger.check(doc.path)
    if not kept:
        warnings.append("no rules found on the page")
    return CleanDoc(doc, tuple(unwrap(kept)), tuple(ledger.discards), ledger.total, ledger.kept,
                    doc.edition, tuple(warnings))
