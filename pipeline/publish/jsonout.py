"""JSON for tools (bots, rules sites, citation checkers): small files keyed the way they look things up,
written by the export stage into `processed/json/` beside their JSON Schemas (pipeline/data/schemas/).

- `current.json`: the latest complete edition keyed by rule number (kind, title, text, examples, parent,
  children, references, lineage) and its glossary keyed by term;
- `changes.json`: each step between editions, its counts by class and its changed rules only (old and new
  numbers, class, lineage, the word operations of the redline);
- `lineages.json`: every number each lineage had, as runs of editions, and how it ended (what citation tools
  need: a number of an edition -> its lineage -> its number in another edition);
- `editions/<date>.json.gz`: every edition in the form of `current.json`, gzipped (one file each).

Every file is compact JSON (UTF-8, no spaces), its keys in a fixed order: the same run gives the same bytes.
"""
from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

from pipeline import registry
from pipeline.errors import PipelineError
from pipeline.publish import transaction as publish
from pipeline.publish.remap import UNNUMBERED, Remapper
from pipeline.records import Edition, Rule, edition_status, rule_key
from pipeline.ruleid import sort_key
from pipeline.atomic import write_atomic

FOLDER = "json"
SCHEMAS = Path(__file__).resolve().parent.parent / "data" / "schemas"
FILES = {  # file -> (its schema, what it holds): the data package's resources
    "current.json": ("edition.schema.json", "The latest complete edition keyed by rule number, and its glossary "
                                            "keyed by term."),
    "changes.json": ("changes.schema.json", "Each step between editions: counts by class and the changed rules "
                                            "(old and new numbers, class, lineage, redline operations)."),
    "lineages.json": ("lineages.schema.json", "Every number each lineage had, edition by edition, and its end."),
}
EDITIONS = "editions"  # editions/<date>.json.gz, each in edition.schema.json's form
ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def remapper(rules: list[Rule], history, eds: list[Edition], steps: bool = True) -> Remapper:
    """The cite module's index of lineages, from the records a run holds (not from its tables); without
    `steps`, its numbers alone (what the files here need: indexing every change too cost 0.2 s of adding the
    110th simulated edition)."""
    rows = ((r.edition, r.rule_id, r.kind, history.lineage.get(rule_key(r), "")) for r in rules)
    changes = ((c.from_edition, c.to_edition, c.lineage_id, c.old_rule_id, c.new_rule_id, c.change)
               for c in history.changes) if steps else ()
    return Remapper(rows, changes, ((e.edition, edition_status(e)) for e in eds))


def write(out: Path, rules: list[Rule], history, eds: list[Edition], published: Path | None = None,
          unchanged: set[str] = frozenset(), steps: tuple[str, list] | None = None) -> list[list]:
    """Every JSON file of a run into `out/json/` (a staging folder's). An edition's file that `published`
    (the published folder) already has with the same content is copied, not compressed again (the
    compression was a fifth of the export stage's time, and a new edition leaves the others alone); the
    `unchanged` editions' files (pipeline/publish/grow.py: their rules, lineages and status are the published
    ones) are left in place and listed again (pipeline/publish/transaction.py `keep`), neither made nor read
    nor copied (110 simulated editions: 23 MB). `steps`: (the tail's first edition, where each step is in the
    published changes.json): the steps into an edition before the tail are the published ones, copied
    (`changes_json`). Returns where each step is in the changes.json written, for the next run."""
    folder = out / FOLDER
    index = remapper(rules, history, eds, steps=False)
    listed = _published_editions(published) if published else {}
    left = {f"{FOLDER}/{EDITIONS}/{e.edition}.json.gz" for e in eds if e.edition in unchanged
            and e.edition != index.latest} & set(listed)
    made = {e.edition for e in eds if f"{FOLDER}/{EDITIONS}/{e.edition}.json.gz" not in left}
    by_edition: dict[str, list[Rule]] = {}
    for r in rules:
        if r.edition in made:
            by_edition.setdefault(r.edition, []).append(r)
    lineage_of = lambda r: history.lineage.get(rule_key(r), "")  # noqa: E731
    for e in eds:
        name = f"{EDITIONS}/{e.edition}.json.gz"
        if e.edition not in made:
            continue
        doc = edition_document(e.edition, edition_status(e), by_edition.get(e.edition, []), lineage_of)
        raw = (ENCODE(doc) + "\n").encode("utf-8")
        old = _published_bytes(published, f"{FOLDER}/{name}") if f"{FOLDER}/{name}" in listed else None
        packed = old if old is not None and gzip.decompress(old) == raw else \
            gzip.compress(raw, compresslevel=9, mtime=0)
        write_atomic(folder / name, packed)
        if e.edition == index.latest:
            write_atomic(folder / "current.json", raw)
    if left:
        publish.keep_also(out, {name: listed[name] for name in sorted(left)})
    kept = None
    if steps is not None and published is not None:
        try:
            kept = (steps[0], steps[1], (published / FOLDER / "changes.json").read_bytes())
        except OSError:
            kept = None
    text, marks = changes_json(history.changes, index.editions, kept)
    write_atomic(folder / "changes.json", text)
    write_atomic(folder / "lineages.json", ENCODE(lineages_document(index, history.changes)) + "\n")
    for name in sorted({schema for schema, _ in FILES.values()}):
        write_atomic(folder / name, (SCHEMAS / name).read_bytes())
    return marks


def changes_json(changes, editions: list[str], kept: tuple[str, list, bytes] | None = None) -> tuple[bytes, list]:
    """changes.json's bytes, and each step's [from, to, start, end] in them. With `kept` (the tail's first
    edition, the published file's marks and bytes), a step into an edition before the tail is the published
    step's bytes, and only the later changes are gone through: adding the 110th simulated edition went through
    all 312,000 to make 13 steps anew and 109 as they were. The steps are in (from, to) order either way."""
    start, made = "", {}
    parts: dict[tuple[str, str], bytes] = {}
    if kept is not None:
        start, marks, data = kept
        try:
            parts = {(a, b): data[i:j] for a, b, i, j in marks if b < start}
        except (TypeError, ValueError):
            parts = {}
        if not all(part.startswith(b"{") and part.endswith(b"}") for part in parts.values()):
            parts = {}  # not the file the marks describe
    todo = [c for c in changes if c.to_edition >= start] if parts else changes
    for step in changes_document(todo, editions)["steps"]:
        made[step["from"], step["to"]] = ENCODE(step).encode("utf-8")
    if set(made) & set(parts):  # a step into the tail that was published: made whole
        return changes_json(changes, editions)
    parts.update(made)
    head = f'{{"editions":{ENCODE(editions)},"steps":['.encode("utf-8")
    out, marks, at = [head], [], len(head)
    for n, key in enumerate(sorted(parts)):
        if n:
            out.append(b",")
            at += 1
        out.append(parts[key])
        marks.append([*key, at, at + len(parts[key])])
        at += len(parts[key])
    out.append(b"]}\n")
    return b"".join(out), marks


def _published_editions(published: Path) -> dict[str, list]:
    """The listed entries of the published editions' files, only those the published run listed and that
    are still the files it wrote."""
    listed = publish.listing(published) or {}
    names = [n for n in listed if n.startswith(f"{FOLDER}/{EDITIONS}/")]
    try:
        publish.verify(published, names, quick=True)
        return {n: listed[n] for n in names}
    except (OSError, PipelineError):
        return {}


def _published_bytes(published: Path, name: str) -> bytes | None:
    try:
        return (published / name).read_bytes()
    except OSError:
        return None


def edition_document(edition: str, status: str, records: list[Rule], lineage_of) -> dict:
    """One edition keyed by rule number (in rule order; a number printed twice: its first printing) and
    its glossary keyed by term."""
    entry = registry.of(edition)
    numbered = sorted((r for r in records if r.kind not in UNNUMBERED),
                      key=lambda r: (r.rule_id[:1], sort_key(r.rule_id), r.occurrence))  # each part, then its chapters
    rules: dict[str, dict] = {}
    for r in numbered:
        rules.setdefault(r.rule_id, {"kind": r.kind, "title": r.title, "text": r.text, "examples": list(r.examples),
                                     "parent": r.parent, "children": [], "references": list(r.references),
                                     "lineage": lineage_of(r)})
    for number, rule in rules.items():
        if rule["parent"] in rules:
            rules[rule["parent"]]["children"].append(number)
    glossary: dict[str, dict] = {}
    for r in (r for r in records if r.kind == "glossary"):
        glossary.setdefault(r.title or r.rule_id, {"text": r.text, "examples": list(r.examples),
                                                   "references": list(r.references)})
    return {"edition": edition, "set_code": entry.set_code if entry else "",
            "set_name": entry.set_name if entry else "", "status": status, "rules": rules, "glossary": glossary}


def changes_document(changes, editions: list[str]) -> dict:
    """The steps in order, each with its counts by class and every change but the plain unchanged ones."""
    steps: dict[tuple[str, str], dict] = {}
    for c in changes:
        step = steps.setdefault((c.from_edition, c.to_edition),
                                {"from": c.from_edition, "to": c.to_edition, "counts": Counter(), "changes": []})
        step["counts"][c.change] += 1
        if c.change == "unchanged" and not c.renumbered:
            continue
        row = {"old": c.old_rule_id, "new": c.new_rule_id, "class": c.change, "renumbered": bool(c.renumbered),
               "kind": c.kind, "lineage": c.lineage_id, "ops": [list(op) for op in c.ops]}
        if c.title_ops:
            row["title_ops"] = [list(op) for op in c.title_ops]
        if any(c.example_ops):
            row["example_ops"] = [[list(op) for op in ops] for ops in c.example_ops]
        step["changes"].append(row)
    out = []
    for key in sorted(steps):
        step = steps[key]
        step["counts"] = dict(sorted(step["counts"].items()))
        step["changes"].sort(key=lambda x: (sort_key(x["new"] or x["old"]), x["old"], x["class"]))
        out.append(step)
    return {"editions": editions, "steps": out}


def lineages_document(index: Remapper, changes) -> dict:
    """Every numbered lineage: its numbers as [first, last, number] runs over `editions`, how it ended
    (removed, or merged into a number) and, for a piece split off a rule, where it came from."""
    ends, splits = {}, {}
    for c in changes:
        if c.change in ("removed", "merged"):
            ends.setdefault(c.lineage_id, {"class": c.change, "edition": c.to_edition, "into": c.new_rule_id})
        elif c.change == "split":
            splits.setdefault(c.lineage_id, {"edition": c.to_edition, "from": c.old_rule_id})
    lineages = {}
    for lineage in sorted(index.versions):
        spans = index.spans(lineage)
        if not spans:
            continue
        entry: dict = {"numbers": spans}
        if lineage in ends and not index.number.get((lineage, index.latest)):
            entry["end"] = ends[lineage]
        if lineage in splits:
            entry["split_from"] = splits[lineage]
        lineages[lineage] = entry
    return {"editions": index.editions, "latest": index.latest, "lineages": lineages}
