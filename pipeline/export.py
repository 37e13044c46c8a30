"""Records -> pandas -> processed/: CSV (RFC 4180, UTF-8, list fields as JSON) and JSON Lines."""
from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from pipeline.edition import Edition
from pipeline.ingest import Rejection
from pipeline.lineage import History, cascades, cited_lineages, rule_key
from pipeline.records import CleanDoc, Rule
from pipeline.segment import natural_key
from pipeline.store import write_atomic

LAYOUT = {"line breaks", "blank lines", "indentation and trailing spaces"}  # counted, not logged line by line

RULE_COLUMNS = ["edition", "source", "rule_id", "occurrence", "kind", "parent", "lineage_id", "last_changed",
                "title", "text", "compare", "examples", "sentences", "references", "citations", "flags", "variants",
                "line_start", "line_end"]
CHANGE_COLUMNS = ["from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "kind", "change",
                  "renumbered", "similarity", "score", "review", "method", "ops", "title_ops", "example_ops", "substitutions"]
RENUMBERING_COLUMNS = ["from_edition", "to_edition", "scope", "first_old", "last_old", "first_new", "last_new",
                       "shift", "count", "summary"]
CITATION_COLUMNS = ["edition", "source", "rule_id", "part", "cited_by", "value", "text", "lineage_id",
                    "linked_by", "last_changed", "agrees", "rule_in_cited_edition", "rule_in_latest_edition"]
LIST_COLUMNS = {"examples", "sentences", "references", "citations", "flags", "variants",
                "discarded_by_reason", "warnings", "sources", "ops", "title_ops", "example_ops", "substitutions"}
EDITION_COLUMNS = ["edition", "edition_end", "status", "sources", "records", "parts", "chapters", "sections",
                   "rules", "subrules", "rulings", "glossary", "commentary", "examples", "conflicts"]
GLOSSARY_COLUMNS = ["edition", "term", "definition", "examples", "references", "source", "line_start", "line_end"]
SOURCE_COLUMNS = ["source_id", "path", "format", "kind", "edition", "edition_end", "encoding", "sha256", "bytes",
                  "chars_total", "chars_kept", "chars_discarded", "discarded_by_reason", "paragraphs", "records",
                  "wrapped", "complete", "warnings", "rejection"]
DISCARD_COLUMNS = ["source_id", "line", "reason", "chars", "text"]


def rule_rows(rules: list[Rule], history: History | None = None) -> pd.DataFrame:
    rows = []
    for r in rules:
        key = rule_key(r)
        row = {c: getattr(r, c, "") for c in RULE_COLUMNS}
        row["lineage_id"] = history.lineage.get(key, "") if history else ""
        row["last_changed"] = history.last_changed.get(key, "") if history else ""
        row["citations"] = [asdict(c) for c in r.citations]
        rows.append(row)
    return pd.DataFrame(rows, columns=RULE_COLUMNS)


def change_rows(history: History) -> pd.DataFrame:
    rows = []
    for c in sorted(history.changes, key=_change_order):
        row = {k: getattr(c, k) for k in CHANGE_COLUMNS}
        row["ops"] = [list(op) for op in c.ops]
        row["title_ops"] = [list(op) for op in c.title_ops]
        row["example_ops"] = [[list(op) for op in ops] for ops in c.example_ops]
        row["substitutions"] = [list(s) for s in c.substitutions]
        rows.append(row)
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)


def _change_order(c) -> tuple:
    return (c.to_edition, c.from_edition, natural_key(c.new_rule_id or c.old_rule_id), c.old_rule_id, c.change,
            c.lineage_id)


def renumbering_rows(history: History) -> pd.DataFrame:
    return pd.DataFrame(cascades(history.changes), columns=RENUMBERING_COLUMNS)


def citation_rows(rules: list[Rule], history: History, eds: list[Edition]) -> pd.DataFrame:
    """Every citation tag, with what the computed history says about it: for a [CompRules date]
    tag, whether the date falls in the window where the rule's wording last changed; for a
    [CR 204.1a] tag, which rule that is in the cited edition and in the latest one."""
    complete = sorted(e.edition for e in eds if e.complete)
    latest_number: dict[str, str] = {}  # lineage -> its number in the latest edition that has it
    for k, lineage in sorted(history.lineage.items()):
        latest_number[lineage] = k[2]
    cited = cited_lineages(rules, history)
    first_seen: dict[str, str] = {}
    for k, lineage in sorted(history.lineage.items()):
        first_seen.setdefault(lineage, k[0])
    rows = []
    for r in rules:
        for c in r.citations:
            row = {"edition": r.edition, "source": r.source, "rule_id": r.rule_id, "part": c.part,
                   "cited_by": c.source, "value": c.value, "text": c.text, "lineage_id": "", "linked_by": "",
                   "last_changed": "", "agrees": "", "rule_in_cited_edition": "", "rule_in_latest_edition": ""}
            if c.source == "CR":
                lineage, how = cited.get((r.edition, r.rule_id, c.value), ("", ""))
                row.update(lineage_id=lineage, linked_by=how,
                           rule_in_cited_edition=c.value if how == "number" else "",
                           rule_in_latest_edition=latest_number.get(lineage, ""))
            elif re.fullmatch(r"\d{4}-\d\d-\d\d", c.value):
                key = rule_key(r)
                lineage, changed = history.lineage.get(key, ""), history.last_changed.get(key, "")
                row.update(lineage_id=lineage, linked_by="tagged rule", last_changed=changed,
                           rule_in_latest_edition=latest_number.get(lineage, ""))
                if c.source == "CompRules" and changed:
                    row["agrees"] = _agrees(c.value, changed, first_seen.get(lineage, ""), complete)
            rows.append(row)
    return pd.DataFrame(rows, columns=CITATION_COLUMNS)


def _agrees(tag: str, changed: str, first: str, complete: list[str]) -> str:
    """"yes" when the tag's date lies after the complete edition before `changed` and no later than
    `changed`; "unknown" when the rule's wording goes back to its first edition in the corpus and
    the tag is older than that (the corpus cannot tell); "no" otherwise."""
    before = [e for e in complete if e < changed]
    if changed == first and tag <= changed:
        return "unknown" if tag < changed else "yes"
    low = before[-1] if before else ""
    return "yes" if low < tag <= changed else "no"


def edition_rows(eds: list[Edition], rules: list[Rule]) -> pd.DataFrame:
    examples: dict[str, int] = {}
    for r in rules:
        if r.kind not in ("glossary", "commentary"):
            examples[r.edition] = examples.get(r.edition, 0) + len(r.examples)
    rows = []
    for e in eds:
        c = e.counts
        rows.append({"edition": e.edition, "edition_end": e.edition_end,
                     "status": "complete" if e.complete else "fragment", "sources": list(e.sources),
                     "records": sum(c.values()), "parts": c.get("part", 0), "chapters": c.get("chapter", 0),
                     "sections": c.get("section", 0), "rules": c.get("rule", 0), "subrules": c.get("subrule", 0),
                     "rulings": c.get("ruling", 0), "glossary": c.get("glossary", 0),
                     "commentary": c.get("commentary", 0), "examples": examples.get(e.edition, 0),
                     "conflicts": e.conflicts})
    return pd.DataFrame(rows, columns=EDITION_COLUMNS)


def glossary_rows(rules: list[Rule]) -> pd.DataFrame:
    rows = [{"edition": r.edition, "term": r.title, "definition": r.text, "examples": r.examples,
             "references": r.references, "source": r.source, "line_start": r.line_start, "line_end": r.line_end}
            for r in rules if r.kind == "glossary"]
    return pd.DataFrame(rows, columns=GLOSSARY_COLUMNS)


def source_rows(docs: list[CleanDoc], rejections: list[Rejection], records: dict[str, int]) -> pd.DataFrame:
    rows = []
    for d in docs:
        s = d.source
        by_reason = d.discarded_by_reason()
        rows.append({"source_id": s.source_id, "path": str(s.path), "format": s.format, "kind": s.kind,
                     "edition": d.edition or "", "edition_end": s.edition_end or "", "encoding": s.encoding,
                     "sha256": s.sha256, "bytes": s.n_bytes, "chars_total": d.chars_total,
                     "chars_kept": d.chars_kept, "chars_discarded": sum(by_reason.values()),
                     "discarded_by_reason": by_reason, "paragraphs": len(d.paragraphs),
                     "records": records.get(s.source_id, 0), "wrapped": d.wrapped, "complete": d.complete,
                     "warnings": list(d.warnings), "rejection": ""})
    for r in rejections:
        rows.append({"source_id": r.path.stem, "path": str(r.path), "format": "", "kind": "", "edition": "",
                     "edition_end": "", "encoding": "", "sha256": r.sha256, "bytes": r.n_bytes, "chars_total": 0,
                     "chars_kept": 0, "chars_discarded": 0, "discarded_by_reason": {}, "paragraphs": 0,
                     "records": 0, "wrapped": False, "complete": False, "warnings": [], "rejection": r.reason})
    frame = pd.DataFrame(rows, columns=SOURCE_COLUMNS)
    return frame.sort_values(["source_id", "path"], kind="stable").reset_index(drop=True)


def discard_rows(docs: list[CleanDoc]) -> pd.DataFrame:
    rows = [{"source_id": d.source.source_id, "line": x.line, "reason": x.reason, "chars": x.size, "text": x.text}
            for d in docs for x in d.discards if x.reason not in LAYOUT]
    return pd.DataFrame(rows, columns=DISCARD_COLUMNS)


def write_table(frame: pd.DataFrame, folder: Path, name: str, jsonl: bool = True) -> None:
    """name.csv (list fields as JSON strings) and name.jsonl (one JSON object per line)."""
    records = frame.to_dict(orient="records")
    if jsonl:
        lines = [json.dumps(_plain(row), ensure_ascii=False) for row in records]
        write_atomic(folder / f"{name}.jsonl", "".join(line + "\n" for line in lines))
    flat = frame.copy()
    for column in flat.columns:
        if column in LIST_COLUMNS:
            flat[column] = [json.dumps(v, ensure_ascii=False) for v in flat[column]]
    write_atomic(folder / f"{name}.csv", flat.to_csv(index=False, lineterminator="\r\n"))


def _plain(row: dict) -> dict:
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
