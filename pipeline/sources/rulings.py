"""The rulings-search page (rule 212 with [CompRules date] tags): as rendered text, or as HTML."""
from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from pipeline.clean import Ledger, unwrap
from pipeline.patterns import EXAMPLE_START, NUMBERED_START, RULINGS_BANNER, TABLE_RESIDUE
from pipeline.records import CleanDoc, SourceDoc

CELL_GAP = "  "  # how the text rendering separates table cells


def clean_text(doc: SourceDoc) -> CleanDoc:
    return _clean(doc, Ledger(doc.text))


def clean_html(doc: SourceDoc) -> CleanDoc:
    text, headers = render_table(doc.text)
    return _clean(doc, Ledger(text), html_chars=len(doc.text), header_lines=headers)


def render_table(html: str) -> tuple[str, set[int]]:
    """The page's rules table as text, one line per <br>-separated line, cells side by side.

    The page puts the *next* section's heading in the cell beside the current section's rules;
    the text keeps that order, because segmentation places rules by number, not by position.
    Returns the text and the (1-based) numbers of the lines that came from header rows.
    """
    soup = BeautifulSoup(html, "html.parser")
    tables = soup.find_all("table")
    if not tables:
        return soup.get_text(), set()
    table = max(tables, key=lambda t: len(t.find_all("tr")))
    lines: list[str] = []
    headers: set[int] = set()
    for tr in table.find_all("tr"):
        cells = [_cell_text(c).split("\n") for c in tr.find_all(["td", "th"])] or [[""]]
        row = [CELL_GAP.join(cell[0] for cell in cells)] + [line for cell in cells for line in cell[1:]]
        if not tr.find("td"):
            headers.update(range(len(lines) + 1, len(lines) + len(row) + 1))
        lines += row
    return "\n".join(lines), headers


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
