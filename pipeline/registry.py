"""The edition registry: every published Comprehensive Rules edition the project knows of, by the names people
use for it ("the M10 update", "DSK"), read from `pipeline/data/sets.csv`.

Columns: `effective` (the date the edition takes effect: as its text states it where `checked` says so, else
the day it was listed, which can be a few days off), `published` (the date(s) its file was published under,
";"-separated), `set_code`, `set_name`, `checked` (what was verified against the edition's text; empty when
nothing was). tests/test_registry.py checks the table against the archive's editions.

An edition of a run is matched to an entry by its date: the same effective or published date, else the
nearest entry at most NEAR days away (a listed day is near, not equal). Importing this module loads no pandas.
"""
from __future__ import annotations

import csv
import datetime
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "data" / "sets.csv"
NEAR = 7  # days between an edition's date and an unchecked entry's listed day that still name one edition


@dataclass(frozen=True, slots=True)
class EditionSet:
    """One published edition and the set it came with."""

    effective: str
    published: tuple[str, ...]
    set_code: str
    set_name: str
    checked: str = ""


@lru_cache(maxsize=1)
def entries() -> tuple[EditionSet, ...]:
    """The registry, oldest first."""
    with TABLE.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return tuple(sorted((EditionSet(r["effective"], tuple(filter(None, r["published"].split(";"))), r["set_code"],
                                    r["set_name"], r["checked"]) for r in rows), key=lambda s: s.effective))


def _fold(name: str) -> str:
    return name.replace("’", "'").casefold().strip()


def find(spec: str) -> EditionSet | None:
    """The entry a set code or set name names ("m10", "Magic 2010"); None when it names none."""
    wanted = _fold(spec)
    return next((s for s in entries() if _fold(s.set_code) == wanted), None) or \
        next((s for s in entries() if _fold(s.set_name) == wanted), None)


def _days(a: str, b: str) -> int:
    try:
        return abs((datetime.date.fromisoformat(a) - datetime.date.fromisoformat(b)).days)
    except ValueError:
        return NEAR + 1


@lru_cache(maxsize=4096)
def of(edition: str) -> EditionSet | None:
    """The entry for an edition of a run (its effective date), or None when the registry has none near it."""
    exact = next((s for s in entries() if edition == s.effective or edition in s.published), None)
    if exact or not edition:
        return exact
    near = [s for s in entries() if not s.checked and _days(edition, s.effective) <= NEAR]
    return min(near, key=lambda s: _days(edition, s.effective), default=None)


def label(edition: str) -> str:
    """"2009-07-11 (M10, Magic 2010)"; the date alone when the registry does not know it."""
    entry = of(edition)
    return f"{edition} ({entry.set_code}, {entry.set_name})" if entry else edition


def matching(entry: EditionSet, editions: list[str]) -> str | None:
    """The edition of a run that is this entry's, if the run has it."""
    return next((e for e in editions if of(e) == entry), None)


def missing(editions: list[str]) -> list[EditionSet]:
    """Published editions the registry knows that none of `editions` is, from the first to the last of them."""
    if not editions:
        return []
    held = {of(e) for e in editions}
    first, last = min(editions), max(editions)
    return [s for s in entries() if s not in held and first <= s.effective <= last]
