"""The Parquet twin of each table: the schema's types kept (a rule number stays text, a list stays
a list, a boolean a boolean, an edition its YYYY-MM-DD text, a date a date), compressed with zstd,
written in chunks.

Nested columns get an Arrow type of their own (ARROW); every other array column is a list of
strings. Editions are identifiers, text as in the CSV and the database (`edition == "2026-01-16"`
works in pandas and DuckDB alike); the one column meant for date arithmetic, `editions.date`, is an
Arrow date. The empty strings (no `edition_end`) stay empty strings, as in the records.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.schema import BY_NAME, Table
from pipeline.atomic import replacing

OP_FIELDS = ("tag", "old_start", "old_end", "new_start", "new_end", "old_text", "new_text")
OP = pa.struct([(n, pa.string() if n in ("tag", "old_text", "new_text") else pa.int64()) for n in OP_FIELDS])
CITATION = pa.struct([(n, pa.string()) for n in ("source", "value", "text", "part")])
# A sentence: start and end in the text, or (rarely) its own text when it is not a piece of it
SENTENCE = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("text", pa.string())])

ARROW = {  # (table, column) -> Arrow type, for the nested columns that are not lists of strings
    ("rules", "citations"): pa.list_(CITATION),
    ("rules", "sentences"): pa.list_(SENTENCE),
    ("texts", "sentences"): pa.list_(SENTENCE),
    ("changes", "ops"): pa.list_(OP),
    ("changes", "title_ops"): pa.list_(OP),
    ("changes", "example_ops"): pa.list_(pa.list_(OP)),
    ("changes", "substitutions"): pa.list_(pa.list_(pa.string())),
    ("sources", "discarded_by_reason"): pa.map_(pa.string(), pa.int64()),
}
SCALAR = {"string": pa.string(), "edition": pa.string(), "integer": pa.int64(), "number": pa.float64(),
          "boolean": pa.bool_(), "date": pa.date32()}
OPS = {("changes", "ops"), ("changes", "title_ops")}  # word operations: stored as lists, typed as structs


def arrow_schema(table: Table) -> pa.Schema:
    return pa.schema([(c.name, ARROW.get((table.name, c.name)) or SCALAR.get(c.type) or pa.list_(pa.string()))
                      for c in table.columns])


def _column(table: str, name: str, values, kind: pa.DataType) -> pa.Array:
    if (table, name) in OPS:
        values = [[dict(zip(OP_FIELDS, op)) for op in ops] for ops in values]
    elif (table, name) == ("changes", "example_ops"):
        values = [[[dict(zip(OP_FIELDS, op)) for op in ops] for ops in each] for each in values]
    elif (table, name) == ("sources", "discarded_by_reason"):
        values = [list(v.items()) for v in values]
    elif name == "sentences":  # a list shared by many rows (once per wording in rule_rows) converted once
        done: dict[int, list] = {}
        values = [done.get(id(each)) or done.setdefault(id(each), [
            {"text": s} if isinstance(s, str) else {"start": s[0], "end": s[1]} for s in each]) for each in values]
    if kind == pa.date32():  # ISO text -> date; "" -> null
        text = pa.array(values, pa.string())
        return pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text).cast(pa.date32())
    return pa.array(values, kind)


def python(table: str, name: str, values: list) -> list:
    """The inverse of `_column` for one column's Python values (from Arrow's to_pylist): word
    operations back to lists, maps back to dicts; the rest is already what export wrote."""
    if (table, name) in OPS:
        return [[list(op.values()) for op in ops] for ops in values]
    if (table, name) == ("changes", "example_ops"):
        return [[[list(op.values()) for op in ops] for ops in each] for each in values]
    if (table, name) == ("sources", "discarded_by_reason"):
        return [dict(v) for v in values]
    if name == "sentences":
        return [[s["text"] if s["text"] is not None else [s["start"], s["end"]] for s in each] for each in values]
    return values


def arrow_table(name: str, chunk) -> pa.Table:
    """One chunk of a table's frame (the schema's columns, in order) as an Arrow table."""
    schema = arrow_schema(BY_NAME[name])
    return pa.Table.from_arrays([_column(name, f.name, chunk[f.name].tolist(), f.type) for f in schema], schema=schema)


# Rows per row group, and the dictionary page's size: a text repeated through many editions is then
# stored once per group (rules.parquet of 110 simulated editions: 19.9 MB in groups of 5,000 rows,
# 4.0 MB in one group with an 8 MB dictionary).
ROW_GROUP = 200_000
BATCH = 5000  # rows per chunk of a frame (export.CHUNK), each converted at a time
DICTIONARY_BYTES = 8 << 20


def write_arrow(folder: Path, name: str, parts) -> None:
    """name.parquet from Arrow tables of any lengths (pipeline/publish/grow.py), in the row groups and
    5,000-row batches `write` makes of the same rows, so the same bytes; a row group at a time in memory."""
    schema = arrow_schema(BY_NAME[name])
    with replacing(folder / f"{name}.parquet", mode=0o644) as tmp, \
            pq.ParquetWriter(tmp, schema, compression="zstd", dictionary_pagesize_limit=DICTIONARY_BYTES) as writer:
        pending: list[pa.Table] = []
        rows = written = 0
        for part in parts:
            pending.append(part)
            rows += part.num_rows
            while rows >= ROW_GROUP:
                group = pa.concat_tables(pending).combine_chunks()
                _write_group(writer, schema, group.slice(0, ROW_GROUP))
                pending, rows, written = [group.slice(ROW_GROUP)], rows - ROW_GROUP, written + 1
        if rows or not written:  # no rows at all: one empty row group, as `write` makes
            _write_group(writer, schema, pa.concat_tables(pending or [schema.empty_table()]).combine_chunks())


def _write_group(writer: pq.ParquetWriter, schema: pa.Schema, group: pa.Table) -> None:
    batches = group.to_batches(max_chunksize=BATCH)
    writer.write_table(pa.Table.from_batches(batches, schema=schema), row_group_size=ROW_GROUP)


def write(folder: Path, name: str, chunks, file: str | None = None) -> None:
    """name.parquet (or file.parquet) from the chunks of table `name`'s frame, under a temporary
    name renamed into place."""
    with writer(folder, name, file) as sink:
        for _ in sink.passing(chunks):
            pass


class _Groups:
    """Chunks of a table's frame written as they pass, in row groups of ROW_GROUP rows."""

    def __init__(self, writer: pq.ParquetWriter, name: str):
        self.writer, self.name, self.group, self.written = writer, name, [], False

    def passing(self, chunks):
        """Each chunk, after it is in the file's next row group (written when full, or at the end)."""
        for chunk in chunks:
            self.group.append(arrow_table(self.name, chunk))
            if sum(t.num_rows for t in self.group) >= ROW_GROUP:
                self.flush()
            yield chunk
        if not self.group and not self.written:  # no chunk at all: one empty row group, as for an empty frame
            self.group.append(arrow_schema(BY_NAME[self.name]).empty_table())
        self.flush()

    def flush(self) -> None:
        if self.group:
            self.writer.write_table(pa.concat_tables(self.group), row_group_size=ROW_GROUP)
            self.group, self.written = [], True


@contextmanager
def writer(folder: Path, name: str, file: str | None = None):
    """A sink for table `name`'s chunks (`passing`): name.parquet (or file.parquet) under a temporary name,
    renamed into place when all went through."""
    path = folder / f"{file or name}.parquet"
    with replacing(path, mode=0o644) as tmp, \
            pq.ParquetWriter(tmp, arrow_schema(BY_NAME[name]), compression="zstd",
                             dictionary_pagesize_limit=DICTIONARY_BYTES) as sink:
        yield _Groups(sink, name)
