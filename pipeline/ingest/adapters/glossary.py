"""The glossary after the rules: terms and their definitions, in each edition's layout."""
from __future__ import annotations

import re

from pipeline.ingest.clean import Ledger, unwrap
from pipeline.records import Paragraph

SENTENCE_END = re.compile(r"[.:;!?)\]\"”]$")
GLOSSARY_TERM = re.compile(r"^[A-Z“\"‘'][^\s]*(?:\s+\S+){0,7}$")  # "Abandon", "Active Player, Nonactive ..."
GLOSSARY_SENSE = re.compile(r"^(?:\d+\.\s|Example)")  # "2. An activated ...": a numbered sense
NOT_A_TERM = re.compile(r"^(?:\d+\.\s|See\s|Example)|[.:;,]$")  # "See rule 407, “Ante.”"
UNFINISHED_REFERENCE = re.compile(r"\b[Rr]ules?\s+\d{3}(?:\.\d+[a-z]?)?$")  # "See rule 603.4" (no period)
# A term glued to its definition's first sense: "Ability1. Text on an object that ...".
GLUED = re.compile(r"^(?P<term>[A-Z][A-Za-z ,’'/()-]{0,50}?[A-Za-z)])(?P<lost>\ufffd*)(?P<definition>1\.\s+[A-Z].*)$")
SHORT_LINE = 0.85  # in a PDF, a line this much shorter than the full width ended its paragraph


def glossary_paragraphs(ledger: Ledger, start: int, stop: int, layout: str, starts_paragraph):
    """Paragraphs with roles glossary-term and glossary. `starts_paragraph(line, text, previous)`
    says where a definition's paragraphs begin in the rules' layout."""
    if layout == "dense":
        return _dense(ledger, start, stop)
    return _blank_separated(ledger, start, stop, starts_paragraph)


def _blank_separated(ledger: Ledger, start: int, stop: int, starts_paragraph):
    """A term is a line at the left margin after a blank line. Indented lines after a blank line
    continue the entry (1999: "  A permanent may have ..."; 2002: the expansion-symbol list), as
    does a line after a definition that ends with a colon ("The expansion symbols to date are:")."""
    out = []
    block: list[tuple[int, str, bool]] = []
    previous = ""
    lines = list(ledger.numbered(start, stop))
    for k, (no, line) in enumerate(lines):
        text = ledger.keep_stripped(no, line)
        if not text:
            previous = ""
            continue
        starts = not previous and not (block and block[-1][1].endswith(":"))
        if not line[:1].isspace() and (starts or _term_under_definition(block, previous, text, lines[k + 1:k + 2])):
            out += _entry(block)
            block = []
            glued = GLUED.match(text)
            if glued:  # "Ability1. Text on an object ...": the line break was lost in a damaged file
                block = [(no, glued["term"], True), (no, glued["definition"], True)]
                ledger.kept -= len(glued["lost"])
                ledger.drop(no, glued["lost"], "characters lost in a damaged file")
                previous = text
                continue
        block.append((no, text, not previous or starts_paragraph(line, text, previous) if block else True))
        previous = text
    return out + _entry(block)


def _term_under_definition(block, previous: str, text: str, following) -> bool:
    """A term printed right under the last line of a finished definition, with no blank line between
    ("...See rule 702.138, “Companion.”" then "Concede" in 2020-06-01): a short unpunctuated line, and
    the next line (its definition) follows at once."""
    return (len(block) >= 2 and bool(SENTENCE_END.search(previous)) and not previous.endswith(":")
            and bool(GLOSSARY_TERM.match(text)) and not NOT_A_TERM.search(text)
            and bool(following) and bool(following[0][1].strip()))


def _dense(ledger: Ledger, start: int, stop: int):
    """No blank lines between entries: a term is a short unpunctuated line after a finished
    sentence; a definition's paragraph ends with a finished sentence on a short line."""
    out = []
    block: list[tuple[int, str, bool]] = []
    previous = ""
    numbered = list(ledger.numbered(start, stop))
    widths = sorted(len(line.strip()) for _, line in numbered)
    short = SHORT_LINE * (widths[int(0.9 * len(widths))] if widths else 0)
    for no, line in numbered:
        text = ledger.keep_stripped(no, line)
        if not text:
            continue
        finished = not previous or SENTENCE_END.search(previous) or UNFINISHED_REFERENCE.search(previous)
        if finished and GLOSSARY_TERM.match(text) and not NOT_A_TERM.search(text):
            out += _entry(block)
            block = []
        ends = finished and (len(previous) < short or GLOSSARY_SENSE.match(text))
        block.append((no, text, not block or bool(ends)))
        previous = text
    return out + _entry(block)


def _entry(block):
    if not block:
        return []
    no, term, _ = block[0]
    return [Paragraph(term, no, no, "glossary-term")] + unwrap(block[1:], role="glossary")
