"""Tables that grow: a run that adds an edition after those the published run holds writes only the new
edition's rows of the big tables and puts them after the published rows, instead of writing every row again.

The grown tables are `rules`, `references`, `glossary` and `changes`: their rows are in edition order (a
change's: its step's new edition) and each row is made from its own edition's records and, through the
history, its rule's `lineage_id` and `last_changed` (a change row: from its step's change records). Every
export (cold or not) records, per edition, a digest of what makes its rows (the code's fingerprint, the rows
of its sources, its number of records, and its key in the walk of lineages, which is made from every edition
up to it, the overrides and the code), where its rows start in each CSV and how many there are
(`.cache/export.json`, the sidecar, written after the publication, naming the published files it describes
by their listed digests). The next export compares the digests: the editions before the first one that
differs (new, changed, removed) are kept as published, byte for byte; from that edition on, rows are
written again (`Tail`). The seeds' copy edition of 2025-06-06 comes after the simulated editions and is
written again each time; an edition inserted in the middle or a changed source makes the tail start there; a
change of code or of the overrides, or a sidecar that does not describe the published files, makes it start at
the first edition: the whole export, as before.

A grown file is made in the staging folder (the published bytes up to the tail copied, the tail appended),
never in place, so all-or-nothing publication and the run lock hold as for any file. CSV and Parquet files
are byte-identical to a cold run's; the database (copied, its tail rows deleted and inserted again, its
small tables replaced, new texts indexed) has the same rows, not the same bytes (no VACUUM, rowids of new
texts after the old ones). The other tables are written whole from the records, as before: their old rows
change with a new edition (adding the 110th simulated edition changed 3,254 of the 4,779 lineages' rows: a
living lineage's `last_edition`, `editions` and `numbers`; a citation's `rule_in_latest_edition` follows
the latest edition), or they are small (editions, texts, terminology: under 0.2 s together).

The JSON files follow the same tail (pipeline/publish/jsonout.py): an edition's file before it is left in
place, and changes.json keeps the published steps into editions before it, byte for byte (where each step is
in the file is in the sidecar, which names the file among those it describes).

A cold export writes the rules table chunk by chunk (`chunked`: each chunk into the CSV, the Parquet file
and the database before the next is made), never the whole frame at once.
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.atomic import write_atomic, write_bytes_with
from pipeline.errors import PipelineError
from pipeline.publish import database, datapackage, export, parquet
from pipeline.publish import transaction as publish
from pipeline.schema import BY_NAME

SIDECAR = ".cache/export.json"
VERSION = 3  # 2: digests from the walk's keys; 3: where each step is in json/changes.json
GROWN = ("rules", "references", "glossary", "changes")


def files() -> list[str]:
    """The published files a tail is spliced onto."""
    return [f"{name}.{kind}" for name in GROWN for kind in ("csv", "parquet")] + [database.NAME, "json/changes.json"]


def digests(eds, sources: pd.DataFrame, code: str, steps: dict[str, str]) -> dict[str, str]:
    """Per edition that has records, a digest of what its rows of the grown tables are made from: the code,
    the sources rows of its sources (bytes, dating, kind, counts), how many records it has, and its key in
    the walk of lineages (`steps`, pipeline/publish/stagefiles.py `step_keys`: the content of every edition up
    to it, the overrides and the code), which settles its rules' lineages and last changes and the change
    records of the step into it. Made from the editions alone: hashing each rule's lineage and each stored
    change again cost 1.5 s of the 110th simulated edition's export."""
    source_rows = {row["source_id"]: json.dumps(row, sort_keys=True, default=str)
                   for row in sources.to_dict("records")}
    out = {}
    for e in eds:
        records = sum(e.counts.values())
        if not records:
            continue
        h = hashlib.sha256(f"{code}\0{records}\0{steps.get(e.edition, '')}\0".encode())
        h.update("\0".join(source_rows.get(s, s) for s in sorted(e.sources)).encode())
        out[e.edition] = h.hexdigest()
    return out


@dataclass
class Tail:
    """Where the rows written again start: `start`, the first edition whose digest differs; every row
    of an earlier edition is the published one (`old`: the sidecar of the published run)."""
    start: str
    published: Path
    old: dict

    def kept(self, name: str) -> list[list]:
        """The published [edition, rows, csv offset, examples] of the editions before `start`."""
        return [m for m in self.old["tables"][name] if m[0] < self.start]

    def unchanged(self, statuses: dict[str, str]) -> set[str]:
        """The editions before `start` whose status is the published one: their JSON file is the published one
        (its rules, lineages, status and set the same)."""
        old = self.old.get("statuses", {})
        return {e for e, status in statuses.items() if e < self.start and old.get(e) == status}

    def end(self, name: str) -> int:
        """The byte offset in name.csv where the tail goes."""
        marks = self.old["tables"][name]
        later = [m[2] for m in marks if m[0] >= self.start]
        return later[0] if later else self.old["sizes"][name]


def plan(published: Path, current: dict[str, str]) -> Tail | None:
    """The tail of this export, or None for the whole export: no sidecar, or one that does not describe
    the published files, or nothing to keep."""
    try:
        checksum, body = (published / SIDECAR).read_text(encoding="utf-8").split("\n", 1)
        if hashlib.sha256(body.encode("utf-8")).hexdigest() != checksum:
            return None  # damaged
        old = json.loads(body)
        if old.get("version") != VERSION:
            return None
        listed = publish.listing(published) or {}
        if any(old["files"].get(name) != listed.get(name) for name in files()):
            return None  # the sidecar of another run
        publish.verify(published, files(), quick=True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, PipelineError):
        return None
    editions = sorted(set(old["editions"]) | set(current))
    start = next((e for e in editions if old["editions"].get(e) != current.get(e)), None)
    if start is None:
        start = "\uffff"  # nothing differs: every row is kept
    if not editions or start <= editions[0]:
        return None
    return Tail(start, published, old)


def remember(published: Path, marks: dict) -> None:
    """Write the sidecar of the run just published: its marks, and the listed digests of the files
    they describe (a later run trusts them only while those are the published files)."""
    listed = publish.listing(published) or {}
    sidecar = {**marks, "version": VERSION, "files": {name: listed.get(name) for name in files()}}
    body = json.dumps(sidecar, sort_keys=True) + "\n"
    try:  # its checksum first: a damaged sidecar is not used
        write_atomic(published / SIDECAR, hashlib.sha256(body.encode("utf-8")).hexdigest() + "\n" + body)
    except PipelineError:  # the run is published: without its sidecar, the next export is whole, nothing worse
        forget(published)


def forget(published: Path) -> None:
    (published / SIDECAR).unlink(missing_ok=True)


def _runs(chunks, editions: list[str], column: str = "edition"):
    """(edition, rows) for each run of one edition's rows in the chunks (frames in table order, which must be
    edition order; an edition's rows may span chunks), and (edition, None) for each of `editions` with none."""
    at, current = 0, None
    for chunk in chunks:
        values = chunk[column].tolist()
        i = 0
        while i < len(values):
            edition, n = values[i], 1
            while i + n < len(values) and values[i + n] == edition:
                n += 1
            if edition != current:
                while at < len(editions) and editions[at] != edition:
                    yield editions[at], None
                    at += 1
                if at == len(editions):
                    raise PipelineError(f"rows not in edition order, or of an edition without a digest: cannot be "
                                        f"grown ({edition})")
                at, current = at + 1, edition
            yield edition, chunk.iloc[i:i + n]
            i += n
    for edition in editions[at:]:
        yield edition, None


def _write_csv(f, chunks, name: str, editions: list[str], db, texts) -> list[list]:
    """The rows of the chunks, edition after edition, into the open text file `f` (no header): each
    edition's [edition, rows, offset, examples]."""
    marks: list[list] = []
    for edition, rows in _runs(chunks, editions, database.GROWN.get(name, "edition")):
        if not marks or marks[-1][0] != edition:
            marks.append([edition, 0, f.tell(), {}])
        mark = marks[-1]
        if rows is None:
            mark[3] = dict.fromkeys(BY_NAME[name].names, "")
            continue
        mark[1] += len(rows)
        seen = datapackage.summarize(rows)["examples"]
        mark[3] = {c: mark[3].get(c) or seen[c] for c in seen}  # each column's first example in the edition
        flat = export.flatten(rows, name, texts)
        flat.to_csv(f, index=False, header=False, lineterminator="\r\n")
        if db is not None:
            db.add(name, flat)
    return marks


def _header(name: str, texts) -> str:
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in BY_NAME[name].names})
    return export.flatten(empty, name, texts).to_csv(index=False, lineterminator="\r\n")


def chunked(data) -> list:
    """A table's frame in the chunks a cold run writes (CHUNK rows), or the chunks themselves (a generator
    of frames, each made when it is written: the rules table is never whole in memory)."""
    if isinstance(data, pd.DataFrame):
        return [data.iloc[i:i + export.CHUNK] for i in range(0, len(data), export.CHUNK)] or [data]
    return data


def write(data, out: Path, name: str, editions: list[str], db, texts, tail: Tail | None, marks: dict) -> dict:
    """Table `name` (a grown one) into `out`: CSV and Parquet, its rows into `db`; with `tail`, `data`
    holds only the tail's rows and the published files give the rest. `data` is a frame or its chunks
    (`chunked`), each written to both files before the next is made. Records the marks; returns the table's
    summary for the data dictionary."""
    editions = [e for e in editions if tail is None or e >= tail.start]
    chunks = chunked(data)
    marks["tables"][name] = (tail.kept(name) if tail else []) + _splice(out, name, chunks, editions, db, texts,
                                                                         tail)
    marks["sizes"][name] = (out / f"{name}.csv").stat().st_size
    rows = marks["tables"][name]
    examples: dict[str, str] = {}
    for *_, seen in rows:
        for column, value in seen.items():
            if value and not examples.get(column):
                examples[column] = value
    return {"rows": sum(m[1] for m in rows), "examples": {c: examples.get(c, "") for c in BY_NAME[name].names}}


def _splice(out: Path, name: str, chunks, editions, db, texts, tail: Tail | None) -> list[list]:
    """name.csv: the published bytes before the tail (or the header), then the tail's rows; name.parquet:
    written as the chunks go by (a cold run), or the published rows before the tail and the tail's."""
    marks = []
    tail_chunks: list[pd.DataFrame] = []

    def passing(each):  # each chunk into the Parquet file's writer as it goes into the CSV (or kept, for a tail)
        for chunk in each:
            if tail is not None:
                tail_chunks.append(chunk)
            yield chunk

    def fill(raw):
        if tail is None:
            raw.write(_header(name, texts).encode("utf-8"))
        else:
            with open(tail.published / f"{name}.csv", "rb") as src:
                _copy(src, raw, tail.end(name))
        f = io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=True)
        if tail is None:
            with parquet.writer(out, name) as sink:
                marks.extend(_write_csv(f, sink.passing(chunks), name, editions, db, texts))
        else:
            marks.extend(_write_csv(f, passing(chunks), name, editions, db, texts))
        f.flush()
        f.detach()
    write_bytes_with(out / f"{name}.csv", fill)
    if tail is not None:
        _splice_parquet(out, name, tail_chunks, sum(m[1] for m in tail.kept(name)), tail)
    return marks


def _copy(src, dst, size: int) -> None:
    left = size
    while left:
        block = src.read(min(left, 1 << 22))
        if not block:
            raise PipelineError("a published file is shorter than its sidecar says", path=Path(src.name))
        dst.write(block)
        left -= len(block)


def _splice_parquet(out: Path, name: str, chunks, kept_rows: int, tail: Tail) -> None:
    """name.parquet: the published file's first `kept_rows` rows and the tail's, in the row groups and
    5,000-row batches a cold run writes them in, so the file has the same bytes. The published rows are read
    a batch at a time, never the whole file (the rules of 110 simulated editions: 330 MB)."""
    schema = parquet.arrow_schema(BY_NAME[name])

    def parts():
        left = kept_rows
        if left:
            for batch in pq.ParquetFile(tail.published / f"{name}.parquet").iter_batches(batch_size=export.CHUNK):
                yield pa.Table.from_batches([batch.slice(0, left)]).cast(schema)
                left -= min(left, batch.num_rows)
                if not left:
                    break
        for chunk in chunks:
            if len(chunk):
                yield parquet.arrow_table(name, chunk)
    parquet.write_arrow(out, name, parts())
