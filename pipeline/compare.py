"""Compare any two editions (already in processed/) or any two official files."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from pipeline.align import align
from pipeline.errors import PipelineError
from pipeline.history import load_rules
from pipeline.ingest import read_source
from pipeline.diff import change_between
from pipeline.records import Rule, RuleChange
from pipeline.segment import ParagraphCache, segment
from pipeline.sources import ADAPTERS


def rules_of(spec: str, processed: Path) -> list[Rule]:
    """`spec` is a file (an official rules text) or an edition date found in processed/."""
    path = Path(spec)
    if path.is_file():
        doc = ADAPTERS["official"](read_source(path, None))
        cache = ParagraphCache()
        cache.analyse_docs([doc])
        return segment(doc, cache)
    try:
        rules = load_rules(processed, spec)
    except PipelineError as e:
        if "not an edition date" not in str(e):
            raise
        rules = []
    if not rules:
        raise PipelineError(f"{spec!r} is neither a file nor an edition in {processed / 'rules.parquet'}")
    return rules


def compare(a: list[Rule], b: list[Rule]) -> list[RuleChange]:
    a = [r for r in a if r.kind != "commentary"]
    b = [r for r in b if r.kind != "commentary"]
    ea, eb = (a[0].edition if a else ""), (b[0].edition if b else "")
    out = []
    matches = align(a, b)
    pieces = {m.new for m in matches if m.method == "split"}  # a split piece is listed once, as split
    models = {m.new: a[m.old] for m in matches if m.method == "resembles"}
    for m in matches:
        if m.method == "resembles":
            continue
        if m.old is not None and m.new is not None:
            kind = {"merge": "merged", "split": "split"}.get(m.method)
            out.append(change_between(a[m.old], b[m.new], "", m, kind))
        elif m.old is not None:
            out.append(RuleChange(ea, eb, "", a[m.old].rule_id, "", a[m.old].kind, "removed", False, 0.0, False,
                                  "unmatched"))
        elif m.new not in pieces:
            model = models.get(m.new)
            out.append(RuleChange(ea, eb, "", "", b[m.new].rule_id, b[m.new].kind, "added", False, 0.0, False,
                                  "unmatched", note=f"resembles {model.rule_id}" if model else ""))
    return out


def summary(changes: list[RuleChange]) -> Counter:
    counts = Counter(c.change for c in changes)
    counts["renumbered"] = sum(c.renumbered for c in changes)
    return counts
