"""An undated fragment, read for `identify`: what it is (sniffed from its text unless the manifest or
`--format` says), its cleaned text, and its rule records.

Plain rule lines ("702.98a Evolve is ...", "Example: ...") need nothing of spaCy but where each
paragraph's number ends: `quick_analysis` reads that with one regular expression, and a paragraph it is
not sure of (a part heading, "606. 8b", a rulings page's "212.3 - Creatures", a mid-line entry) goes to
spaCy as in a run. tests/test_fragment.py checks both readings agree on every paragraph of the archive.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from pipeline.errors import PipelineError, SourceError
from pipeline.patterns import (CHAPTER_NUMBER, MD_HEADING, NUMBER, NUMBERED_START, PART_DIGIT, RULINGS_BANNER,
                               WIKI_CHROME, WIKI_FROM, WIKI_NOTICE)
from pipeline.records import Analysis, CleanDoc, Rule

RULE_LINES = "rule-lines"  # what a plain fragment is read as: sources/official.py's clean_fragment
# What each sniffed format is, as the note and the JSON say it.
SNIFFED = {
    "official": "a whole official edition",
    RULE_LINES: "numbered rule lines",
    "copy": "rule lines with text in another script (a foreign-language site)",
    "markdown": "Markdown (headings)",
    "rulings-html": "HTML with a table (a rulings page)",
    "rulings-text": "a rulings page as text",
    "wiki-html": "a wiki page (HTML)",
    "wiki-text": "a wiki page (text or markup)",
}

# Sniffing, each with an example of what it recognises.
HTML = re.compile(r"<(?:!doctype|html|body|table|tr|td|p|div|h[1-6]|ul|ol|li|br)\b", re.I)  # "<td>212.1a"
HTML_TABLE = re.compile(r"<td\b", re.I)
MEDIAWIKI = re.compile(r"mw-content-text|mediawiki|wgPageName|id=\"firstHeading\"", re.I)
WIKI_MARKUP = re.compile(r"\{\{CR\||\[\[[^\]\n]+\]\]|^={2,}[^=\n]+={2,}\s*$|'''", re.M)  # {{CR|204.1a}}, == Types ==
RULINGS_LINE = re.compile(rf"^\s*{NUMBER}\s+-\s+\S", re.M)  # "  212.1a - Cards, tokens ..."
OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u052f\u0590-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff"
                          r"\uac00-\ud7af]")  # Greek, Cyrillic, Hebrew, Arabic, Thai, kana, CJK, Hangul

# Plain paragraphs spaCy's rule_boundaries would read the same way (pipeline/segment/nlp.py).
LEADING_NUMBER = re.compile(rf"(?P<id>{NUMBER})\.?(?= |$)")  # "702.98a Evolve", "702.98. Evolve"
NOT_PLAIN = re.compile(rf"^{PART_DIGIT}\.\s|^{CHAPTER_NUMBER}\.\s+\d|^{CHAPTER_NUMBER}\S*\s+[-–—]"
                       rf"|\s{{2,}}{CHAPTER_NUMBER}")  # "1. The Game", "606. 8b", "212.3 - Creatures", mid-line entry
EXAMPLE = re.compile(r"(?i)examples?[.:](?= |$)")  # "Example: A player ..."
EXAMPLE_WORD = re.compile(r"(?i)examples?\b")
WIKI_JUMP = WIKI_CHROME[0]  # "Jump to: navigation, search": a rendered MediaWiki page


def sniff(text: str) -> str | None:
    """The format a fragment's text is in; None when nothing says (no numbered rule lines, headings,
    tables or wiki markup)."""
    from pipeline.ingest.adapters.official import looks_official
    head = text[:20000]
    if looks_official(text):
        return "official"
    if HTML.search(head):
        if MEDIAWIKI.search(head):
            return "wiki-html"
        return "rulings-html" if HTML_TABLE.search(text) else "wiki-html"
    lines = [line.strip() for line in text.splitlines()]
    if any(RULINGS_BANNER.match(line) for line in lines) or len(RULINGS_LINE.findall(text)) >= 2:
        return "rulings-text"
    if any(MD_HEADING.match(line) for line in lines):
        return "markdown"
    if WIKI_MARKUP.search(text) or any(line == WIKI_JUMP or WIKI_FROM.match(line) or WIKI_NOTICE.search(line)
                                       for line in lines):
        return "wiki-text"
    if any(NUMBERED_START.match(line) for line in lines):
        return "copy" if OTHER_SCRIPT.search(text) else RULE_LINES
    return None


def read(path: Path, fmt: str | None = None) -> tuple[CleanDoc, str, str]:
    """One file, cleaned; what it was read as, and how that was chosen: `fmt` (--format), else the
    manifest beside it, else sniffed from its text."""
    from pipeline.ingest.discover import read_source
    from pipeline.ingest.manifest import Entry, read_manifest
    from pipeline.ingest.adapters import ADAPTERS
    from pipeline.ingest.adapters.official import clean_fragment

    if not path.is_file():  # a pipe would be waited on for ever
        raise PipelineError("not a regular file (a pipe, socket or device)", path=path)
    entry = read_manifest(path.parent).get(path.resolve()) if fmt is None else None
    how = "manifest.toml" if entry else "--format"
    if entry is None:
        entry = Entry(path.resolve(), fmt or "copy", "copy", None, None, "en", "", "", 0)
    source = read_source(path, entry)
    if fmt is None and how == "--format":
        fmt, how = sniff(source.text), "sniffed"
        if fmt is None:
            raise SourceError("cannot tell what this file holds (no numbered rule lines, Markdown headings, "
                              "HTML tables or wiki markup): name its format with --format", path=path)
        if fmt == "official":
            source = read_source(path, None)
        source = replace(source, format=fmt)
    clean = clean_fragment if source.format == RULE_LINES else ADAPTERS[source.format]
    return clean(source), SNIFFED.get(source.format, source.format), how


def rules_of(docs: list[CleanDoc]) -> list[Rule]:
    """The records of these cleaned fragments, as segmentation makes them; spaCy is loaded only when a
    paragraph is not plain (a part heading, a rulings page's layout)."""
    from pipeline.segment.rules import UNANALYSED, ParagraphCache, segment

    texts = {p.text for d in docs for p in d.paragraphs if p.role not in UNANALYSED}
    analyses = {text: quick_analysis(text) for text in texts}
    unsure = [text for text, a in analyses.items() if a is None]
    if unsure:
        cache = ParagraphCache()
        cache.analyse(unsure)
        analyses.update((text, cache.data[text]) for text in unsure)
    return [r for d in docs for r in segment(d, analyses)]


def quick_analysis(text: str) -> Analysis | None:
    """The leading rule number and "Example:" of a plain paragraph, as spaCy would find them; None when
    the paragraph may hold more (a part heading, a stray space in the number, a mid-line entry)."""
    if NOT_PLAIN.search(text):
        return None
    m = LEADING_NUMBER.match(text)
    if m is None and text[:1].isdigit():
        return None
    example = bool(EXAMPLE.match(text))
    if not example and EXAMPLE_WORD.match(text):
        return None  # "Example-" or "Examples," : leave it to the tokenizer
    starts = ()
    if m:
        after = m.end() + len(text[m.end():]) - len(text[m.end():].lstrip(" "))
        starts = ((0, after, m["id"]),)
    return Analysis(starts, example, (), (), ())
