"""Fragments cut from the archive's editions, as a user copies them: rules first..last, with or without
their examples, the last one cut short, quotes straightened. Built in the test, never stored."""
from __future__ import annotations

import re
from pathlib import Path

from pipeline.ingest.clean import normalize_newlines
from pipeline.ingest.decode import decode_with_repairs

NUMBER = re.compile(r"^\s*(\d{3}(?:\.\d+[a-z]?)?)\.?\s")
STRAIGHT = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "—": "-", "–": "-"})


def cut(edition: Path, first: str, last: str, *, examples: bool = True, stop_at: float | None = None,
        straight: bool = False) -> str:
    """The lines of `edition` from rule `first` to the end of rule `last` (with its examples), as the
    file prints them; `stop_at`: the last rule ends at that share of its text, mid-word."""
    lines = normalize_newlines(decode_with_repairs(edition.read_bytes(), edition)[0]).split("\n")
    start = next(i for i, line in enumerate(lines) if _number(line) == first)
    end = next(i for i, line in enumerate(lines) if _number(line) == last)
    stop = next((i for i in range(end + 1, len(lines)) if _number(lines[i])), len(lines))
    kept = lines[start:stop]
    if not examples:
        kept = _without_examples(kept)
    text = "\n".join(kept).rstrip() + "\n"
    if stop_at is not None:
        text = _stop(text, last, stop_at)
    return text.translate(STRAIGHT) if straight else text


def _number(line: str) -> str | None:
    m = NUMBER.match(line)
    return m[1] if m else None


def _without_examples(lines: list[str]) -> list[str]:
    """Leave out every "Example:" paragraph (up to the next blank line or numbered line)."""
    out, skipping = [], False
    for line in lines:
        if line.lstrip().startswith("Example"):
            skipping = True
        elif not line.strip() or _number(line):
            skipping = False
        if not skipping:
            out.append(line)
    return out


def _stop(text: str, last: str, share: float) -> str:
    """Cut the text inside the last rule's own words (before its examples), mid-word, with a line break."""
    lines = text.rstrip("\n").split("\n")
    at = max(i for i, line in enumerate(lines) if _number(line) == last)
    line = lines[at]
    keep = max(len(last) + 10, int(len(line) * share))
    return "\n".join(lines[:at] + [line[:keep]]) + "\n"
