"""Keys of report pages, so that a run renders only the pages whose inputs changed.

A page's key is a hash of everything its bytes depend on: its name (which sets the depth of its
links), the report code (report/build.py and every pipeline module it imports, the templates, the versions
of the libraries that render) and the page's own data. A run publishes the keys of its pages in
`reports/page-keys.json`, listed in run.json like the pages. The next run leaves a page in place
without rendering it when its key is the one the published run recorded and the published file is
still, size and sha256, the one run.json lists; anything else (a new key, a page edited by hand, a
missing or damaged keys file) is rendered as before.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import sys
from functools import lru_cache
from pathlib import Path

from pipeline import cache
from pipeline.publish import transaction as publish

FILE = "page-keys.json"
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


def published(folder: Path) -> tuple[dict[str, list], dict[str, str]]:
    """The published run's listing ({name: [bytes, sha256]}) and the keys of its pages ({name: key});
    no keys when the keys file is missing, damaged or not the one the listing names."""
    listed = publish.listing(folder) or {}
    try:
        raw = (folder / FILE).read_bytes()
        if listed.get(FILE) != [len(raw), hashlib.sha256(raw).hexdigest()]:
            return listed, {}
        keys = json.loads(raw)
    except (OSError, ValueError):
        return listed, {}
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        return listed, {}
    return listed, keys


def encode(keys: dict[str, str]) -> str:
    return json.dumps(keys, sort_keys=True, indent=0) + "\n"
