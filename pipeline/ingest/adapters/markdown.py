"""Markdown exports of the rules. Line-based on purpose: a CommonMark parser reads "205. Type Line"
as an ordered-list item numbered 205 and drops the number from the text, which is the rule id."""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from pipeline.ingest.clean import Ledger, unwrap
from pipeline.patterns import EXAMPLE_START, MD_EMPHASIS, MD_ESCAPE, MD_HEADING, MD_RULE, NUMBERED_START
from pipeline.records import CleanDoc, SourceDoc

BREADCRUMB = ("Chapter:", "Section:", "Part:")
EMPHASIS_MARKS = ("**", "__", "*", "_")  # MD_EMPHASIS's alternatives, in its order
MARK = re.compile(r"[*_]")


def clean(doc: SourceDoc) -> CleanDoc:
    ledger = Ledger(doc.text, doc.path)
    last_seen = {line.strip(): i for i, line in enumerate(ledger.lines)}  # a heading's text, further down?
    kept = []
    previous_blank = True
    for no, line in ledger.numbered():
        text = line.strip()
        heading = heading_span(text)
        if not text:
            ledger.drop(no, line, "blank lines")
            previous_blank = True
        elif MD_RULE.match(line):
            ledger.drop(no, line, "markup")
            previous_blank = True
        elif heading and last_seen.get(text[heading[0]:heading[1]], -1) >= no:
            ledger.drop(no, line, "markdown title (repeats a heading below)")
        elif _is_breadcrumb(text):
            ledger.drop(no, line, "export metadata (breadcrumb)")
        else:
            indented = line.startswith(("    ", "\t"))
            body = _unmark(ledger, no, ledger.keep_stripped(no, line))
            starts = previous_blank or indented or bool(NUMBERED_START.match(body) or EXAMPLE_START.match(body))
            kept.append((no, body, starts))
            previous_blank = False
    ledger.check(doc.path)
    return CleanDoc(doc, tuple(unwrap(kept)), tuple(ledger.discards), ledger.total, ledger.kept, doc.edition)


def heading_span(text: str) -> tuple[int, int] | None:
    """Where the title of a heading line (no \n in it) starts and ends ("## 205.1. Title ##": "205.1. Title"),
    or None when the line is no heading. The title ends before the closing #s and the spaces around them."""
    marks = MD_HEADING.match(text)
    if not marks:
        return None
    end = len(text.rstrip().rstrip("#").rstrip())
    return marks.end(), max(marks.end(), end)


def _is_breadcrumb(text: str) -> bool:
    inner = MD_EMPHASIS.fullmatch(text)
    return bool(inner) and inner.group(2).startswith(BREADCRUMB)


def _unmark(ledger: Ledger, no: int, text: str) -> str:
    """Remove heading marks, emphasis and escapes from a kept line; the marks are charged as markup."""
    heading = heading_span(text)
    if heading:
        start, end = heading
        ledger.drop(no, text[:start], "markup")
        ledger.drop(no, text[end:], "markup")
        ledger.kept -= len(text) - (end - start)
        text = text[start:end]

    def unmark(whole: str, inner: str) -> str:
        ledger.drop(no, whole.replace(inner, "", 1), "markup")
        ledger.kept -= len(whole) - len(inner)
        return inner
    text = unemphasize(text, unmark)
    return MD_ESCAPE.sub(lambda m: unmark(m.group(0), m.group(1)), text)


def unemphasize(text: str, replace: Callable[[str, str], str] = lambda whole, inner: inner) -> str:
    """MD_EMPHASIS.sub(lambda m: replace(m.group(0), m.group(2)), text), in linear time: the regex looks for
    a closing mark from every opening one, to the end of the line when there is none ("*a *a *a ...")."""
    return "\n".join(_unemphasize_line(line, replace) for line in text.split("\n"))  # a match holds no \n


def _unemphasize_line(line: str, replace: Callable[[str, str], str]) -> str:
    closing = {mark: _closing_marks(line, mark) for mark in EMPHASIS_MARKS}
    out: list[str] = []
    done = i = 0
    while (opening := MARK.search(line, i)) is not None:
        i = opening.start()
        found = _emphasis_at(line, i, closing)
        if found is None:
            i += 1
            continue
        mark, close = found
        out += [line[done:i], replace(line[i:close + len(mark)], line[i + len(mark):close])]
        done = i = close + len(mark)
    return "".join(out + [line[done:]])


def _emphasis_at(line: str, i: int, closing: dict[str, list[int]]) -> tuple[str, int] | None:
    """The mark MD_EMPHASIS opens with at `i`, and where its closing mark starts; None when it does not match."""
    for mark in EMPHASIS_MARKS:
        inner = i + len(mark)
        if not line.startswith(mark, i) or inner >= len(line) or line[inner].isspace():
            continue
        closes = closing[mark]
        k = bisect.bisect_left(closes, inner + 1)  # the inner text is at least one character
        if k < len(closes):
            return mark, closes[k]
    return None


def _closing_marks(line: str, mark: str) -> list[int]:
    """Where `mark` could close emphasis: every place it starts right after a character that is no space."""
    out, i = [], line.find(mark, 1)
    while i >= 0:
        if not line[i - 1].isspace():
            out.append(i)
        i = line.find(mark, i + 1)
    return out
