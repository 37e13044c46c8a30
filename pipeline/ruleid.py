"""One value type for a rule number: parsed once, compared and sorted the same way everywhere.

A number as printed: `1` (part), `212` (chapter), `212.1` (rule or section), `212.1b` (subrule),
`212.8.Ruling.1` (ruling), `212.2h-k` (a range of subrules). Anything else (a glossary term, a
commentary id) is not a RuleId, but still sorts with `sort_key`. Importing this module loads
no spaCy and no pandas: the CLI and the reports use it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pipeline.patterns import RULE_NUMBER, SUBRULE_LETTERS

Shape = Literal["part", "chapter", "rule", "subrule", "ruling", "range"]

_PARTS = re.compile(r"^(?P<chapter>\d{3})(?:\.(?P<number>\d+)(?P<letter>[a-z]?)(?:-(?P<last>[a-z]))?)?"
                    r"(?:\.Ruling\.(?P<ruling>\d+))?$")
_PIECES = re.compile(r"\d+|[^\d.]+")


@dataclass(frozen=True, slots=True)
class RuleId:
    """A parsed rule number; `str(rule_id)` is the number as printed."""

    text: str
    chapter: str  # "212"; for a part: the part's digit
    number: int | None = None  # 1 in 212.1b
    letter: str = ""  # "b" in 212.1b
    last: str = ""  # "k" in the range 212.2h-k
    ruling: int | None = None  # 1 in 212.8.Ruling.1

    @classmethod
    def parse(cls, text: str) -> RuleId | None:
        """The number, or None when `text` is not shaped like one (a glossary term)."""
        return _parse(text)

    def __str__(self) -> str:
        return self.text

    @property
    def shape(self) -> Shape:
        """What the printed shape alone says (whether a `212.1` is a rule or a section heading
        depends on its text: see segment.kind_of)."""
        if self.ruling is not None:
            return "ruling"
        if self.last:
            return "range"
        if len(self.chapter) == 1:
            return "part"
        if self.number is None:
            return "chapter"
        return "subrule" if self.letter else "rule"

    @property
    def key(self) -> tuple:
        return sort_key(self.text)

    @property
    def parent(self) -> str:
        """212.2a -> 212.2 -> 212 -> 2 -> ''; 212.8.Ruling.1 -> 212.8."""
        shape = self.shape
        if shape == "ruling":
            return self.text.split(".Ruling.")[0]
        if shape in ("subrule", "range"):
            return f"{self.chapter}.{self.number}"
        if shape == "rule":
            return self.chapter
        return self.chapter[0] if shape == "chapter" else ""

    def next(self) -> str:
        """212.1b -> 212.1c (letters skip l and o); 212.1 -> 212.2; '' past z or for other shapes."""
        if self.shape == "subrule":
            i = SUBRULE_LETTERS.find(self.letter)
            return f"{self.chapter}.{self.number}{SUBRULE_LETTERS[i + 1]}" if 0 <= i < len(SUBRULE_LETTERS) - 1 else ""
        return f"{self.chapter}.{self.number + 1}" if self.shape == "rule" else ""

    def previous(self) -> str:
        """212.1e -> 212.1d; 212.1a and 212.1 -> '' for a letter, 212.2 -> 212.1; '' when unknown."""
        if self.shape == "subrule":
            i = SUBRULE_LETTERS.find(self.letter)
            return f"{self.chapter}.{self.number}{SUBRULE_LETTERS[i - 1]}" if i > 0 else ""
        return f"{self.chapter}.{self.number - 1}" if self.shape == "rule" and self.number > 1 else ""

    def expand(self) -> tuple[str, ...]:
        """A range's subrules ("212.2h-k" -> 212.2h, 212.2i, 212.2j, 212.2k); any other number: itself."""
        if self.shape != "range":
            return (self.text,)
        return expand_range(f"{self.chapter}.{self.number}{self.letter}", f"{self.chapter}.{self.number}{self.last}")


@lru_cache(maxsize=65536)
def _parse(text: str) -> RuleId | None:
    if len(text) == 1 and text in "123456789":
        return RuleId(text, text)
    if not RULE_NUMBER.match(text):
        return None
    m = _PARTS.match(text)
    return RuleId(text, m["chapter"], int(m["number"]) if m["number"] else None, m["letter"] or "",
                  m["last"] or "", int(m["ruling"]) if m["ruling"] else None)


@lru_cache(maxsize=65536)
def sort_key(rule_id: str) -> tuple:
    """212.2 < 212.10 < 212.10a; ids that are not numbers (glossary terms) sort by their text."""
    return tuple((0, int(x), "") if x.isdigit() else (1, 0, x.lower()) for x in _PIECES.findall(rule_id))


def parent(rule_id: str) -> str:
    """The parent of a printed number; '' for a part or for anything that is not a number."""
    parsed = _parse(rule_id)
    return parsed.parent if parsed else ""


def expand_range(first: str, last: str) -> tuple[str, ...]:
    """Subrules from first to last inclusive, skipping the letters l and o: 702.5a..702.5c.
    Anything that is not such a pair is given back as it is."""
    a, b = _parse(first), _parse(last)
    if first == last:
        return (first,)
    if not (a and b and a.shape == b.shape == "subrule" and (a.chapter, a.number) == (b.chapter, b.number)):
        return (first, last)
    letters = SUBRULE_LETTERS
    if a.letter not in letters or b.letter not in letters or letters.index(a.letter) > letters.index(b.letter):
        return (first, last)
    return tuple(f"{a.chapter}.{a.number}{ch}" for ch in letters[letters.index(a.letter):letters.index(b.letter) + 1])


def chapter(rule_id: str) -> str:
    """The chapter a number sits in ("702" for 702.10b); "glossary" for anything else."""
    return rule_id.split(".")[0] if rule_id[:1].isdigit() else "glossary"
