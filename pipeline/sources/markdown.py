"""Markdown exports of the rules. Line-based on purpose: a CommonMark parser reads "205. Type Line"
as an ordered-list item numbered 205 and drops the number from the text, which is the rule id."""
from __future__ import annotations

from pipeline.clean import Ledger, unwrap
from pipeline.patterns import EXAMPLE_START, MD_EMPHASIS, MD_ESCAPE, MD_HEADING, MD_RULE, NUMBERED_START
from pipeline.records import CleanDoc, SourceDoc

BREADCRUMB = ("Chapter:", "Section:", "Part:")


def clean(doc: SourceDoc) -> CleanDoc:
    ledger = Ledger(doc.text)
    stripped = [line.strip() for line in ledger.lines]
    kept = []
    previous_blank = True
    for no, line in ledger.numbered():
        text = line.strip()
        heading = MD_HEADING.match(text)
        if not text:
            ledger.drop(no, line, "blank lines")
            previous_blank = True
        elif MD_RULE.match(line):
            ledger.drop(no, line, "markup")
            previous_blank = True
        elif heading and heading.group("text") in stripped[no:]:
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


def _is_breadcrumb(text: str) -> bool:
    inner = MD_EMPHASIS.fullmatch(text)
    return bool(inner) and inner.group(2).startswith(BREADCRUMB)


def _unmark(ledger: Ledger, no: int, text: str) -> str:
    """Remove heading marks, emphasis and escapes from a kept line; the marks are charged as markup."""
    heading = MD_HEADING.match(text)
    if heading:
        ledger.drop(no, text[:heading.start("text")], "markup")
        ledger.drop(no, text[heading.end("text"):], "markup")
        ledger.kept -= len(text) - len(heading.group("text"))
        text = heading.group("text")
    for pattern, keep in ((MD_EMPHASIS, 2), (MD_ESCAPE, 1)):
        def unmark(m, keep=keep):
            inner = m.group(keep)
            ledger.drop(no, m.group(0).replace(inner, "", 1), "markup")
            ledger.kept -= len(m.group(0)) - len(inner)
            return inner
        text = pattern.sub(unmark, text)
    return text
