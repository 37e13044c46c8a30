"""Date an undated fragment: the window of editions whose rules agree with every rule it holds.

A fragment is partial by nature, so agreement is lenient where a copy is: examples it leaves out are no
evidence, the last rule of a file (or one the file stops inside) may be the start of the edition's text,
text before the first number may be the end of the rule before, and typography (quotes, dashes) is
folded. Exact typography is then a tie-breaker: the editions that print the fragment's quotes and dashes
in the most rules are the closest. Editions are read from the published crdiff.sqlite, only the rules
the fragment names (pipeline/query/history.py reads it the same way).
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from pipeline.ingest.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.query.history import query
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


def read_processed(processed: Path, fragment: list[Rule]) -> Texts:
    """The versions, in every complete edition of a finished run, of the rules `fragment` names (glossary
    terms: every term, their spelling folded), from crdiff.sqlite through its rule_id index."""
    return query(processed, lambda db: _texts(db, fragment))


def _texts(db: sqlite3.Connection, fragment: list[Rule]) -> Texts:
    complete = [e for (e,) in db.execute("SELECT edition FROM editions WHERE status = 'complete' ORDER BY edition")]
    out: Texts = {e: {} for e in complete}
    ids = sorted({r.rule_id for r in fragment if r.kind not in SKIPPED + ("glossary",)})
    select = ("SELECT r.edition, r.rule_id, r.kind, r.title, t.text, t.examples FROM rules AS r "
              "LEFT JOIN texts AS t ON t.text_id = r.text_id WHERE r.occurrence = 1 AND ")
    queries = [(select + f"r.rule_id IN ({', '.join('?' * len(ids))})", ids)] if ids else []
    if any(r.kind == "glossary" for r in fragment):
        queries.append((select + "r.kind = 'glossary'", []))
    for sql, params in queries:
        for edition, rule_id, kind, title, text, examples in db.execute(sql, params):
            if edition in out and kind not in SKIPPED:
                out[edition][key(rule_id, kind)] = version(text or title or "", json.loads(examples or "[]"))
    return out


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


@dataclass(frozen=True, slots=True)
class Identified:
    files: tuple[Path, ...]
    read_as: tuple[tuple[str, str], ...]  # per file: what it was read as, and how that was chosen
    window: Window


def identify_files(paths: list[Path], processed: Path, fmt: str | None = None) -> Identified:
    """The window of the editions in `processed` that every rule of these files (one fragment) agrees with."""
    from pipeline.segment import fragment
    read = [fragment.read(path, fmt) for path in paths]
    rules = fragment.rules_of([doc for doc, _, _ in read])
    wanted = [r for r in rules if r.kind not in SKIPPED]
    if not wanted:
        what = "; ".join(f"{doc.source.path.name}: {what} ({how})" for doc, what, how in read)
        raise PipelineError(f"the fragment holds no numbered rule to compare (read as {what})")
    return Identified(tuple(paths), tuple((what, how) for _, what, how in read),
                      window(rules, read_processed(processed, wanted)))


def summary(found: Identified) -> dict:
    """What `identify` reports of one fragment, as data (the --json output; the text is made from it):
    the window, the closest editions (the window, or the editions most rules agree with), those whose
    typography the most rules have, and how each rule agrees with the best of them, or not."""
    w = found.window
    closest, exactly = w.closest, w.exactly
    best = (exactly or closest or (None,))[0]
    return {
        "files": [str(p) for p in found.files], "rules": w.rules,
        "read_as": [{"as": what, "chosen_by": how} for what, how in found.read_as],
        "window": {"first": w.editions[0], "last": w.editions[-1], "editions": list(w.editions)} if w.editions
        else None,
        "closest": list(closest), "agree": w.agreeing(closest[0]) if closest else 0,
        "exactly": {"editions": list(exactly), "rules": w.printed_as(exactly[0]),
                    "others": max(w.printed_as(e) for e in closest if e not in exactly)} if exactly else None,
        "compared_with": best,
        "rules_by_verdict": {v: [rule_id for rule_id, by in w.verdicts.items() if by[best] == v]
                             for v in RANK if best and any(by[best] == v for by in w.verdicts.values())},
        "alone": {rule_id: list(editions) for rule_id, editions in w.misses.items()},
    }


def fragments(paths: list[Path], each: bool) -> list[list[Path]]:
    """The fragments to date: each file of a folder alone (hidden files, sub-folders and a manifest.toml
    left out); the
    files named, together as one fragment, or each alone."""
    from pipeline.ingest.discover import IGNORED
    groups: list[list[Path]] = []
    named: list[Path] = []
    for path in paths:
        if path.is_dir():
            groups += [[p] for p in sorted(path.iterdir())
                       if not p.name.startswith(".") and p.name not in IGNORED and not p.is_dir()]
        else:
            named.append(path)
    if named:
        groups = ([[p] for p in named] if each else [named]) + groups
    if not groups:
        raise PipelineError("no files to identify in " + ", ".join(map(str, paths)))
    return groups
