"""Official Comprehensive Rules text files: front matter, contents, rules, glossary, credits."""
from __future__ import annotations

import re
from datetime import datetime

from pipeline.ingest.clean import Ledger, normalize_newlines, unwrap
from pipeline.errors import NotRulesError
from pipeline.patterns import (EFFECTIVE_DATE, EXAMPLE_START, NUMBERED_START, PART_START, REFERENCE_WORDS,
                               TITLE, TITLE_DATE)
from pipeline.records import CleanDoc, SourceDoc
from pipeline.ingest.adapters.glossary import SENTENCE_END, glossary_paragraphs

FIRST_RULE = re.compile(r"^\s*100\.\s?1[a-z]?\.?\s")  # the first numbered rule of every edition
# At a line's start: [^\S\n]* rather than \s*, which ran on across every blank line below each line start
# (quadratic in a run of blank lines); a line start right before the rule number is found all the same.
FIRST_RULE_ANYWHERE = re.compile(r"(?m)^[^\S\n]*100\.\s?1[a-z]?\.?\s")
HEADING = re.compile(r"^\s*(?:[1-9]|\d{3})\.\s+\S")  # "1. The Game", "100. General"
SEPARATOR = re.compile(r"^\s*(?:-{4,}|={4,}|_{4,}|\*{4,})\s*$")  # "------" under a heading, "=====" boxes
RULE_LINE = re.compile(r"^\d{3}\.(?:\d+[a-z]?\.?)?\s")  # "100. General", "100.1. These", "100.1a A"
INDENTED_BLOCKS = 0.5  # share of indented lines continuing an unfinished one: indentation is a block's
DENSE_BLANKS = 0.02  # a text layer with fewer blank lines than this share has no paragraph gaps
WRAPPED_MAX = 160  # hard-wrapped editions never have longer lines; unwrapped ones have far longer


def looks_official(text: str) -> bool:
    """Recognised by content: the title near the top and a rule 100.1 at the start of a line."""
    return TITLE.search(text[:4000]) is not None and FIRST_RULE_ANYWHERE.search(normalize_newlines(text)) is not None


def effective_date(text: str) -> str | None:
    """The ISO date stated in "These rules are effective as of June 17, 2011." (or "current as of"),
    near the top or anywhere else; else a date printed beside the title ("COMPREHENSIVE RULES 04/23/99")."""
    for m in EFFECTIVE_DATE.finditer(text):
        raw = re.sub(r"\s+", " ", m.group("date").replace(".", ""))
        for fmt in ("%B %d, %Y", "%b %d, %Y"):
            try:
                return datetime.strptime(raw, fmt).date().isoformat()
            except ValueError:
                continue
    m = TITLE_DATE.search(text[:4000])
    if m:
        year = int(m["y"]) + (0 if len(m["y"]) == 4 else 1900 if int(m["y"]) > 90 else 2000)
        try:
            return datetime(year, int(m["m"]), int(m["d"])).date().isoformat()
        except ValueError:
            return None
    return None


def clean(doc: SourceDoc, furniture=None) -> CleanDoc:
    """`furniture(lines)` -> {line index: reason}: lines to drop first (a PDF's running heads)."""
    ledger = Ledger(doc.text, doc.path)
    lines = ledger.lines
    aside = furniture(lines) if furniture else {}
    aside.update((i, "separator lines") for i, line in enumerate(lines) if SEPARATOR.match(line))
    for index, reason in sorted(aside.items()):
        ledger.set_aside(index, reason)
    body = next((i for i, line in enumerate(lines) if FIRST_RULE.match(line)), None)
    if body is None or not TITLE.search(doc.text[:4000]):
        raise NotRulesError("not a Comprehensive Rules edition (no title, or no rule 100.1)", path=doc.path)
    while body > 0 and (body - 1 in ledger.skipped or not lines[body - 1].strip() or HEADING.match(lines[body - 1])):
        body -= 1
    while body in ledger.skipped or not lines[body].strip():
        body += 1
    glossary = _find_line(lines, "Glossary", body)
    after = glossary if glossary is not None else body
    # The pre-2003 editions end with an index of terms to rule numbers, then the credits.
    index = _find_line(lines, "Index", after)
    credits = index if index is not None else _find_line(lines, "Credits", after)
    contents = _find_line(lines, "Contents", 0, body)
    end_rules = glossary if glossary is not None else (credits if credits is not None else len(lines))
    warnings = []
    if glossary is None:
        warnings.append("no glossary found after the rules")
    elif credits is None:
        warnings.append("file ends inside the glossary (no credits): truncated")

    front_end = contents if contents is not None else body
    ledger.drop_lines(0, front_end, "front matter (title, effective date, introduction)")
    ledger.drop_lines(front_end, body, "table of contents")
    layout = _layout(ledger, body, end_rules)
    paragraphs = unwrap(_rule_lines(ledger, body, end_rules, layout))
    if glossary is not None:
        ledger.drop(glossary + 1, lines[glossary], "section heading")
        stop = credits if credits is not None else len(lines)
        paragraphs += glossary_paragraphs(ledger, glossary + 1, stop, layout,
                                          lambda *a: _starts_paragraph(*a, layout))
    if credits is not None:
        ledger.drop_lines(credits, len(lines), "index, credits and legal notices" if index is not None
                          else "credits and legal notices")
    ledger.check(doc.path)
    return CleanDoc(doc, tuple(paragraphs), tuple(ledger.discards), ledger.total, ledger.kept,
                    doc.edition, tuple(warnings), layout != "lines", complete=credits is not None)


def clean_fragment(doc: SourceDoc) -> CleanDoc:
    """Numbered rule lines cut from an edition (what `identify` reads when nothing says otherwise): the
    rules part of `clean` without the title, contents or credits around it; a "Glossary" line starts the
    glossary entries. A fragment, never a complete edition."""
    ledger = Ledger(doc.text)
    lines = ledger.lines
    for index, line in enumerate(lines):
        if SEPARATOR.match(line):
            ledger.set_aside(index, "separator lines")
    glossary = _find_line(lines, "Glossary", 0)
    end_rules = glossary if glossary is not None else len(lines)
    layout = _layout(ledger, 0, end_rules)
    paragraphs = unwrap(_rule_lines(ledger, 0, end_rules, layout))
    if glossary is not None:
        ledger.drop(glossary + 1, lines[glossary], "section heading")
        paragraphs += glossary_paragraphs(ledger, glossary + 1, len(lines), layout,
                                          lambda *a: _starts_paragraph(*a, layout))
    ledger.check(doc.path)
    return CleanDoc(doc, tuple(paragraphs), tuple(ledger.discards), ledger.total, ledger.kept,
                    doc.edition, (), layout != "lines")


def _find_line(lines: list[str], text: str, start: int, stop: int | None = None) -> int | None:
    stop = len(lines) if stop is None else stop
    return next((i for i in range(start, stop) if lines[i].strip() == text), None)


def _layout(ledger: Ledger, start: int, stop: int) -> str:
    """"lines": a paragraph per line; "wrapped": hard-wrapped, blank lines between paragraphs;
    "dense": hard-wrapped with no blank lines at all (a PDF's text layer)."""
    lines = [line for _, line in ledger.numbered(start, stop)]
    if max((len(line) for line in lines), default=0) > WRAPPED_MAX:
        return "lines"
    blank = sum(1 for line in lines if not line.strip())
    if blank < DENSE_BLANKS * len(lines):
        return "dense"
    # "indented": whole blocks indented, continuation lines too (1999: "  502.9e ..." + "  actual ..."),
    # so an indented line is no new paragraph; elsewhere one after an unfinished line is rare.
    follow = [(a, b) for a, b in zip(lines, lines[1:]) if b[:1].isspace() and b.strip() and a.strip()]
    unfinished = sum(1 for a, _ in follow if not SENTENCE_END.search(a.rstrip()))
    return "indented" if follow and unfinished > INDENTED_BLOCKS * len(follow) else "wrapped"


def _rule_lines(ledger: Ledger, start: int, stop: int, layout: str):
    """(line, kept text, starts a paragraph) for the numbered rules; blank lines are layout."""
    previous = ""
    for no, line in ledger.numbered(start, stop):
        text = ledger.keep_stripped(no, line)
        if not text:
            previous = ""
            continue
        yield no, text, _starts_paragraph(line, text, previous, layout)
        previous = text


def _starts_paragraph(line: str, text: str, previous: str, layout: str) -> bool:
    if layout == "lines" or not previous or EXAMPLE_START.match(text):
        return True
    if line[:1].isspace() and layout != "indented":
        return True
    if layout == "dense":  # no blank lines to go by: every rule number or heading starts one
        return _starts_dense(text, previous)
    # A wrapped line can begin with a cross-reference ("See rule\n419.8 ..."): only a number
    # after a finished sentence starts a new rule.
    return bool(NUMBERED_START.match(text)) and bool(SENTENCE_END.search(previous))


def _starts_dense(text: str, previous: str) -> bool:
    """A line opening with a rule number, unless the line before leads into a cross-reference
    ("... see rule" / "rules 502.2 and" / "702.19b," + "702.19c")."""
    if not (RULE_LINE.match(text) or (PART_START.match(text) and SENTENCE_END.search(previous))):
        return False
    last = previous.rsplit(None, 1)[-1].lstrip("(“\"")  # "Rules" ends a heading, "rules" a reference
    return last not in REFERENCE_WORDS and last != "See" and not previous.endswith((",", "(", "-", "–", "—"))
