"""PDF editions: the text layer page by page (pypdfium2), and the page furniture to drop.

The text keeps the PDF's hard line breaks; each page ends with a line holding only a form feed,
so the adapter knows where pages start (for page + line references and for running heads)."""
from __future__ import annotations

import re
from collections import Counter

from pipeline.clean import LINE_BREAK
from pipeline.errors import SourceError
from pipeline.patterns import NUMBERED_START
from pipeline.sources.official import HEADING

PAGE_BREAK = "\f"
# PDFium marks a hyphen it joined across a line end with U+FFFE ("State\ufffeBased"): the line
# break is put back, after a real hyphen, so lines are the page's lines and unwrapping keeps it.
LINE_END_HYPHEN = "\ufffe"
PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$", re.I)
EDGE = 3  # running heads and footers are among the first or last few lines of a page
REPEATS = 0.3  # ... and recur on at least this share of the pages


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        raise SourceError(f"a PDF that cannot be read ({e})", path=path) from None
    try:
        pages = [_page_text(document[i]) for i in range(len(document))]
    finally:
        document.close()
    if not any(p.strip() for p in pages):
        raise SourceError("a PDF without a text layer (scanned pages?): nothing to read", path=path)
    return "".join(p + PAGE_BREAK + "\n" for p in pages), "pdf (pypdfium2)"


def _page_text(page) -> str:
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range().replace(LINE_END_HYPHEN, "-\n")
    finally:
        textpage.close()
        page.close()
    text = LINE_BREAK.sub("\n", text)
    return text if not text or text.endswith("\n") else text + "\n"


def page_starts(lines: list[str]) -> list[int]:
    """0-based index of each page's first line."""
    return [0] + [i + 1 for i, line in enumerate(lines) if line == PAGE_BREAK][:-1]


def furniture(lines: list[str]) -> dict[int, str]:
    """Line index -> reason, for page breaks, page numbers and running heads or footers: lines at
    a page's top or bottom that recur (digits aside) on many pages. Rules never qualify."""
    pages = _pages(lines)
    out = {i: "page breaks" for i, line in enumerate(lines) if line == PAGE_BREAK}
    edges = [[i for i in page if lines[i].strip()] for page in pages]
    edges = [e[:EDGE] + e[-EDGE:] if len(e) > 2 * EDGE else e for e in edges]
    shape = {i: re.sub(r"\d+", "#", " ".join(lines[i].split())) for e in edges for i in e}
    counts = Counter(s for e in edges for s in {shape[i] for i in e})
    enough = max(3, REPEATS * len(pages))
    for e in edges:
        for i in e:
            text = lines[i].strip()
            if NUMBERED_START.match(text) or HEADING.match(text):
                continue
            if PAGE_NUMBER.match(text) and (i == e[0] or i == e[-1]):
                out[i] = "page numbers"
            elif counts[shape[i]] >= enough:
                out[i] = "running heads and footers"
    return out


def _pages(lines: list[str]) -> list[list[int]]:
    pages, current = [], []
    for i, line in enumerate(lines):
        if line == PAGE_BREAK:
            pages.append(current)
            current = []
        else:
            current.append(i)
    return pages + ([current] if current else [])
