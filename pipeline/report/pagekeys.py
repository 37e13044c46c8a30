"""Keys of report pages, so that a run renders only the pages whose inputs changed.

A page's key is a hash of everything its bytes depend on: its name (which sets the depth of its
links), the report code (report/build.py and every pipeline module it imports, the templates, the versions
of the libraries that render) and the page's own data. A run records the keys of its pages, each with the
stamp of the file it published for it, in `reports/.cache/.page-keys.json` (writer.py): the next run leaves a
page in place without rendering it when its key is the recorded one and its file still has the recorded
stamp; anything else (a new key, a page edited by hand, a missing or damaged keys file) is rendered as before.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import cache

FILE = ".cache/.page-keys.json"  # not an output: in a dot folder, its name a dot file, never listed
LIBRARIES = ("jinja2", "markupsafe", "pandas")
TEMPLATES = Path(__file__).parent / "templates"


@lru_cache(maxsize=1)
def code() -> str:
    """The code that renders the pages: any change to it, to a template, to a library's version or to
    Python's renders every page again."""
    code = cache.code_hash("pipeline.report.build", LIBRARIES, (TEMPLATES,))
    return hashlib.sha256(code.encode() + sys.version.encode()).hexdigest()  # another Python may render otherwise


def digest(value) -> str:
    """A hash of plain data (str, numbers, bools, None, lists, tuples, dicts in their order). marshal's
    version 0 writes no back-references and floats as text, so equal data always gives equal bytes,
    at a third of the cost of repr(). Anything marshal refuses is hashed by its repr, which can only
    make a key differ when it should not (a page rendered again), never match when it should not."""
    try:
        raw = b"m" + marshal.dumps(value, 0)
    except ValueError:
        raw = b"r" + repr(value).encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:32]


def rows_digest(table: pa.Table) -> str:
    """A hash of an Arrow table's values, column by column, whatever its layout: chunks, a slice's offset and a
    validity buffer with no null in it change nothing, so the same rows read from the same Parquet bytes give
    the same digest wherever they are in the file (an edition's rows before and after another is appended), and
    any other value changes it. 110 simulated editions' rules: 0.1 s, where marshal of their Python rows
    took 1.1 s."""
    h = hashlib.sha256(str(table.schema).encode("utf-8"))
    for column in table.columns:
        _hash_array(column.combine_chunks() if column.num_chunks != 1 else column.chunk(0), h)
    return h.hexdigest()[:32]


def _hash_array(array: pa.Array, h) -> None:
    """Feed `h` the array's length, its nulls (where they are) and its values, none of them as laid out."""
    h.update(b"%d:%d;" % (len(array), array.null_count))
    if array.null_count:
        h.update(np.packbits(array.is_null().to_numpy(zero_copy_only=False)).tobytes())
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_list(kind):
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=array.offset * 4)
        h.update((offsets - offsets[0]).tobytes())
        if pa.types.is_list(kind):
            _hash_array(array.flatten(), h)  # the values of this slice, nulls backed by no values
        elif array.buffers()[2] is not None:
            h.update(memoryview(array.buffers()[2])[offsets[0]:offsets[-1]])
    elif pa.types.is_struct(kind):
        for field in array.flatten():  # each field of this slice
            _hash_array(field, h)
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        # a null's slot may hold anything
        h.update(pc.fill_null(array, 0).to_numpy(zero_copy_only=False).tobytes() if array.null_count
                 else array.to_numpy(zero_copy_only=False).tobytes())
    else:  # any other type (large strings, dictionaries, dates): its values as Python sees them, slower but sure
        h.update(json.dumps(array.to_pylist(), default=str).encode("utf-8"))


def key(name: str, *inputs) -> str:
    """A page's key: its name, the code and its inputs (plain data; sets must be sorted first, as their
    order changes from one process to the next)."""
    return digest((name, code(), inputs))


def recorded(folder: Path) -> dict[str, list]:
    """The keys recorded with the published pages: {name: [bytes, mtime_ns, key]}; none when the file is
    missing or damaged (every page is then rendered)."""
    try:
        keys = json.loads((folder / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(keys, dict):
        return {}
    return {name: entry for name, entry in keys.items() if isinstance(entry, list) and len(entry) == 3
            and isinstance(entry[0], int) and isinstance(entry[1], int) and isinstance(entry[2], str)}
