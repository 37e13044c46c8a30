"""RTF editions: control words stripped by striprtf, in the code page the file declares.

Two of striprtf's patterns backtrack on hostile input, so the text is made safe for them first. Its
HYPERLINKS pattern goes cubic over a run of "{\\field{\\*\\fldinst{HYPERLINK" openings (46 KB took 24 s,
200 KB half an hour): defused in linear time. Its FONTTABLE pattern goes quadratic or worse over a font
table whose entries lack a charset or a ';': its cost is bounded in linear time and the file refused
past a budget."""
from __future__ import annotations

import codecs
import re
from array import array
from bisect import bisect_right

from pipeline.errors import SourceError
from pipeline.ingest.containers import over_cap

CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
CODEC = {10000: "mac_roman", 437: "cp437", 1252: "cp1252", 65001: "utf-8"}  # \ansicpgN -> codec
MAC = re.compile(rb"^\{\\rtf1\\mac\b")
# "{\*\fldinst{" -> "{\*\fldinst {": the space ends the control word, so RTF (and striprtf) read the same
# field, but HYPERLINKS, which wants the brace right after \fldinst, can no longer start there. None of
# the real editions has the brace there (their fields are "{\*\fldinst {...").
FIELD_INSTRUCTION = re.compile(r"(\\\*\\fldinst)(?=\{)", re.IGNORECASE)
# Where FONTTABLE starts a match, the charset it looks for, and the ';' that can end one ([^;]+ wants a
# character before it); FONTTABLE's '.' stops at a line feed.
FONT_NUMBER = re.compile(r"\\f\d+")
CHARSET = re.compile(r"\\fcharset\d+")
ENTRY_END = re.compile(r"(?<=[^;]);")
MAX_FONT_TABLE_STEPS = 20_000_000  # ~0.3 s of FONTTABLE [70 K: the 2009 RTF, 844 fonts in 73 KB]


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    from striprtf.striprtf import rtf_to_text

    encoding = _encoding(data[:4096])
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SourceError(f"RTF declares code page {encoding!r}, which Python cannot decode", path=path) from None
    # RTF is 7-bit: the bytes above 127 are \'hh escapes, so latin-1 only carries them through.
    rtf = FIELD_INSTRUCTION.sub(r"\1 ", data.decode("latin-1"))
    if font_table_steps(_font_table(rtf)) > MAX_FONT_TABLE_STEPS:
        raise over_cap("a font table that would take the RTF reader", MAX_FONT_TABLE_STEPS, "steps", path)
    text = rtf_to_text(rtf, encoding=encoding, errors="replace")
    if "\ufffd" in text:
        raise SourceError(f"RTF text has bytes that are not {encoding}", path=path)
    return text, f"rtf ({encoding})"


def _encoding(head: bytes) -> str:
    m = CODE_PAGE.search(head)
    if m:
        page = int(m[1])
        return CODEC.get(page, f"cp{page}")
    return "mac_roman" if MAC.match(head) else "cp1252"  # \ansi without a code page is Windows-1252


def _font_table(rtf: str) -> str:
    """The text striprtf runs FONTTABLE over: its {\\fonttbl ...} group (striprtf >= 0.0.29), else all."""
    from striprtf import striprtf
    group = getattr(striprtf, "font_table_group", None)
    return group(rtf) if group else rtf


def font_table_steps(table: str) -> int:
    """The characters FONTTABLE.findall steps over in `table`, estimated in linear time (the hopeless
    cases pessimistically). From a font number it scans lazily to the next \\fcharset on the line and
    on to the next ';': cheap in a real table. With no charset on the line it scans to the line's end
    and fails, once per digit of the number; with no ';' after the charset it backtracks cubically."""
    charsets = array("q", (m.start() for m in CHARSET.finditer(table)))
    charset_ends = array("q", (m.end() for m in CHARSET.finditer(table)))
    entry_ends = array("q", (m.start() for m in ENTRY_END.finditer(table)))
    line_ends = array("q", (m.start() for m in re.finditer("\n", table)))
    steps = 0
    for m in FONT_NUMBER.finditer(table):
        start = m.start()
        line_end = _next(line_ends, start, len(table))
        i = bisect_right(charsets, start)
        if i == len(charsets) or charsets[i] > line_end:
            steps += (line_end - start) * (m.end() - start - 2)
            continue
        end = _next(entry_ends, charset_ends[i], None)
        steps += end - start if end is not None else (len(table) - start) ** 3
    return steps


def _next(positions: array, after: int, default: int | None) -> int | None:
    """The first of the sorted `positions` above `after`, else `default`."""
    i = bisect_right(positions, after)
    return positions[i] if i < len(positions) else default
