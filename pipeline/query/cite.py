"""Citation remapping: every rule a text cites, numbered as in the edition it was written against,
followed along its lineage to another edition (`python -m pipeline cite`), and marked where the rule
changed meaning (a `modified` step on the way), was split, merged into another, or removed.

    [CR 204.1a] written in 2011  ->  [CR 205.1a] today (renumbered)

Only regular expressions find the citations (no spaCy: the command must start fast). The datasets
are read in one place, `from_processed`, so that a typed loader can replace it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline import lookup
from pipeline.errors import PipelineError
from pipeline.patterns import CITE, CITED_NUMBER_ONLY, LOOKS_LIKE_A_PATH, SUBRULE_LETTERS

UNNUMBERED = ("commentary", "glossary")  # records a citation by number cannot mean
OFFICIAL = ("complete", "truncated")  # editions whose numbering a writer cites
ENDINGS = ("removed", "merged")
# The status shown for a citation: the first of its marks in this order.
RULE_COLUMNS = ["edition", "rule_id", "kind", "lineage_id"]
CHANGE_COLUMNS = ["from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "change"]
SEVERITY = ("unknown", "removed", "not in edition", "not yet", "merged", "split", "modified", "renumbered")


@dataclass(frozen=True, slots=True)
class Fate:
    """What became of one cited rule: its number(s) in the target edition (its own first, then the
    pieces split off it), and the marks that say how it got there."""

    numbers: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    detail: str = ""

    @property
    def status(self) -> str:
        return next((m for m in SEVERITY if m in self.marks), "unchanged")


@dataclass(slots=True)
class Result:
    text: str
    citations: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # bare dotted numbers that name no rule: not citations


class Remapper:
    """Lineages and change classes, indexed for look-ups by (edition, number) and by lineage."""

    def __init__(self, rules: Iterable[tuple[str, str, str, str]],
                 changes: Iterable[tuple[str, str, str, str, str, str]], editions: Iterable[tuple[str, str]]):
        self.lineage: dict[tuple[str, str], str] = {}  # (edition, rule_id) -> lineage_id
        self.number: dict[tuple[str, str], str] = {}  # (lineage_id, edition) -> rule_id
        self.versions: dict[str, list[tuple[str, str]]] = {}  # lineage_id -> [(edition, rule_id)]
        held: set[str] = set()
        for edition, rule_id, kind, lineage in rules:
            if kind in UNNUMBERED or not lineage:
                continue
            held.add(edition)
            self.lineage.setdefault((edition, rule_id), lineage)
            if (lineage, edition) not in self.number:
                self.number[lineage, edition] = rule_id
                self.versions.setdefault(lineage, []).append((edition, rule_id))
        self.steps: dict[str, list[tuple[str, str, str, str]]] = {}  # lineage -> [(to, change, old, new)]
        self.pieces: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (from, old) -> [(to, piece lineage)]
        for a, b, lineage, old, new, change in changes:
            self.steps.setdefault(lineage, []).append((b, change, old, new))
            if change == "split":
                self.pieces.setdefault((a, old), []).append((b, lineage))
        statuses = dict(editions)
        official = sorted(e for e in held if statuses.get(e) in OFFICIAL)
        self.editions = official or sorted(held)  # a run of fragments only: their own numbers
        complete = [e for e in self.editions if statuses.get(e) == "complete"]
        self.latest = (complete or self.editions or [""])[-1]

    def spans(self, lineage: str) -> list[list[str]]:
        """The numbers a lineage had, as [first, last, number] runs of consecutive editions of `editions`
        ([["2003-10-01", "2009-05-01", "212.1b"], ["2009-07-11", "2013-05-01", "204.1a"], ...])."""
        order = {e: i for i, e in enumerate(self.editions)}
        out: list[list[str]] = []
        last = -2
        for edition, rule_id in sorted(self.versions.get(lineage, ())):
            i = order.get(edition)
            if i is None:  # a fragment or copy among official editions: not a period of its own
                continue
            if out and out[-1][2] == rule_id and i == last + 1:
                out[-1][1] = edition
            else:
                out.append([edition, edition, rule_id])
            last = i
        return out

    def edition(self, date: str) -> tuple[str, str]:
        """The edition a date or set code names, and a note when it is not one (the edition in force then)."""
        if not self.editions:
            raise PipelineError("the datasets hold no numbered rules: run `python -m pipeline run` first")
        return lookup.edition(date, self.editions)

    def remap(self, rule_id: str, a: str, b: str) -> Fate:
        """Where rule `rule_id` of edition `a` is in edition `b`."""
        lineage = self.lineage.get((a, rule_id))
        if lineage is None:
            close = lookup.suggestions(rule_id, {n for e, n in self.lineage if e == a})
            return Fate((), ("unknown",),
                        f"no rule {rule_id} in {a}" + (f"; did you mean {', '.join(close)}?" if close else ""))
        return self.follow(lineage, a, b, rule_id)

    def follow(self, lineage: str, a: str, b: str, cited: str = "", depth: int = 0) -> Fate:
        """A lineage from edition `a` to edition `b` (either way in time)."""
        early, late = sorted((a, b))
        steps = [s for s in self.steps.get(lineage, ()) if early < s[0] <= late]
        marks = ["modified"] if any(s[1] == "modified" for s in steps) else []
        now = self.number.get((lineage, b))
        if now is not None:
            cited = cited or self.number.get((lineage, a), now)
            if now != cited:
                marks.append("renumbered")
            pieces = self._pieces(lineage, a, b, depth) if a < b else []
            if pieces:
                marks.append("split")
            detail = f"pieces split off: now {', '.join(pieces)}" if pieces else ""
            return Fate((now, *pieces), tuple(marks), detail)
        end = next((s for s in steps if s[1] in ENDINGS), None) if a < b else None
        if end and end[1] == "merged" and depth < 5:
            into = self.lineage.get((end[0], end[3]))
            later = self.follow(into, end[0], b, end[3], depth + 1) if into else Fate()
            return Fate(later.numbers, ("merged", *marks, *later.marks),
                        f"merged into {end[3]} in {end[0]}" + (f" (now {later.numbers[0]})" if later.numbers else ""))
        if end:
            return Fate((), ("removed", *marks), f"removed in {end[0]}")
        if a > b:
            return Fate((), ("not yet", *marks), f"not yet in {b}")
        return Fate((), ("not in edition", *marks), f"{b} does not hold it")

    def _pieces(self, lineage: str, a: str, b: str, depth: int) -> list[str]:
        """The numbers in `b` of the pieces cut from this lineage between `a` and `b`."""
        out = []
        for edition, rule_id in self.versions.get(lineage, ()):
            if a <= edition < b and depth < 5:
                for to, piece in self.pieces.get((edition, rule_id), ()):
                    if to <= b and piece != lineage:
                        out += [n for n in self.follow(piece, to, b, "", depth + 1).numbers if n not in out]
        return out


def from_processed(processed: Path) -> Remapper:
    """The one place `cite` reads the datasets (through the typed loader): rules (numbers and
    lineages), changes, editions."""
    from pipeline.publish import load, transaction as publish

    def read(name: str, columns: list[str]):
        if not (processed / f"{name}.parquet").exists():
            raise publish.missing(processed, f"{name}.parquet")
        return load.read(processed, name, columns=columns).to_pandas()[columns]

    rules = read("rules", RULE_COLUMNS)
    return from_tables(rules.itertuples(index=False), read("changes", CHANGE_COLUMNS),
                       read("editions", ["edition", "status"]))


def from_tables(rules: Iterable, changes, editions) -> Remapper:
    """A Remapper from tables already read: rules as (edition, rule_id, kind, lineage_id) tuples or
    rules.csv dicts; changes and editions as their DataFrames."""
    rows = ((r["edition"], r["rule_id"], r["kind"], r["lineage_id"]) if isinstance(r, dict) else r for r in rules)
    return Remapper(rows, changes[CHANGE_COLUMNS].itertuples(index=False),
                    zip(editions["edition"], editions["status"]))


def now(remapper: Remapper, lineage: str, written: str) -> str:
    """What a commentary written in edition (or on date) `written` should add to a citation of
    `lineage`: "now 205.1a", "now 300.1, merged", "removed in 2013-05-01"; "" when nothing is known."""
    if not lineage or not remapper.editions:
        return ""
    try:
        a = remapper.edition(written)[0]
    except PipelineError:  # written before the first edition in the run
        return ""
    fate = remapper.follow(lineage, a, remapper.latest)
    if not fate.numbers:
        return fate.detail if fate.status in ("removed",) else ""
    extra = [m for m in ("merged", "split") if m in fate.marks]
    return f"now {', '.join(fate.numbers)}" + (f", {', '.join(extra)}" if extra else "")


def line_notes(remapper: Remapper, text: str, written: str) -> list[str]:
    """For a commentary source's line: each citation in it with its number now ("CR 204.1a: now 205.1a")."""
    try:
        a = remapper.edition(written)[0]
    except PipelineError:
        return []
    out = []
    for c in cite(text, remapper, a, remapper.latest).citations:
        if c["numbers"] and c["numbers"][0] != c["cited"]:
            out.append(f"{c['cited']}: now {', '.join(c['numbers'])}")
        elif c["status"] == "removed":
            out.append(f"{c['cited']}: {c['detail']}")
    return out


def cite(text: str, remapper: Remapper, a: str, b: str) -> Result:
    """`text` with every citation's number(s) rewritten from edition `a` to edition `b`, each in its
    own form ("[CR 204.1a]" stays a tag), and the list of what became of each."""
    out, last, result = [], 0, Result("")
    line, line_pos = 1, 0
    for m in CITE.finditer(text):
        line += text.count("\n", line_pos, m.start())
        line_pos = m.start()
        form = m.lastgroup
        base = m.start(form)
        for n in CITED_NUMBER_ONLY.finditer(m[form]):
            start, end = base + n.start(), base + n.end()
            cited = lookup.normalise(n[0].replace("–", "-"))
            if form == "bare" and (a, _first(cited)) not in remapper.lineage:
                result.skipped.append(n[0])  # "$100.50", "version 702.5": a rule of `a` or not a citation
                continue
            written, fate = _rewrite(cited, remapper, a, b)
            out += [text[last:start], written]
            last = end
            result.citations.append({"line": line, "form": m[0], "cited": n[0], "written": written,
                                     "numbers": list(fate.numbers), "status": fate.status,
                                     "marks": list(fate.marks), "detail": fate.detail})
    out.append(text[last:])
    result.text = "".join(out)
    return result


def _rewrite(cited: str, remapper: Remapper, a: str, b: str) -> tuple[str, Fate]:
    """The number to write for `cited` (kept as written when it has none in `b`); a range
    ("702.19b-c") is rewritten when its rules are still one run of subrules."""
    first, _, last_letter = cited.partition("-")
    if not last_letter:
        fate = remapper.remap(cited, a, b)
        return (fate.numbers[0] if fate.numbers else cited), fate
    members = _expand(first, first[:-1] + last_letter)
    fates = [remapper.remap(x, a, b) for x in members]
    now = [f.numbers[0] for f in fates if f.numbers]
    marks = tuple(dict.fromkeys(m for f in fates for m in f.marks))
    detail = "; ".join(f"{x}: {f.status}" + (f" ({f.detail})" if f.detail else "")
                       + (f" -> {f.numbers[0]}" if f.numbers else "")
                       for x, f in zip(members, fates) if f.marks)
    if len(now) == len(members) and now[0][:-1] == now[-1][:-1] and now == _expand(now[0], now[-1]):
        written = now[0] if len(now) == 1 else f"{now[0]}-{now[-1][-1]}"
        return written, Fate(tuple(now), marks, detail)
    return cited, Fate(tuple(now), marks + ("range broken",), detail or "its rules are no longer one run")


def _first(number: str) -> str:
    return number.partition("-")[0]


def _expand(first: str, last: str) -> list[str]:
    """702.19b..702.19d -> [702.19b, 702.19c, 702.19d] (subrules skip l and o)."""
    head, a, z = first[:-1], first[-1:], last[-1:]
    if head != last[:-1] or a not in SUBRULE_LETTERS or z not in SUBRULE_LETTERS or a > z:
        return [first, last] if first != last else [first]
    return [head + c for c in SUBRULE_LETTERS[SUBRULE_LETTERS.index(a):SUBRULE_LETTERS.index(z) + 1]]


def read_input(source: str) -> tuple[str, str]:
    """The text to rewrite and what to call it: a file's contents (UTF-8), standard input for "-",
    else the argument itself."""
    import sys
    if source == "-":
        return sys.stdin.read(), "<stdin>"
    path = Path(source)
    if "\n" in source or len(source) > 1024 or not path.is_file():
        if LOOKS_LIKE_A_PATH.fullmatch(source):  # ./notes.txt that is not there: a typo, not a text to rewrite
            raise PipelineError("no such file (to rewrite a text, pass the text itself, or - for standard input)",
                                path=path)
        return source, "<text>"
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig"), str(path)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise PipelineError(f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}): save it as UTF-8",
                            path=path, line=line) from None


def run(source: str, as_of: str, to: str | None, processed: Path) -> dict:
    """The whole `cite` command as data: the editions, the rewritten text and every citation."""
    text, name = read_input(source)
    remapper = from_processed(processed)
    a, note_a = remapper.edition(as_of)
    b, note_b = remapper.edition(to) if to else (remapper.latest, "")
    result = cite(text, remapper, a, b)
    notes = [n for n in (note_a, note_b) if n]
    if name == "<text>" and not result.citations and not any(c.isspace() for c in source):
        notes.append(f"no file named {source!r}: read as text")
    if result.skipped:
        notes.append(f"{len(result.skipped)} bare numbers name no rule of {a} and were left alone: "
                     f"{', '.join(result.skipped[:5])}{' ...' if len(result.skipped) > 5 else ''}")
    return {"input": name, "as_of": as_of, "from_edition": a, "to_edition": b, "notes": notes,
            "text": result.text, "citations": result.citations, "skipped": result.skipped}
