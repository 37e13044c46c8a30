"""What a person types for a rule or an edition, made into what the datasets hold: rule numbers
normalised ("CR 205.1a", "205.1a.", "205.1A", "rule 205.1a" -> "205.1a"), near misses suggested,
and an edition named by its date, a date that is not an edition (the edition in force on that date) or the
set it came with ("M10", "Magic 2010": pipeline/registry.py), resolved in one place: `edition`."""
from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Iterable

from pipeline.errors import PipelineError

PREFIX = re.compile(r"^\s*(?:CR|CompRules|rules?|§)\s*", re.I)
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NUMBERED = re.compile(r"^\d{1,3}(?:\.\d+[A-Za-z]?)?(?:\.Ruling\.\d+)?$")


def normalise(rule: str) -> str:
    """A rule number as the datasets spell it; anything else (a glossary term) is only trimmed."""
    text = PREFIX.sub("", rule.strip()) if re.match(r"^\s*(?:CR|CompRules|rules?|§)\s*\d", rule, re.I) else rule.strip()
    text = text.rstrip(".").strip()
    if NUMBERED.match(text):
        head, dot, tail = text.rpartition(".")
        if dot and tail[-1:].isalpha() and "Ruling" not in text:
            return f"{head}.{tail.lower()}"
    return text


def suggestions(rule: str, known: Iterable[str], n: int = 5) -> list[str]:
    """Known numbers (or terms) close to a miss: 205.1z -> 205.1a, 205.1b; "Summoning Sicknes" -> the term."""
    known = set(known)
    lowered = {k.lower(): k for k in known}
    if rule.lower() in lowered:
        return [lowered[rule.lower()]]
    close = difflib.get_close_matches(rule.lower(), list(lowered), n=n, cutoff=0.75)
    return sorted({lowered[c] for c in close},
                  key=lambda k: (-difflib.SequenceMatcher(None, rule.lower(), k.lower()).ratio(), k))


def edition(spec: str, editions: list[str]) -> tuple[str, str]:
    """The edition of `editions` that `spec` names (a date, a set code or a set name), and a note when it is
    not one of them: "2008-06-01 is not an edition: 2008-02-01 is the edition in force on that date"."""
    from pipeline import registry
    if spec in editions:
        return spec, ""
    entry = registry.find(spec) if not DATE.match(spec) else None
    if entry is None:
        found = in_force(spec, editions)
        return found, f"{spec} is not an edition: {found} is the edition in force on that date"
    mine = registry.matching(entry, editions)
    if mine:
        return mine, ""
    found = in_force(entry.effective, editions)
    return found, (f"{spec} ({entry.effective}, {entry.set_name}) is not in the datasets: "
                   f"{registry.label(found)} is the edition in force on that date")


def in_force(date: str, editions: list[str]) -> str:
    """The edition in force on `date`: the latest one effective on or before it."""
    if not DATE.match(date):
        raise PipelineError(f"{date!r} is not a date (YYYY-MM-DD) or a set code (M10, DSK); "
                            f"editions: {', '.join(editions)}")
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise PipelineError(f"{date!r} is not a real date (YYYY-MM-DD); editions: {', '.join(editions)}") from None
    earlier = [e for e in sorted(editions) if e <= date]
    if not earlier:
        raise PipelineError(f"no edition was in force on {date}: the first is {min(editions)}; "
                            f"editions: {', '.join(sorted(editions))}")
    return earlier[-1]
