"""What each stage stores in processed/.stages/ for the next one: data, never code (no pickle).

- ingest  -> .stages/ingest.json.gz        the cleaned sources (texts, paragraphs, the discard ledger)
                                            and the rejected files
- segment -> .stages/segment.rules.parquet  the merged rule records (the rules table's format)
             .stages/segment.json.gz        the editions
- align   -> .stages/align.changes.parquet  every change (the changes table's format)
             .stages/align.json.gz          lineage ids, last changes, renumbering runs, cited lineages

Parquet files are read back with the typed loader (pipeline/publish/load.py, the inverse of export); the
JSON files are gzip'd with a zero timestamp, so the same records give the same bytes. Every file is
checked against processed/run.json before it is read: a stage never reads another run's output.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import asdict
from pathlib import Path

from pipeline.publish import export
from pipeline.publish import load
from pipeline.publish import transaction as publish
from pipeline.errors import PipelineError
from pipeline.cache import Damaged, restored, values
from pipeline.ingest import stored as cleaned  # a cleaned source's layout: the cache's and this file's
from pipeline.records import Aligned, Edition, Ingested, Rejection, Rule
from pipeline.atomic import write_atomic

FOLDER = ".stages"


def _write_json(folder: Path, name: str, data) -> None:
    # ASCII escapes: a file name that is not UTF-8 (a lone surrogate) survives the round trip
    raw = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    write_atomic(folder / FOLDER / f"{name}.json.gz", gzip.compress(raw, compresslevel=3, mtime=0))


def _read_json(processed: Path, name: str, stage: str):
    file = f"{FOLDER}/{name}.json.gz"
    _check(processed, file, stage)
    try:
        return json.loads(gzip.decompress((processed / file).read_bytes()))
    except (OSError, EOFError, ValueError) as e:
        raise PipelineError(f"{file} cannot be read ({e}): run `python -m pipeline {stage}` again",
                            path=processed) from None


def _check(processed: Path, file: str, stage: str) -> None:
    if not (processed / file).exists():
        raise publish.missing(processed, file, stage)
    publish.verify(processed, [file])


# ingest

def save_ingested(folder: Path, ingested: Ingested) -> None:
    _write_json(folder, "ingest", {"docs": [cleaned.encode(d) for d in ingested.docs],
                                   "rejections": [values(r) for r in ingested.rejections]})


def load_ingested(processed: Path) -> Ingested:
    data = _read_json(processed, "ingest", "ingest")
    try:
        return Ingested(docs=[cleaned.decode(d) for d in data["docs"]],
                        rejections=[restored(Rejection, r) for r in data["rejections"]])
    except Damaged as e:
        raise PipelineError(f"{FOLDER}/: {e}: run the stages again") from None


# segment

def save_segmented(folder: Path, rules: list[Rule], editions: list[Edition]) -> None:
    frame = export.rule_rows(rules)
    export.write_table(frame, folder / FOLDER, "rules", file="segment.rules", formats=("parquet",))
    _write_json(folder, "segment", [{**asdict(e), "sources": list(e.sources)} for e in editions])


def load_segmented(processed: Path) -> tuple[list[Rule], list[Edition]]:
    _check(processed, f"{FOLDER}/segment.rules.parquet", "segment")
    rules = load.rules(processed, file=f"{FOLDER}/segment.rules").rules
    editions = [Edition(**{**e, "sources": tuple(e["sources"])}) for e in _read_json(processed, "segment", "segment")]
    return rules, editions


# align

def save_aligned(folder: Path, aligned: Aligned) -> None:
    frame = export.change_rows(aligned)
    export.write_table(frame, folder / FOLDER, "changes", file="align.changes", formats=("parquet",))
    _write_json(folder, "align", {
        "lineage": [[*k, v, aligned.last_changed.get(k, "")] for k, v in aligned.lineage.items()],
        "renumberings": aligned.renumberings,
        "cited": [[*k, *v] for k, v in aligned.cited.items()],
        "observations": aligned.observations})


def load_aligned(processed: Path) -> Aligned:
    _check(processed, f"{FOLDER}/align.changes.parquet", "align")
    changes = load.changes(processed, file=f"{FOLDER}/align.changes")
    data = _read_json(processed, "align", "align")
    lineage = {tuple(row[:4]): row[4] for row in data["lineage"]}
    last_changed = {tuple(row[:4]): row[5] for row in data["lineage"] if row[5]}
    cited = {tuple(row[:3]): tuple(row[3:]) for row in data["cited"]}
    return Aligned(changes=changes, lineage=lineage, last_changed=last_changed, renumberings=data["renumberings"],
                   cited=cited, observations=data["observations"])
