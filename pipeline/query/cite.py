"""Citation remapping: every rule a text cites, numbered as in the edition it was written against,
followed along its lineage to another edition (`python -m pipeline cite`), and marked where the rule
changed meaning (a `modified` step on the way), was split, merged into another, or removed.

    [CR 204.1a] written in 2011  ->  [CR 205.1a] today (renumbered)

Only regular expressions find the citations (no spaCy: the command must start fast). The datasets
are read in one place, `from_processed`, so that a typed loader can replace it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline import lookup
from pipeline.errors import PipelineError
from pipeline.patterns import CITE, CITED_NUMBER_ONLY, LOOKS_LIKE_A_PATH
from pipeline.publish.remap import CHANGE_COLUMNS, RULE_COLUMNS, Fate, Remapper, from_tables
from pipeline.ruleid import expand_range



@dataclass(slots=True)
class Result:
    text: str
    citations: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # bare dotted numbers that name no rule: not citations


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
    # The last member is cut from the text ("702.19-c" is 702.19 .. 702.1c, left as two numbers), not
    # re-written from RuleId's parts, which would read it as 702.19 .. 702.19c.
    members = _members(first, first[:-1] + last_letter)
    fates = [remapper.remap(x, a, b) for x in members]
    now = [f.numbers[0] for f in fates if f.numbers]
    marks = tuple(dict.fromkeys(m for f in fates for m in f.marks))
    detail = "; ".join(f"{x}: {f.status}" + (f" ({f.detail})" if f.detail else "")
                       + (f" -> {f.numbers[0]}" if f.numbers else "")
                       for x, f in zip(members, fates) if f.marks)
    if len(now) == len(members) and now[0][:-1] == now[-1][:-1] and now == _members(now[0], now[-1]):
        written = now[0] if len(now) == 1 else f"{now[0]}-{now[-1][-1]}"
        return written, Fate(tuple(now), marks, detail)
    return cited, Fate(tuple(now), marks + ("range broken",), detail or "its rules are no longer one run")


def _first(number: str) -> str:
    return number.partition("-")[0]


def _members(first: str, last: str) -> list[str]:
    """702.19b..702.19d -> [702.19b, 702.19c, 702.19d]: ruleid.expand_range, each member written with the
    head as typed (`first` and `last` differ in their last letter only). The two disagree, kept so here:
    expand_range writes the number it parsed ("702.02b" as 702.2b), a citation keeps its writer's digits;
    and cite's own expansion (before this) took any text ending in a letter ("702b-d"), which no citation
    or rule number here can be."""
    return [first[:-1] + m[-1] for m in expand_range(first, last)]


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
