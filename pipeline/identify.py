"""Date an undated fragment: the window of editions in which every rule it holds had exactly that
text (a partial or truncated rule only has to agree on what it has)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pipeline import load
from pipeline.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.records import CleanDoc, Rule

SKIPPED = ("commentary", "fragment", "ruling")  # not rules text: notes, orphan text, rulings
AUTO = "auto"


@dataclass(frozen=True, slots=True)
class Window:
    editions: tuple[str, ...]  # every complete edition that matches, in date order
    rules: int  # how many of the fragment's rules were compared
    misses: dict[str, tuple[str, ...]]  # for an empty window: rule id -> the editions it alone matches

    @property
    def label(self) -> str:
        if not self.editions:
            return "no edition"
        return self.editions[0] if len(self.editions) == 1 else f"{self.editions[0]} … {self.editions[-1]}"


Texts = dict[str, dict[str, tuple[str, tuple[str, ...]]]]  # edition -> rule id -> (compare, examples)


def edition_texts(rules: list[Rule], complete: set[str]) -> Texts:
    """The comparison texts of every rule of the complete editions."""
    out: Texts = {e: {} for e in sorted(complete)}
    for r in rules:
        if r.edition in complete and r.occurrence == 1 and r.kind not in SKIPPED:
            out[r.edition][key(r.rule_id, r.kind)] = entry(r.compare, r.examples)
    return out


def key(rule_id: str, kind: str) -> str:
    """How a rule is looked up across editions and formats: its number, or a glossary term folded
    as its text is ('"As though"' in one edition's TXT is '“As though”' in its PDF and the next TXT)."""
    return compare_form(rule_id) if kind == "glossary" else rule_id


def window(fragment: list[Rule], texts: Texts) -> Window:
    """The complete editions that hold every rule of `fragment` with the same words, contiguous
    or not (a rule reverted to older words matches again). A rule number given twice (two files)
    must match with both texts."""
    wanted = [r for r in fragment if r.kind not in SKIPPED]
    if not wanted:
        raise PipelineError("the fragment holds no numbered rule to compare")
    alone: dict[str, set[str]] = {}
    for r in wanted:
        mine, inside = entry(r.compare, r.examples), "partial" in r.flags or "truncated" in r.flags
        at = key(r.rule_id, r.kind)
        agree = {edition for edition, table in texts.items() if _agrees(mine, inside, table.get(at))}
        alone[r.rule_id] = alone[r.rule_id] & agree if r.rule_id in alone else agree
    matching = set.intersection(*alone.values())
    editions = tuple(e for e in texts if e in matching)
    misses = {k: tuple(e for e in texts if e in v) for k, v in alone.items()}
    return Window(editions, len(wanted), {} if editions else misses)


def _agrees(mine: tuple[str, tuple[str, ...]], inside: bool, theirs: tuple[str, tuple[str, ...]] | None) -> bool:
    """A rule's text and examples are an edition's (`inside`: a partial or truncated rule's are in its)."""
    if theirs is None:
        return False
    (text, ours), (compare, examples) = mine, theirs
    if inside:
        return text in compare and all(any(e in t for t in examples) for e in ours)
    return text == compare and ours == examples


def entry(compare: str, examples) -> tuple[str, tuple[str, ...]]:
    """What is compared of a rule: its comparison form's words and its examples' (every side alike)."""
    return words(compare), tuple(words(compare_form(e)) for e in examples)


def words(text: str) -> str:
    """A text's words with single spaces: where a definition's paragraphs break (a PDF has no blank
    lines to go by) does not change its words."""
    return " ".join(text.split())


def read_processed(processed: Path) -> Texts:
    """Edition texts from a finished run's rules and editions tables (Parquet)."""
    for name in ("rules", "editions"):
        if not (processed / f"{name}.parquet").exists():
            raise PipelineError(f"{name}.parquet is missing: run `python -m pipeline run` first", path=processed)
    complete = {row["edition"] for row in load.rows(processed, "editions", only=["edition", "status"])
                if row["status"] == "complete"}
    out: Texts = {e: {} for e in sorted(complete)}
    for row in load.rows(processed, "rules", only=["edition", "rule_id", "kind", "occurrence", "title", "text",
                                                  "examples"]):
        if row["edition"] in complete and row["occurrence"] == 1 and row["kind"] not in SKIPPED:
            out[row["edition"]][key(row["rule_id"], row["kind"])] = entry(compare_form(row["text"] or row["title"]),
                                                                          row["examples"])
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


def identify_files(paths: list[Path], processed: Path, fmt: str | None = None) -> Window:
    """The window of the editions in `processed` that every rule of these files matches."""
    from pipeline.ingest import read_source
    from pipeline.manifest import Entry, read_manifest
    from pipeline.segment import ParagraphCache, segment
    from pipeline.sources import ADAPTERS

    for path in paths:  # a pipe would be waited on for ever
        if not path.is_file():
            raise PipelineError("not a regular file (a pipe, socket or device)", path=path)
    texts = read_processed(processed)
    docs = []
    for path in paths:
        entry = read_manifest(path.parent).get(path.resolve()) if fmt is None else None
        if entry is None and fmt is not None:
            entry = Entry(path.resolve(), fmt, "copy", None, None, "en", "", "", 0)
        source = read_source(path, entry)
        docs.append(ADAPTERS[source.format](source))
    cache = ParagraphCache()
    cache.analyse_docs(docs)
    return window([r for d in docs for r in segment(d, cache)], texts)
