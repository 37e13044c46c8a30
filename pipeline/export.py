"""Records -> pandas -> processed/: CSV (RFC 4180, UTF-8, list fields as JSON) and JSON Lines."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from pipeline.edition import Edition
from pipeline.ingest import Rejection
from pipeline.records import CleanDoc, Rule
from pipeline.store import write_atomic

LAYOUT = {"line breaks", "blank lines", "indentation and trailing spaces"}  # counted, not logged line by line

RULE_COLUMNS = ["edition", "source", "rule_id", "occurrence", "kind", "parent", "title", "text", "compare",
                "examples", "sentences", "references", "citations", "flags", "variants", "line_start", "line_end"]
LIST_COLUMNS = {"examples", "sentences", "references", "citations", "flags", "variants",
                "discarded_by_reason", "warnings", "sources"}
EDITION_COLUMNS = ["edition", "edition_end", "status", "sources", "records", "parts", "chapters", "sections",
                   "rules", "subrules", "rulings", "glossary", "commentary", "examples", "conflicts"]
GLOSSARY_COLUMNS = ["edition", "term", "definition", "examples", "references", "source", "line_start", "line_end"]
SOURCE_COLUMNS = ["source_id", "path", "format", "kind", "edition", "edition_end", "encoding", "sha256", "bytes",
                  "chars_total", "chars_kept", "chars_discarded", "discarded_by_reason", "paragraphs", "records",
                  "wrapped", "complete", "warnings", "rejection"]
DISCARD_COLUMNS = ["source_id", "line", "reason", "chars", "text"]


def rule_rows(rules: list[Rule]) -> pd.DataFrame:
    rows = []
    for r in rules:
        row = {c: getattr(r, c) for c in RULE_COLUMNS}
        row["citations"] = [asdict(c) for c in r.citations]
        rows.append(row)
    return pd.DataFrame(rows, columns=RULE_COLUMNS)


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
