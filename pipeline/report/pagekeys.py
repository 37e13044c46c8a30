"""Keys of report pages, so that a run renders only the pages whose inputs changed.

A page's key is a hash of everything its bytes depend on: its name (which sets the depth of its
links), the report code (report/build.py and every pipeline module it imports, the templates, the versions
of the libraries that render) and the page's own data. A run records the keys of its pages, each with the
stamp of the file it published for it, in `reports/.cache/page-keys.json` (writer.py): the next run leaves a
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

from pipeline import cache

FILE = ".cache/page-keys.json"  # not an output: in a dot folder, never listed
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
