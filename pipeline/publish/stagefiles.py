"""What each stage stores in processed/.stages/ for the next one: data, never code (no pickle).

- ingest  -> .stages/ingest.json.gz           the list of cleaned sources, the rejected files, and each source's
                                              key in the cache of cleaned sources (the segment stage's key)
             .stages/ingest.<key>.json.gz     one cleaned source (text, paragraphs, the discard ledger)
- segment -> .stages/segment.json.gz          the editions, and the list of their records' files
             .stages/segment.<key>.parquet    one edition's merged rule records (the rules table's format)
- align   -> .stages/align.json.gz            renumbering runs, cited lineages, each edition's key in the walk,
                                              and the lists of the changes' and the lineages' files
             .stages/align.<key>.parquet      one step's changes (the changes table's format)
             .stages/align.<key>.json.gz      one edition's records' lineage ids and last changes

A piece (a source, an edition, a step) is named by a key made of what it is made from: the bytes of its
source (ingest), its sources' content (segment), the content of every edition up to it (align), with the
code that makes it (pipeline/run.py's fingerprint). So a piece of the same name holds the same data, and a
run that adds an edition finds the published pieces of the others already there: they are listed again,
checked and left in place (pipeline/publish/transaction.py `keep`), not written again; only the new
edition's pieces and the small lists are (110 simulated editions: 56 MB were written again each run).

Parquet files are read back with the typed loader (pipeline/publish/load.py, the inverse of export); the
JSON files are gzip'd with a zero timestamp, so the same records give the same bytes. Every file is
checked against processed/run.json before it is read: a stage never reads another run's output.
"""
from __future__ import annotations

import gzip
import hashlib
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


def _gzip_json(data) -> bytes:
    # ASCII escapes: a file name that is not UTF-8 (a lone surrogate) survives the round trip
    raw = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return gzip.compress(raw, compresslevel=3, mtime=0)


def _write_json(folder: Path, name: str, data) -> None:
    write_atomic(folder / FOLDER / f"{name}.json.gz", _gzip_json(data))


def _read_json(processed: Path, name: str, stage: str, checked: bool = False):
    file = f"{FOLDER}/{name}.json.gz"
    if not checked:
        _check(processed, [file], stage)
    try:
        return json.loads(gzip.decompress((processed / file).read_bytes()))
    except (OSError, EOFError, ValueError) as e:
        raise PipelineError(f"{file} cannot be read ({e}): run `python -m pipeline {stage}` again",
                            path=processed) from None


def _check(processed: Path, files: list[str], stage: str) -> None:
    for file in files:
        if not (processed / file).exists():
            raise publish.missing(processed, file, stage)
    publish.verify(processed, files)


class Pieces:
    """A stage's pieces written into a staging folder, or kept: a piece the published run lists under the
    same name, still as it listed it, is left in place and listed again (`close`)."""

    def __init__(self, staging: Path, stage: str):
        self.staging, self.stage = staging, stage
        self.published = publish.listing(staging.parent) or {}
        self.kept: dict[str, list] = {}
        self.names: list[str] = []

    def put(self, key: str, suffix: str, write) -> None:
        """The piece named by `key`; `write(folder, stem)` writes it when the published one cannot be kept."""
        name = f"{FOLDER}/{self.stage}.{key}{suffix}"
        self.names.append(f"{self.stage}.{key}")
        entry = self.published.get(name)
        if entry is not None and publish.still_listed(self.staging.parent / name, entry):
            self.kept[name] = entry
        else:
            write(self.staging / FOLDER, f"{self.stage}.{key}")

    def close(self) -> None:
        if self.kept:  # beside what another stage of the run kept
            publish.keep_also(self.staging, self.kept)


def key(*parts) -> str:
    """A piece's key: 128 bits of SHA-256 over its parts' JSON."""
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# ingest

def save_ingested(folder: Path, ingested: Ingested, keys: dict[str, str] | None = None,
                  cleaning: dict[str, str] | None = None) -> None:
    """`keys`: each source's key by its id (pipeline/ingest/stored.py, from its file's bytes and the code);
    a source without one is named by its content. `cleaning`: each source's key in the cache of cleaned
    sources, kept for the segment stage (`cleaned_keys`)."""
    pieces = Pieces(folder, "ingest")
    for doc in ingested.docs:
        data = None
        name = (keys or {}).get(doc.source.source_id)
        if name is None:
            data = _gzip_json(cleaned.encode(doc))
            name = hashlib.sha256(data).hexdigest()[:32]
        pieces.put(name, ".json.gz", lambda at, stem, doc=doc, data=data: write_atomic(
            at / f"{stem}.json.gz", data if data is not None else _gzip_json(cleaned.encode(doc))))
    pieces.close()
    _write_json(folder, "ingest", {"docs": pieces.names, "rejections": [values(r) for r in ingested.rejections],
                                   "cleaned": dict(sorted((cleaning or {}).items()))})


def cleaned_keys(processed: Path) -> dict[str, str]:
    """Each source's key in the cache of cleaned sources, as the published ingest stage recorded it (the
    segment stage's key of what it reads of the source, pipeline/segment/stored.py)."""
    keys = _read_json(processed, "ingest", "ingest").get("cleaned")
    return keys if isinstance(keys, dict) and all(isinstance(v, str) for v in keys.values()) else {}


def load_ingested(processed: Path) -> Ingested:
    data = _read_json(processed, "ingest", "ingest")
    _check(processed, [f"{FOLDER}/{name}.json.gz" for name in data["docs"]], "ingest")
    try:
        return Ingested(docs=[cleaned.decode(_read_json(processed, name, "ingest", checked=True))
                              for name in data["docs"]],
                        rejections=[restored(Rejection, r) for r in data["rejections"]])
    except Damaged as e:
        raise PipelineError(f"{FOLDER}/: {e}: run the stages again") from None


# segment

def save_segmented(folder: Path, rules: list[Rule], editions: list[Edition], keys: dict[str, str]) -> dict[str, str]:
    """`keys`: each edition's key (`edition_keys`). Returns the keys of the editions that have records."""
    pieces = Pieces(folder, "segment")
    by_edition = _by(rules, "edition")  # the rules are in edition order: so are the pieces
    for edition, records in by_edition.items():
        pieces.put(keys[edition], ".parquet", lambda at, stem, records=records: export.write_table(
            export.rule_rows(records), at, "rules", file=stem, formats=("parquet",)))
    pieces.close()
    _write_json(folder, "segment", {"editions": [{**asdict(e), "sources": list(e.sources)} for e in editions],
                                    "rules": [list(e) for e in zip(by_edition, pieces.names)]})
    return {edition: keys[edition] for edition in by_edition}


def edition_keys(code: str, docs, source_keys: dict[str, str]) -> dict[str, str]:
    """Each edition's key: what its merged records are made from (its sources' content keys, with their
    format and completeness, pipeline/segment/edition.py `merge`) and the code."""
    parts: dict[str, list] = {}
    for d in docs:
        parts.setdefault(d.edition or "", []).append((source_keys[d.source.source_id], d.source.format, d.complete))
    return {edition: key(code, "segment", edition, p) for edition, p in parts.items()}


def load_segmented(processed: Path) -> tuple[list[Rule], list[Edition]]:
    data = _read_json(processed, "segment", "segment")
    _check(processed, [f"{FOLDER}/{name}.parquet" for _, name in data["rules"]], "segment")
    rules = [r for _, name in data["rules"] for r in load.rules(processed, file=f"{FOLDER}/{name}").rules]
    editions = [Edition(**{**e, "sources": tuple(e["sources"])}) for e in data["editions"]]
    return rules, editions


def segment_keys(processed: Path) -> dict[str, str]:
    """The published editions' keys, for the align stage's (`step_keys`)."""
    return {edition: name.split(".", 1)[1] for edition, name in _read_json(processed, "segment", "segment")["rules"]}


def _by_edition(lineage: dict[tuple, str]) -> dict[str, list[tuple]]:
    """The walk's record keys by their edition (the first part), in the walk's order."""
    out: dict[str, list] = {}
    for k in lineage:
        out.setdefault(k[0], []).append(k)
    return out


def _by(records, field: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in records:
        out.setdefault(getattr(r, field), []).append(r)
    return out


# align

def step_keys(code: str, overrides, edition_keys: dict[str, str], editions: list[Edition]) -> dict[str, str]:
    """Each edition's key in the walk of lineages: its changes are made from every edition up to it (the
    lineages come from the first), the overrides and the code."""
    out, chained = {}, key(code, "align", sorted(overrides.force), sorted(overrides.forbid))
    flags = {e.edition: asdict(e) for e in editions}
    for edition in sorted(edition_keys):
        chained = out[edition] = key(chained, edition_keys[edition], flags.get(edition))
    return out


def save_aligned(folder: Path, aligned: Aligned, keys: dict[str, str]) -> None:
    """`keys`: each edition's key in the walk (`step_keys`); its step's changes are those made into it."""
    pieces = Pieces(folder, "align")
    for edition, changes in sorted(_by(aligned.changes, "to_edition").items()):
        pieces.put(keys[edition], ".parquet", lambda at, stem, changes=changes: export.write_table(
            export.change_rows(Aligned(changes, {}, {}, [], {})), at, "changes", file=stem, formats=("parquet",)))
    pieces.close()
    # each edition's records' lineage ids and last changes, a piece each like its step (made only when written)
    walk = Pieces(folder, "align")  # the stage is named by the first part (transaction.stage_of)
    for edition, records in _by_edition(aligned.lineage).items():
        rows = lambda records=records: [[*k, aligned.lineage[k], aligned.last_changed.get(k, "")]  # noqa: E731
                                        for k in records]
        name = keys.get(edition) or hashlib.sha256(_gzip_json(rows())).hexdigest()[:32]
        walk.put(name, ".json.gz", lambda at, stem, rows=rows: write_atomic(at / f"{stem}.json.gz", _gzip_json(rows())))
    walk.close()
    _write_json(folder, "align", {
        "changes": pieces.names,
        "lineage": walk.names,
        "renumberings": aligned.renumberings,
        "cited": [[*k, *v] for k, v in aligned.cited.items()],
        "observations": aligned.observations,
        "steps": keys})


def walk_keys(processed: Path) -> dict[str, str]:
    """Each edition's key in the walk (`step_keys`) the published align stage was made with: the export's
    digests (pipeline/publish/grow.py)."""
    return _read_json(processed, "align", "align").get("steps", {})


def change_files(processed: Path) -> list[str]:
    """The published changes' files (without .parquet), in the order of the changes table."""
    return [f"{FOLDER}/{name}" for name in _read_json(processed, "align", "align")["changes"]]


def load_aligned(processed: Path) -> Aligned:
    data = _read_json(processed, "align", "align")
    _check(processed, [f"{FOLDER}/{name}.parquet" for name in data["changes"]], "align")
    _check(processed, [f"{FOLDER}/{name}.json.gz" for name in data["lineage"]], "align")
    changes = [c for name in data["changes"] for c in load.changes(processed, file=f"{FOLDER}/{name}")]
    rows = [row for name in data["lineage"] for row in _read_json(processed, name, "align", checked=True)]
    lineage = {tuple(row[:4]): row[4] for row in rows}
    last_changed = {tuple(row[:4]): row[5] for row in rows if row[5]}
    cited = {tuple(row[:3]): tuple(row[3:]) for row in data["cited"]}
    return Aligned(changes=changes, lineage=lineage, last_changed=last_changed, renumberings=data["renumberings"],
                   cited=cited, observations=data["observations"])
