"""Date an undated source by its rules: the window of editions whose rules agree with every rule it holds.
Used by the run (segment step: manifest entries with edition = "auto", `resolve_auto`) and by the
`identify` command (pipeline/query/identify.py, which reads the editions from a finished run).

A fragment is partial by nature, so agreement is lenient where a copy is: examples it leaves out are no
evidence, the last rule of a file (or one the file stops inside) may be the start of the edition's text,
text before the first number may be the end of the rule before, and typography (quotes, dashes) is
folded. Exact typography is then a tie-breaker: the editions that print the fragment's quotes and dashes
in the most rules are the closest.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from pipeline.ingest.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.records import CleanDoc, Rule

SKIPPED = ("commentary", "fragment", "ruling")  # not rules text: notes, orphan text, rulings
AUTO = "auto"
AGREE = ("exact", "other typography", "start", "inside")  # how a rule can agree with an edition
# how it can disagree: "other words", "other examples", "absent"


class Version(NamedTuple):
    """What is compared of one rule: its words as printed and folded, and its examples' (whitespace
    runs are one space: where a definition's paragraphs break does not change its words)."""

    printed: str
    words: str
    examples: tuple[str, ...]
    printed_examples: tuple[str, ...]


def version(text: str, examples) -> Version:
    return Version(_spaced(text), _spaced(compare_form(text)), tuple(_spaced(compare_form(e)) for e in examples),
                   tuple(_spaced(e) for e in examples))


def _spaced(text: str) -> str:
    return " ".join(text.split())


Texts = dict[str, dict[str, Version]]  # edition -> rule key -> its version


def key(rule_id: str, kind: str) -> str:
    """How a rule is looked up across editions and formats: its number, or a glossary term folded
    as its text is ('"As though"' in one edition's TXT is '“As though”' in its PDF and the next TXT)."""
    return compare_form(rule_id) if kind == "glossary" else rule_id


def edition_texts(rules: list[Rule], complete: set[str]) -> Texts:
    """The versions of every rule of the complete editions (a run's records)."""
    out: Texts = {e: {} for e in sorted(complete)}
    for r in rules:
        if r.edition in complete and r.occurrence == 1 and r.kind not in SKIPPED:
            out[r.edition][key(r.rule_id, r.kind)] = version(r.text or r.title, r.examples)
    return out


def verdict(mine: Version, cut: str, theirs: Version | None) -> str:
    """How a fragment's rule agrees with an edition's (one of AGREE) or not. `cut`: "whole", "end" (it
    may stop early: the start of theirs will do) or "inside" (text before a fragment's first number)."""
    if theirs is None:
        return "absent"
    if cut == "end" and mine.examples:  # its text was copied whole: only its last example may stop early
        cut = "end of examples"
    fits = {"end": str.startswith, "inside": str.__contains__}.get(cut, str.__eq__)
    if not fits(theirs.words, mine.words):
        return "other words"
    if not _examples_fit(mine.examples, theirs.examples, cut):
        return "other examples"
    printed = fits(theirs.printed, mine.printed) and _examples_fit(mine.printed_examples, theirs.printed_examples, cut)
    if not printed:
        return "other typography"
    if theirs.words == mine.words and all(e in theirs.examples for e in mine.examples):
        return "exact"
    return "inside" if cut == "inside" else "start"


def _examples_fit(mine: tuple[str, ...], theirs: tuple[str, ...], cut: str) -> bool:
    """Every example the fragment gives is one of the edition's (examples left out are no evidence);
    the last may stop early when the rule does."""
    def fit(i: int, e: str, t: str) -> bool:
        if cut == "inside":
            return e in t
        return e == t or (cut.startswith("end") and i == len(mine) - 1 and t.startswith(e))
    return all(any(fit(i, e, t) for t in theirs) for i, e in enumerate(mine))


@dataclass(frozen=True, slots=True)
class Window:
    editions: tuple[str, ...]  # every complete edition every rule agrees with, in date order
    rules: int  # how many of the fragment's rules were compared
    verdicts: dict[str, dict[str, str]]  # rule id -> edition -> verdict (every edition compared)

    @property
    def label(self) -> str:
        return label(self.editions)

    @property
    def misses(self) -> dict[str, tuple[str, ...]]:
        """For an empty window: rule id -> the editions it alone agrees with."""
        if self.editions:
            return {}
        return {rule_id: tuple(e for e, v in by.items() if v in AGREE) for rule_id, by in self.verdicts.items()}

    @property
    def closest(self) -> tuple[str, ...]:
        """The window; when it is empty, the editions the most rules agree with."""
        if self.editions:
            return self.editions
        votes = {e: self.agreeing(e) for e in next(iter(self.verdicts.values()), {})}
        best = max(votes.values(), default=0)
        return tuple(e for e, n in votes.items() if n == best and best)

    def agreeing(self, edition: str) -> int:
        return sum(by[edition] in AGREE for by in self.verdicts.values())

    def printed_as(self, edition: str) -> int:
        """How many rules agree with this edition word for word and typography too."""
        return sum(by[edition] == "exact" for by in self.verdicts.values())

    @property
    def exactly(self) -> tuple[str, ...]:
        """The editions of `closest` whose typography the most rules have, when that narrows it."""
        closest = self.closest
        counts = {e: self.printed_as(e) for e in closest}
        best = max(counts.values(), default=0)
        narrowed = tuple(e for e in closest if counts[e] == best)
        return narrowed if best and len(narrowed) < len(closest) else ()

    def disagreeing(self, edition: str) -> dict[str, str]:
        """Rule id -> how it disagrees with this edition."""
        return {rule_id: by[edition] for rule_id, by in self.verdicts.items() if by[edition] not in AGREE}


def label(editions: tuple[str, ...]) -> str:
    if not editions:
        return "no edition"
    return editions[0] if len(editions) == 1 else f"{editions[0]} … {editions[-1]}"


RANK = {v: i for i, v in enumerate(("exact", "other typography", "start", "inside", "other examples",
                                    "other words", "absent"))}


def window(fragment: list[Rule], texts: Texts) -> Window:
    """The complete editions that agree with every rule of `fragment`, contiguous or not (a rule
    reverted to older words matches again). A rule number given twice (two files) must agree with
    both texts."""
    wanted = [r for r in fragment if r.kind not in SKIPPED]
    if not wanted:
        raise PipelineError("the fragment holds no numbered rule to compare")
    last = {r.source: r for r in wanted}  # the last rule of each file may be cut short
    verdicts: dict[str, dict[str, str]] = {}
    for r in wanted:
        cut = "inside" if "partial" in r.flags else "end" if "truncated" in r.flags or last[r.source] is r \
            else "whole"
        mine, at = version(r.text or r.title, r.examples), key(r.rule_id, r.kind)
        found = {edition: verdict(mine, cut, table.get(at)) for edition, table in texts.items()}
        before = verdicts.get(r.rule_id, found)
        verdicts[r.rule_id] = {e: max(found[e], before[e], key=RANK.__getitem__) for e in texts}
    editions = tuple(e for e in texts if all(by[e] in AGREE for by in verdicts.values()))
    return Window(editions, len(wanted), verdicts)


def resolve_auto(rules: list[Rule], docs: list[CleanDoc]) -> tuple[list[Rule], list[CleanDoc]]:
    """Sources whose manifest entry says edition = "auto" take the window their rules match among
    the complete editions of this run; no match leaves them undated, with a warning."""
    auto = {d.source.source_id for d in docs if d.edition == AUTO}
    if not auto:
        return rules, docs
    texts = edition_texts(rules, {d.edition for d in docs if d.complete and d.edition})
    dated: dict[str, tuple[str | None, str | None, str]] = {}
    for source_id in sorted(auto):
        try:
            found = window([r for r in rules if r.source == source_id], texts)
        except PipelineError as e:
            dated[source_id] = (None, None, f"edition auto: {e.message}")
            continue
        start, end = (found.editions[0], found.editions[-1]) if found.editions else (None, None)
        note = (f"edition auto: its {found.rules} rules match {found.label}" if found.editions
                else f"edition auto: no edition has all of its {found.rules} rules with these words")
        dated[source_id] = (start, end if end != start else None, note)
    rules = [replace(r, edition=dated[r.source][0] or "") if r.source in dated else r for r in rules]
    docs = [_redate(d, *dated[d.source.source_id]) if d.source.source_id in dated else d for d in docs]
    return rules, docs


def _redate(doc: CleanDoc, start: str | None, end: str | None, note: str) -> CleanDoc:
    source = replace(doc.source, edition=start, edition_end=end)
    return replace(doc, source=source, edition=start, warnings=doc.warnings + (note,))
