"""The typed loader: the exact inverse of export. Reads the Parquet twins in processed/ back into
the records of pipeline/records.py (Rule, RuleChange), or into plain typed rows for the tables that
have no record class, so no reader ever parses a CSV string ("True", JSON lists, 702.1 for 702.10).

Every file read is checked against the published run's listing (run.json): tables of two runs are
never used together. Reading is column by column (pyarrow), then one record per row.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.publish import parquet
from pipeline.publish import transaction as publish
from pipeline.ingest.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.records import Citation, Loaded, Rule, RuleChange, rule_key
from pipeline.schema import BY_NAME

RULE_FIELDS = ("edition", "source", "rule_id", "kind", "parent", "title", "text", "compare", "examples",
               "sentences", "references", "citations", "rule_flags", "line_start", "line_end", "occurrence",
               "variants")
TUPLES = {"examples", "references", "rule_flags", "variants"}


def read(processed: Path, name: str, columns: list[str] | None = None, filters=None, check: bool = True,
         file: str | None = None) -> pa.Table:
    """One table, checked against the run that published it (unless the caller holds the run's
    staging folder: `check=False`); dates as ISO text, a null date as ''."""
    file = f"{file or name}.parquet"
    if check:
        publish.verify(processed, [file])
    try:
        expected = parquet.arrow_schema(BY_NAME[name])
        if not pq.read_schema(processed / file).equals(expected):  # a folder written by another version
            raise PipelineError(f"{file} does not have the columns of pipeline/schema.py (written by another "
                                "version?): run `python -m pipeline run` again", path=processed)
        table = pq.read_table(processed / file, columns=columns, filters=filters)
    except (OSError, pa.ArrowException) as e:
        raise PipelineError(f"{file} cannot be read: {e}", path=processed) from None
    for i, f in enumerate(table.schema):
        if pa.types.is_date(f.type):
            table = table.set_column(i, f.name, pc.fill_null(table.column(i).cast(pa.string()), ""))
    return table


def columns(table: pa.Table) -> dict[str, list]:
    return {name: _pylist(table.column(name)) for name in table.column_names}


def _pylist(column: pa.ChunkedArray) -> list:
    """A column's Python values; a text column's repeated values as one shared str each. Most rows
    repeat an edition, a source, a kind or a wording of other rows (110 simulated editions: 7,000
    distinct wordings for 313,000 rules), and to_pylist makes a new str for every row (sharing them
    took the reports' rule rows from 630 to 395 MB)."""
    if not pa.types.is_string(column.type) or len(column) < 1024:
        return column.to_pylist()
    encoded = column.dictionary_encode().combine_chunks()
    values = encoded.dictionary.to_pylist()
    return [None if i is None else values[i] for i in encoded.indices.to_pylist()]


def rows(processed: Path, name: str, filters=None, only: list[str] | None = None, check: bool = True) -> list[dict]:
    """A table as typed rows, as export's frame held them (dicts in the schema's column order;
    `only` some columns): for the tables without a record class, and for the reports."""
    names = only or BY_NAME[name].names
    data = columns(read(processed, name, columns=names, filters=filters, check=check))
    return [dict(zip(names, values))
            for values in zip(*(parquet.python(name, n, data[n]) for n in names))]


def rules(processed: Path, edition: str | None = None, filters=None, file: str | None = None) -> Loaded:
    """Rule records (of one edition, if given, or those pyarrow `filters` keep), with their lineage
    ids and last changes."""
    if edition:
        filters = (filters or []) + [("edition", "=", edition_scalar(edition))]
    data = columns(read(processed, "rules", filters=filters, file=file))
    for name in TUPLES:
        data[name] = [tuple(v) for v in data[name]]
    data["citations"] = [tuple(Citation(**c) for c in cs) for cs in data["citations"]]
    _derived(data)
    data["flags"] = data.pop("rule_flags")
    names = [n if n != "rule_flags" else "flags" for n in RULE_FIELDS]
    out = Loaded()
    for values, lineage, changed in zip(zip(*(data[n] for n in names)), data["lineage_id"], data["last_changed"]):
        r = Rule(**dict(zip(names, values)))
        out.rules.append(r)
        if lineage:
            out.lineage[rule_key(r)] = lineage
        if changed:
            out.last_changed[rule_key(r)] = changed
    return out


def _derived(data: dict[str, list]) -> None:
    """What export does not store: the comparison form (of the text, or the title when there is no
    text: once per distinct text) and the sentences' texts (from their offsets)."""
    bases = [text or title for text, title in zip(data["text"], data["title"])]
    forms = {base: compare_form(base) for base in set(bases)}
    data["compare"] = [forms[base] for base in bases]
    data["sentences"] = [tuple(s["text"] if s["text"] is not None else base[s["start"]:s["end"]] for s in each)
                         for base, each in zip(bases, data["sentences"])]


def edition_scalar(text: str) -> pa.Scalar:
    """An edition to filter on: its YYYY-MM-DD text, checked."""
    try:
        date.fromisoformat(text)
    except ValueError:
        raise PipelineError(f"{text!r} is not an edition date (YYYY-MM-DD)") from None
    return pa.scalar(text, pa.string())


def _ops(ops: list[dict]) -> tuple:
    return tuple(tuple(op.values()) for op in ops)


def changes(processed: Path, filters=None, file: str | None = None) -> list[RuleChange]:
    data = columns(read(processed, "changes", filters=filters, file=file))
    data["ops"] = [_ops(v) for v in data["ops"]]
    data["title_ops"] = [_ops(v) for v in data["title_ops"]]
    data["example_ops"] = [tuple(_ops(each) for each in v) for v in data["example_ops"]]
    data["substitutions"] = [tuple(tuple(s) for s in v) for v in data["substitutions"]]
    names = BY_NAME["changes"].names
    return [RuleChange(**dict(zip(names, values))) for values in zip(*(data[n] for n in names))]


def dataset(processed: Path) -> Loaded:
    """Rules and changes together: what `history` and the reports read."""
    return replace(rules(processed), changes=changes(processed))
