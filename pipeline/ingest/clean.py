"""Cleaning: small pure steps over strings, and the line ledger that accounts for every character."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from collections.abc import Callable, Iterable

from pipeline.errors import SourceError
from pipeline.patterns import (ANGLED_URL, CITATION, DASH, FOLD, ITALIC_UNDERSCORES, LOST_CHAR, LOST_DASH,
                               LOST_TRADEMARK, OLD_SYMBOL, SPACES,
                               TRADEMARK)
from pipeline.records import Discard, Paragraph

LINE_BREAK = re.compile(r"\r\n|\r|\n")

# What a source may hold, far above every real edition: the largest has 0.94 M characters (2026-01-16),
# the most lines 12,794 (the 2026-01-16 PDF's text; 9,258 in its TXT), the longest line 3,525 characters
# (2005-10-01, a paragraph a line). Past a limit the file is refused: with every stage linear, no text,
# however made, then costs more than a bounded time.
MAX_CHARS = 5_000_000
MAX_LINES = 100_000
MAX_LINE_CHARS = 100_000
NOT_RULES = "not a rules text"


# --- str -> str steps -------------------------------------------------------------------------

def normalize_newlines(text: str) -> str:
    """CRLF, bare CR and mixed endings -> LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")  # what LINE_BREAK.sub does, 10 times faster


def collapse_spaces(text: str) -> str:
    if "  " not in text and "\t" not in text:
        return text.strip()
    return SPACES.sub(" ", text).strip()


@lru_cache(maxsize=1 << 16)
def strip_citations(text: str) -> str:
    """Remove citation tags ([CompRules 2007/10/01], [CR 204.1a], {{CR|204.1a}) from readable text."""
    if "[" not in text and "{" not in text:
        return collapse_spaces(text)
    return collapse_spaces(CITATION.sub(" ", TAG_BEFORE_PUNCTUATION.sub("", text)))


# "spell types) {{CR|204.1a}. If": the tag goes with the space before it, "spell types). If". Those spaces
# are taken from the start of their run ((?<!\s)), not tried again from each space of it (quadratic).
TAG_BEFORE_PUNCTUATION = re.compile(rf"(?<!\s)\s*(?:{CITATION.pattern})(?=[.,;:!?])")


def fold_typography(text: str) -> str:
    """Curly/straight quotes, dashes (spaced or not, "--"), (TM)/™, underscores used as italics,
    URLs in angle brackets, characters lost as '?', mana symbols spelt "{oW}"."""
    text = unicodedata.normalize("NFC", text)
    if "{o" in text:
        text = OLD_SYMBOL.sub(r"{\1}", text)
    if "?" in text:
        text = LOST_DASH.sub("-", LOST_CHAR.sub("'", text))
    if "-" in text or "—" in text or "–" in text:
        text = DASH.sub("-", text)
    text = ANGLED_URL.sub(r"\1", text).translate(FOLD)
    text = TRADEMARK.sub("", text)
    text = ITALIC_UNDERSCORES.sub(r"\1", text)
    if "_" in text:
        text = LOST_TRADEMARK.sub("", text)
    return text


def make_pipeline(*steps: Callable[[str], str]) -> Callable[[str], str]:
    def run(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return run


def until_stable(step: Callable[[str], str], limit: int = 5) -> Callable[[str], str]:
    """Repeat a step until the text stops changing: folding one thing can uncover another ("-–"
    becomes "--", itself a dash; "0__" loses one underscore, then the next), and a comparison form
    must be a fixed point (folding it again changes nothing). Most texts take one pass to fold and
    one to see nothing is left."""
    def run(text: str) -> str:
        for _ in range(limit):
            folded = step(text)
            if folded == text:
                break
            text = folded
        return text
    return run


# The comparison form: what two texts must share to be "the same words". Cached: texts recur
# from edition to edition.
compare_form = lru_cache(maxsize=1 << 16)(until_stable(make_pipeline(strip_citations, fold_typography,
                                                                     collapse_spaces)))


# --- the ledger: lines in, kept pieces and explained discards out ------------------------------

class Ledger:
    """Splits a source into numbered lines and records, per character, what was kept or why not.

    Line terminators are charged as "line breaks" (one count for the source); adapters call keep() or
    drop() on every line.
    """

    def __init__(self, text: str, source: object = None):
        """A text over MAX_CHARS, MAX_LINES or MAX_LINE_CHARS is refused (SourceError naming `source`)."""
        check_size(text, source)
        self.total = len(text)
        self.kept = 0
        self.lines: list[str] = LINE_BREAK.split(text)
        if self.lines[-1] == "":  # a text that ends with a line break (or is empty) has no line after it
            self.lines.pop()
        _check_lines(self.lines, source)
        breaks = self.total - sum(map(len, self.lines))
        # Line breaks are counted, not quoted one by one: nothing reads them line by line (the
        # discards table and the source pages leave them out).
        self.discards: list[Discard] = [Discard(0, "line breaks", "", breaks)] if breaks else []
        self.skipped: set[int] = set()  # 0-based indexes of lines already accounted for (page furniture)

    def numbered(self, start: int = 0, stop: int | None = None) -> Iterable[tuple[int, str]]:
        """(1-based line number, line) pairs for lines[start:stop], but lines set aside."""
        stop = len(self.lines) if stop is None else stop
        return ((i + 1, self.lines[i]) for i in range(start, stop) if i not in self.skipped)

    def set_aside(self, index: int, reason: str) -> None:
        """Drop a whole line (0-based) before the adapter reads the rest: later passes skip it."""
        self.drop(index + 1, self.lines[index], reason)
        self.skipped.add(index)

    def keep(self, text: str) -> str:
        self.kept += len(text)
        return text

    def drop(self, line: int, text: str, reason: str) -> None:
        if text:
            self.discards.append(Discard(line, reason, text))

    def drop_lines(self, start: int, stop: int, reason: str) -> None:
        """Drop lines[start:stop] whole; blank ones count as layout, not as `reason`."""
        for no, line in self.numbered(start, stop):
            self.drop(no, line, "blank lines" if not line.strip() else reason)

    def keep_stripped(self, no: int, line: str) -> str:
        """Keep a line without its surrounding whitespace, which is charged as indentation."""
        body = line.strip()
        if not body:
            self.drop(no, line, "blank lines")
            return ""
        if len(body) != len(line):
            lead = len(line) - len(line.lstrip())
            self.drop(no, line[:lead], "indentation and trailing spaces")
            self.drop(no, line[lead + len(body):], "indentation and trailing spaces")
        self.kept += len(body)
        return body

    def drop_markup(self, source_chars: int, reason: str = "HTML markup (tags, attributes, entities)") -> None:
        """For HTML: the ledger ran over the rendered text; the rest of the file was markup."""
        self.discards.append(Discard(0, reason, "", source_chars - self.total))
        self.total = source_chars

    def check(self, source: object) -> None:
        dropped = sum(d.size for d in self.discards)
        if self.kept + dropped != self.total:
            raise AssertionError(f"{source}: kept {self.kept} + discarded {dropped} != {self.total} characters")


def check_size(text: str, source: object = None) -> None:
    """Refuse a text longer than MAX_CHARS (SourceError naming `source`)."""
    if len(text) > MAX_CHARS:
        raise SourceError(f"{len(text):,} characters (over {MAX_CHARS:,}): {NOT_RULES}", path=source)


def _check_lines(lines: list[str], source: object) -> None:
    if len(lines) > MAX_LINES:
        raise SourceError(f"{len(lines):,} lines (over {MAX_LINES:,}): {NOT_RULES}", path=source)
    if max(map(len, lines), default=0) <= MAX_LINE_CHARS:
        return
    no, line = next((no, line) for no, line in enumerate(lines, 1) if len(line) > MAX_LINE_CHARS)
    raise SourceError(f"a line of {len(line):,} characters (over {MAX_LINE_CHARS:,}): {NOT_RULES}",
                      path=source, line=no)


def unwrap(lines: Iterable[tuple[int, str, bool]], role: str = "rules") -> list[Paragraph]:
    """Join (line number, kept text, starts_paragraph) triples into paragraphs, one space per join."""
    paragraphs: list[Paragraph] = []
    buf: list[str] = []
    first = last = 0
    for no, text, starts in lines:
        if buf and starts:
            paragraphs.append(Paragraph(_join(buf), first, last, role))
            buf = []
        if not buf:
            first = no
        buf.append(text)
        last = no
    if buf:
        paragraphs.append(Paragraph(_join(buf), first, last, role))
    return paragraphs


def _join(parts: list[str]) -> str:
    """Join wrapped lines; a line broken after a hyphen or dash joins without a space unless the
    dash has one before it: "characteristic-" "occurs—" "[-" + "N]", but "Artifact —" + "Equipment"."""
    out = parts[0]
    for part in parts[1:]:
        glue = "" if out.endswith(("-", "—", "–")) and out[-2:-1].strip() else " "
        out += glue + part
    return out
