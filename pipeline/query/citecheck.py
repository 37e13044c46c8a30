"""`cite --check`: every CR citation in a tree of files (text, Markdown, HTML, source code), each read against the
edition it was written against, and the stale ones reported with their fate today:

    notes/trample.md:3:14: error: CR 502.9b (2008-02-01 (MOR, Morningtide)) is now 702.19b [renumbered]

Fates: `renumbered` (-> today's number: the one fate `--fix` rewrites), `merged` (into X), `removed` (in edition
E, or split into X, Y), `unknown` (no such rule in that edition: near numbers suggested), `ambiguous` (not in
that edition, and the number named different rules in others), `range` (a range whose rules are no longer one run).
A rule still under its number is current, even when its wording changed since.

The look-up is one compact map, `Fates`: each (number, edition) is decided once and remembered, from the
indexes `publish.remap.Remapper` builds once. The citation grammar is `patterns.CITE` (the one `cite` uses).
"""
from __future__ import annotations

import fnmatch
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline import lookup, registry
from pipeline.publish.remap import Remapper
from pipeline.patterns import CITE, CITED_NUMBER_ONLY
from pipeline.ruleid import expand_range

SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
SNIFF = 8192  # bytes read to tell a binary file (a NUL byte) from a text
MAX_BYTES = 16 * 1024 * 1024  # larger files are no notes, sources or data anyone cites rules in by hand
STALE = ("renumbered", "merged", "removed", "unknown", "ambiguous", "range")


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str  # one of STALE
    message: str
    fix: str = ""  # the number to write instead, when it is certain (renumbered only)


@dataclass(frozen=True, slots=True)
class Finding:
    """One stale citation: where it is (line and column from 1; start and end are offsets in the file's text)."""

    path: str
    line: int
    column: int
    end_column: int
    start: int
    end: int
    form: str  # the whole citation as written: "[CR 502.9b]"
    cited: str  # the number as written: "502.9b"
    edition: str  # the edition it was read against
    status: str
    message: str
    fix: str = ""


@dataclass(slots=True)
class Scanned:
    """What one file gave: its bytes and text (for --fix), its citations' count and its stale ones."""

    path: Path
    data: bytes
    text: str
    citations: int = 0
    findings: list[Finding] = field(default_factory=list)


class Fates:
    """The compact map: (number, edition) -> Verdict (None: current), decided once each, against `target`."""

    def __init__(self, remapper: Remapper, target: str):
        self.remapper, self.target = remapper, target
        self.memo: dict[tuple[str, str], Verdict | None] = {}
        self.numbers: dict[str, set[str]] = {}  # edition -> its numbers
        self.carriers: dict[str, dict[str, list[str]]] = {}  # number -> lineage -> editions that had it so
        for (edition, number), lineage in remapper.lineage.items():
            self.numbers.setdefault(edition, set()).add(number)
            self.carriers.setdefault(number, {}).setdefault(lineage, []).append(edition)

    def known(self, number: str, edition: str) -> bool:
        return number in self.numbers.get(edition, ())

    def verdict(self, number: str, edition: str) -> Verdict | None:
        key = (number, edition)
        if key not in self.memo:
            self.memo[key] = self._decide(number, edition)
        return self.memo[key]

    def _decide(self, number: str, a: str) -> Verdict | None:
        r, b = self.remapper, self.target
        if not self.known(number, a):
            return self._absent(number, a)
        fate = r.remap(number, a, b)
        if fate.numbers and fate.numbers[0] == number:  # merged into the rule that has its number: still right
            return None
        where = f"{number} ({registry.label(a)})"
        if "merged" in fate.marks:
            return Verdict("merged", f"{where} was {fate.detail}")
        if fate.numbers:
            extra = f"; {fate.detail}" if fate.detail else ""
            return Verdict("renumbered", f"{where} is now {fate.numbers[0]}{extra}", fate.numbers[0])
        pieces = r._pieces(r.lineage[a, number], a, b, 0)
        split = f"split into {', '.join(pieces)}; " if pieces else ""
        return Verdict("removed", f"{where} was {split}{fate.detail}")

    def _absent(self, number: str, a: str) -> Verdict:
        """A number edition `a` does not have: a typo, a citation of another edition, or a reused number."""
        close = lookup.suggestions(number, self.numbers.get(a, ()))
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        carriers = self.carriers.get(number, {})
        if not carriers:
            return Verdict("unknown", f"no rule {number} in {registry.label(a)} or any other edition{hint}")
        lives = [self._life(number, lineage, editions) for lineage, editions in carriers.items()]
        if len(lives) == 1:
            return Verdict("unknown", f"no rule {number} in {registry.label(a)}{hint} ({lives[0]})")
        return Verdict("ambiguous", f"no rule {number} in {registry.label(a)}, and the number was reused: "
                                    + "; ".join(lives))

    def _life(self, number: str, lineage: str, editions: list[str]) -> str:
        """"212.1b in 2003-10-01…2009-05-01, now 205.1a"."""
        first, last = min(editions), max(editions)
        fate = self.remapper.follow(lineage, last, self.target, number)
        now = f"now {fate.numbers[0]}" if fate.numbers else fate.detail
        return f"{number} in {first}{'' if first == last else f'…{last}'}, {now}"

    def range_verdict(self, first: str, last: str, dash: str, a: str) -> Verdict | None:
        """A range ("702.19b–d"): rewritten when its rules are still one run, else reported rule by rule."""
        members = expand_range(first, last)
        verdicts = [self.verdict(m, a) for m in members]
        if not any(verdicts):
            return None
        now = [v.fix if v else m for m, v in zip(members, verdicts)]
        if all(v is None or v.fix for v in verdicts) and len(now) > 1 and expand_range(now[0], now[-1]) == tuple(now):
            return Verdict("renumbered", f"{first}{dash}{last[-1]} ({registry.label(a)}) is now "
                                         f"{now[0]}{dash}{now[-1][-1]}", f"{now[0]}{dash}{now[-1][-1]}")
        said = ", ".join(f"{m} -> {v.fix}" if v and v.fix else f"{m} {v.status if v else 'current'}"
                         for m, v in zip(members, verdicts))
        return Verdict("range", f"{first}{dash}{last[-1]} ({registry.label(a)}) is no longer one run: {said}")


def walk(paths: Iterable[Path], globs: tuple[str, ...] = (), excludes: tuple[str, ...] = ()) -> Iterator[Path]:
    """The files under `paths`, sorted, without .git (and .hg, .svn), keeping those a --glob names (all when
    none is given) and no --exclude names; a pattern matches a file's name or its path relative to the
    folder given. A file given by name is kept unless excluded."""
    def wanted(rel: str, name: str, patterns: tuple[str, ...]) -> bool:
        return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)

    for root in paths:
        if not root.is_dir():
            if not wanted(str(root), root.name, excludes):
                yield root
            continue
        for folder, dirs, files in os.walk(root):
            base = Path(folder)
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                             and not wanted((base / d).relative_to(root).as_posix(), d, excludes))
            for name in sorted(files):
                rel = (base / name).relative_to(root).as_posix()
                if (not globs or wanted(rel, name, globs)) and not wanted(rel, name, excludes):
                    yield base / name


def read_text(path: Path) -> tuple[bytes, str] | str:
    """A file's bytes and its text, or why it is skipped: "binary", "not UTF-8", "too large", "a symbolic link"."""
    if path.is_symlink():
        return "a symbolic link"
    if path.stat().st_size > MAX_BYTES:
        return "too large"
    data = path.read_bytes()
    if b"\0" in data[:SNIFF]:
        return "binary"
    try:
        return data, data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "not UTF-8"


def check_text(scanned: Scanned, fates: Fates, edition_of: Callable[[int], str]) -> None:
    """Every citation of one file's text, its stale ones added as findings; `edition_of(line)` is the edition
    that line was written against."""
    text, line, line_pos, line_start = scanned.text, 1, 0, 0
    for m in CITE.finditer(text):
        newlines = text.count("\n", line_pos, m.start())
        if newlines:
            line += newlines
            line_start = text.rfind("\n", 0, m.start()) + 1
        line_pos = m.start()
        form = m.lastgroup
        a = edition_of(line)
        for n in CITED_NUMBER_ONLY.finditer(m[form]):
            start = m.start(form) + n.start()
            verdict = _verdict(n[0], form, a, fates)
            if verdict is False:
                continue
            scanned.citations += 1
            if verdict is not None:
                scanned.findings.append(Finding(
                    str(scanned.path), line, start - line_start + 1, start - line_start + 1 + len(n[0]), start,
                    start + len(n[0]), m[0], n[0], a, verdict.status, verdict.message, _cased(n[0], verdict.fix)))


def _verdict(written: str, form: str, a: str, fates: Fates) -> Verdict | None | bool:
    """The verdict on one number as written; False when it is no citation (a bare number no rule of `a` has)."""
    dash = "–" if "–" in written else "-"
    first, _, letter = written.replace("–", "-").partition("-")
    first = lookup.normalise(first)
    if form == "bare" and not fates.known(first, a):
        return False  # "$100.50", "version 702.5": only a number of the edition is read as a citation
    if letter:
        return fates.range_verdict(first, first[:-1] + letter, dash, a)
    return fates.verdict(first, a)


def _cased(written: str, fix: str) -> str:
    """The new number in the case the old was written in ("205.1A" -> "205.1B")."""
    return fix[:-1] + fix[-1].upper() if fix and written[-1:].isupper() and fix[-1:].isalpha() else fix


def scan(paths: Iterable[Path], fates: Fates, edition_for: Callable[[Path], Callable[[int], str]],
         globs: tuple[str, ...] = (), excludes: tuple[str, ...] = (),
         skipped: Counter | None = None) -> Iterator[Scanned]:
    """Each readable file's citations checked; unreadable ones counted in `skipped` by reason."""
    for path in walk(paths, globs, excludes):
        try:
            read = read_text(path)
        except OSError as e:
            read = e.strerror or "unreadable"
        if isinstance(read, str):
            if skipped is not None:
                skipped[read] += 1
            continue
        scanned = Scanned(path, *read)
        check_text(scanned, fates, edition_for(path))
        yield scanned
