"""Compare any two editions (already in processed/) or any two official files."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import astuple, fields, replace
from pathlib import Path

from pipeline import lookup
from pipeline.errors import PipelineError
from pipeline.query.history import load_rules
from pipeline.align.lineage import aligned, fates
from pipeline.cache import CACHE_FILE, Cache, code_hash, tuples
from pipeline.patterns import LOOKS_LIKE_A_PATH
from pipeline.records import Citation, Rule, RuleChange
from pipeline.ruleid import sort_key
from pipeline.segment import read
from pipeline.segment.rules import ParagraphCache

FIELDS = [f.name for f in fields(Rule)]
CITATIONS = FIELDS.index("citations")


def rules_of(spec: str, processed: Path, notes: list[str] | None = None) -> list[Rule]:
    """`spec` is a file (an official rules text), or an edition of processed/ named by its date, a date (the
    edition in force then) or its set code; what was made of `spec` is appended to `notes`."""
    path = Path(spec)
    if path.is_file():
        return file_rules(path, processed / CACHE_FILE)
    if LOOKS_LIKE_A_PATH.fullmatch(spec):
        raise PipelineError("no such file (to compare editions of a run, give their dates)", path=path)
    try:
        rules = load_rules(processed, spec)
    except PipelineError as e:
        if "not an edition date" not in str(e):
            raise
        rules = []
    if not rules and (processed / "editions.parquet").exists():  # a date between editions: the one in force
        from pipeline.publish import load
        editions = [e for e in load.columns(load.read(processed, "editions", columns=["edition"]))["edition"] if e]
        try:
            edition, note = lookup.edition(spec, editions)
            rules = load_rules(processed, edition)
            if notes is not None and note:
                notes.append(note)
        except PipelineError as e:
            raise PipelineError(f"{spec!r} is neither a file nor an edition in {processed / 'rules.parquet'}: {e}") \
                from None
    if not rules:
        raise PipelineError(f"{spec!r} is neither a file nor an edition in {processed / 'rules.parquet'}")
    return rules


def file_rules(path: Path, cache_file: Path) -> list[Rule]:
    """A file's records, segmented once per content: kept in the run's cache file, keyed by the file's
    bytes and the code that reads and segments them (asking again about the same file is instant).
    Their references and citations are left empty: no comparison shows them, and finding them was
    half of spaCy's time."""
    data = path.read_bytes()
    files = Cache(cache_file, "files", code_hash("pipeline.query.compare", ("spacy",)))
    key = files.key(f"{path.suffix.lower()}\0{hashlib.sha256(data).hexdigest()}")
    rules = files.get(key, _decode_rules)
    if rules is None:
        doc = read.clean(path, None, data)
        cache = ParagraphCache(cache_file, skip=("citations", "rule_references"))
        rules = read.rules([doc], cache)
        cache.save()
        files.put(key, [_row(r) for r in rules])
    files.close()
    return rules


def _row(r: Rule) -> list:
    """astuple(r), built field by field: astuple deep-copies every value (0.13 s of a cold compare)."""
    row = [getattr(r, name) for name in FIELDS]
    row[CITATIONS] = tuple(astuple(c) for c in r.citations)
    return row


def _decode_rules(value) -> list[Rule]:
    rows = [list(row) for row in tuples(value)]
    for row in rows:
        row[CITATIONS] = tuple(Citation(*c) for c in row[CITATIONS])
    return [Rule(*row) for row in rows]


def stored(processed: Path, a: list[Rule], b: list[Rule]) -> list[RuleChange] | None:
    """The changes the run recorded between two consecutive editions, so that `compare` says what
    the datasets say; None when the run has no such step (two files, editions apart)."""
    if not (a and b and (processed / "changes.parquet").exists()) or a[0].source == "" or b[0].source == "":
        return None
    from pipeline.publish import load, unchanged
    first, last = load.edition_scalar(a[0].edition), load.edition_scalar(b[0].edition)
    changes = load.changes(processed, filters=[("from_edition", "=", first), ("to_edition", "=", last)])
    # the plain unchanged rules have no row: rebuilt from the rules of the editions from a to b
    left_out = unchanged.left_out(processed, {(c.lineage_id, c.to_edition) for c in changes},
                                  [("edition", ">=", first), ("edition", "<=", last)])
    changes += [c for c in left_out if c.from_edition == a[0].edition and c.to_edition == b[0].edition]
    return sorted(changes, key=unchanged.order) or None


def compare(a: list[Rule], b: list[Rule], cache_file: Path | None = None) -> list[RuleChange]:
    """With `cache_file`, the pair's alignment and diffs are kept there by content (the run's own pairs
    cache), so the same question asked again is not aligned again."""
    a = [r for r in a if r.kind != "commentary"]
    b = [r for r in b if r.kind != "commentary"]
    ea, eb = (a[0].edition if a else ""), (b[0].edition if b else "")
    out = []
    code = code_hash("pipeline.align.lineage", ("rapidfuzz", "scipy"))
    pairs = Cache(cache_file, "pairs", code) if cache_file else None
    matches, diffs = aligned(a, b, frozenset(), frozenset(), pairs)
    if pairs is not None:
        pairs.close()
    # Read as the run's history reads a step: a rule continued by its successor is not also merged or
    # cut; one that ended in a merge or in pieces is not also removed; a piece is split, not added.
    continued, successors, ended = fates(matches)
    pieces = {m.new for m in matches if m.method == "split" and m.new not in successors}
    models = {m.new: a[m.old] for m in matches if m.method == "resembles"}
    for m in matches:
        if m.method == "resembles":
            continue
        if m.old is not None and m.new is not None:
            if (m.method == "merge" and m.old in continued) or (m.method == "split" and m.new in successors):
                continue
            kind = {"merge": "merged", "split": "split"}.get(m.method)
            change = diffs[(m.old, m.new, m.method)]
            out.append(replace(change, change=kind) if kind else change)
        elif m.old is not None:
            if m.old not in continued and m.old not in ended:
                out.append(RuleChange(ea, eb, "", a[m.old].rule_id, "", a[m.old].kind, "removed", False, 0.0,
                                      False, "unmatched"))
        elif m.new not in pieces and m.new not in successors:
            model = models.get(m.new)
            out.append(RuleChange(ea, eb, "", "", b[m.new].rule_id, b[m.new].kind, "added", False, 0.0, False,
                                  "unmatched", note=f"resembles {model.rule_id}" if model else ""))
    return out


def described(c: RuleChange, old: Rule | None, new: Rule | None) -> dict:
    """A change with what it changed: both texts, titles and examples (for `--json`)."""
    out = {k: getattr(c, k) for k in ("old_rule_id", "new_rule_id", "kind", "change", "renumbered", "similarity",
                                       "review", "note", "ops", "title_ops", "example_ops", "substitutions")}
    for side, r in (("old", old), ("new", new)):
        out[f"{side}_title"] = r.title if r else ""
        out[f"{side}_text"] = r.text if r else ""
        out[f"{side}_examples"] = list(r.examples) if r else []
    return out


def summary(changes: list[RuleChange]) -> Counter:
    counts = Counter(c.change for c in changes)
    counts["renumbered"] = sum(c.renumbered for c in changes)
    return counts


def ordered_changes(a: str, b: str, old: list[Rule], new: list[Rule], processed: Path) -> list[RuleChange]:
    """What `compare` shows between `a` and `b` (read as `old` and `new`), in rule-number order: the changes
    the run recorded when they are a step of it (its own changes), else aligned here (from files, kept in
    the run's cache: asked again, neither segmented nor aligned again)."""
    from_files = Path(a).is_file() or Path(b).is_file()
    recorded = None if from_files else stored(processed, old, new)
    changes = recorded if recorded is not None else compare(old, new, processed / CACHE_FILE if from_files else None)
    return sorted(changes, key=lambda c: sort_key(c.old_rule_id or c.new_rule_id))
