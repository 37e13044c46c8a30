"""Caches that hold data, never code: rows of JSON in one SQLite file, each checked on read.

A row's key is a hash of its content key (a paragraph's text, a pair of editions' records) and of
the source of the code that computes the value (the producing module and every pipeline module it
imports, found by reading the imports), plus the versions of the libraries it uses. A code change
therefore never reuses an old result, and no version number has to be bumped by hand. Each row
also stores a checksum of key and value: a damaged row, a damaged file or a value of the wrong
shape is dropped and recomputed with a warning, never used. A namespace made `packed` keeps each value
as zlib'd JSON (a BLOB): the stored sources and records, large and repetitive, take a fifth of the room.
"""
from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import zlib
from dataclasses import fields
from functools import lru_cache
from importlib import metadata
from pathlib import Path

PACKAGE_DIR = Path(__file__).parent
CACHE_FILE = ".cache/cache.sqlite"  # a run's cache in its processed folder: run, its stages and compare share it


def content_key(path: Path) -> str:
    """A file as a cache key: its suffix (which says how it is read) and its bytes' sha256."""
    return f"{path.suffix.lower()}\0{hashlib.sha256(path.read_bytes()).hexdigest()}"


def remembered(path: Path, namespace: str, question: str, libraries: tuple[str, ...], answer) -> str:
    """A command's whole output: `answer()` the first time, then the text kept in the cache file under
    the question (which names its inputs by content) and the code of the whole package (what the CLI
    imports, in any command) with the versions of `libraries`."""
    store = Cache(path, namespace, code_hash("pipeline.cli.main", libraries))
    key = store.key(question)
    text = store.get(key, _text)
    if text is None:
        text = answer()
        store.put(key, text)
    store.close()
    return text


def _text(value) -> str:
    if not isinstance(value, str):
        raise Damaged("not a text")
    return value


class Damaged(ValueError):
    """A cached value that does not have the shape its reader expects."""


@lru_cache(maxsize=None)
def code_hash(module: str, libraries: tuple[str, ...] = (), data: tuple[Path, ...] = ()) -> str:
    """The fingerprint of code, the one every cache key, page key and run id is made from: sha256 over the
    source of `module` (e.g. 'pipeline.segment.nlp') and of every pipeline module it imports, directly or
    not, the files in the `data` folders (the report's templates) and the installed versions of `libraries`.
    Not Python's version: the run id is made from it, and the same inputs give the same bytes on every
    supported Python."""
    digest = hashlib.sha256()
    for name in sorted(_closure(module)):
        digest.update(name.encode() + b"\0" + _module_path(name).read_bytes() + b"\0")
    for folder in data:
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for library in libraries:
        digest.update(f"{library}={metadata.version(library)}\0".encode())
    return digest.hexdigest()


# Import statements, found by reading lines (parsing every module took a quarter of a second, at
# every start of `compare`): `from pipeline.x import (a, b)` and `import pipeline.x as y`, at any
# indentation (the CLI imports inside its commands). A line in a string that looks like one only
# widens the closure.
IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(pipeline[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
                    re.M)


def _closure(module: str) -> set[str]:
    todo, seen = [module], set()
    while todo:
        name = todo.pop()
        if name in seen or not _module_path(name).exists():
            continue
        seen.add(name)
        for m in IMPORT.finditer(_module_path(name).read_text(encoding="utf-8")):
            if m[1]:
                todo.append(m[1])
                todo += [f"{m[1]}.{a}" for a in _names(m[2])]  # `from pipeline import x`
            else:
                todo += [a for a in _names(m[3]) if a.startswith("pipeline")]
    return seen


def _names(text: str) -> list[str]:
    """The imported names of `a as b, c` or of `(a,  # why\n b)`."""
    text = re.sub(r"#[^\n]*", "", text).strip("() \t\n")
    return [part.split()[0] for part in text.split(",") if part.strip()]


def _module_path(name: str) -> Path:
    parts = name.split(".")[1:]
    base = PACKAGE_DIR.joinpath(*parts) if parts else PACKAGE_DIR
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


class Cache:
    """One namespace of the cache file. `path` None: a cache that keeps nothing."""

    def __init__(self, path: Path | None, namespace: str, code: str, packed: bool = False):
        self.path, self.namespace, self.code, self.packed = path, namespace, code, packed
        self.warnings: list[str] = []
        self.dropped = 0
        self.db = self._open() if path else None

    def _open(self) -> sqlite3.Connection | None:
        for _attempt in (1, 2):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, isolation_level=None)
                db.execute("CREATE TABLE IF NOT EXISTS entries (namespace TEXT, key TEXT, value TEXT, "
                           "checksum TEXT, PRIMARY KEY (namespace, key))")
                db.execute("PRAGMA quick_check").fetchall()
                return db
            except sqlite3.DatabaseError as e:
                self._discard_file(e)
        return None

    def _discard_file(self, error: Exception) -> None:
        self.warnings.append(f"{self.path}: cache file damaged ({error}): deleted, results recomputed")
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def key(self, content: str) -> str:
        return hashlib.sha256(f"{self.code}\0{content}".encode("utf-8", "surrogatepass")).hexdigest()

    def get_many(self, keys: list[str], decode) -> dict[str, object]:
        """{key: decode(json value)} for the keys present and intact; damaged rows are deleted."""
        if self.db is None or not keys:
            return {}
        found, bad = {}, []
        try:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                rows = self.db.execute(f"SELECT key, value, checksum FROM entries WHERE namespace = ? AND key IN "
                                       f"({','.join('?' * len(chunk))})", [self.namespace, *chunk]).fetchall()
                for key, value, checksum in rows:
                    try:
                        if checksum != _checksum(key, value):
                            raise Damaged("checksum mismatch")
                        if self.packed != isinstance(value, bytes):
                            raise Damaged("stored packed and read plain, or the other way")
                        found[key] = decode(json.loads(zlib.decompress(value) if self.packed else value))
                    except (ValueError, TypeError, KeyError, IndexError, Damaged, zlib.error):
                        bad.append(key)
            if bad:
                self.db.executemany("DELETE FROM entries WHERE namespace = ? AND key = ?",
                                    [(self.namespace, k) for k in bad])
        except sqlite3.DatabaseError as e:
            self._reset(e)
            return {}
        if bad:
            self.dropped += len(bad)
            self.warnings.append(f"{self.path}: {len(bad)} damaged {self.namespace} cache entr"
                                 f"{'y' if len(bad) == 1 else 'ies'} dropped and recomputed")
        return found

    def present(self, keys: list[str]) -> set[str]:
        """The keys of `keys` the cache holds (not read, not checked: get does that)."""
        if self.db is None or not keys:
            return set()
        found = set()
        try:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                found |= {k for (k,) in self.db.execute(f"SELECT key FROM entries WHERE namespace = ? AND key IN "
                                                         f"({','.join('?' * len(chunk))})", [self.namespace, *chunk])}
        except sqlite3.DatabaseError:
            return set()  # get will find the damage and say so
        return found

    def get(self, key: str, decode):
        return self.get_many([key], decode).get(key)

    def put_many(self, items: list[tuple[str, object]]) -> None:
        if self.db is None or not items:
            return
        rows = []
        for key, value in items:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain)
            if self.packed:  # level 1: a quarter bigger than level 6, four times as fast
                text = zlib.compress(text.encode("utf-8", "surrogatepass"), 1)
            rows.append((self.namespace, key, text, _checksum(key, text)))
        try:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)", rows)
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            self._reset(e)

    def put(self, key: str, value: object) -> None:
        self.put_many([(key, value)])

    def _reset(self, error: Exception) -> None:
        if self.db is not None:
            self.db.close()
        self._discard_file(error)
        self.db = self._open()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


def _checksum(key: str, value: str | bytes) -> str:
    if isinstance(value, bytes):
        return hashlib.blake2b(key.encode() + b"\0" + value, digest_size=16).hexdigest()
    return hashlib.blake2b(f"{key}\0{value}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _plain(value):
    """numpy scalars (scores and flags computed with numpy) as the Python values they hold."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} cannot be cached")


# A record is stored as the list of its fields' values in the record's own order, and read back by
# zipping them with its field names: the layout is the dataclass itself, so a field added to a record
# is stored and restored with no change by the caches and the stage files (tests/publish/test_stored_by_name.py).

def values(record, skip: tuple[str, ...] = ()) -> list:
    """A record's field values in declaration order, a Path as text."""
    names, kinds = _layout(type(record), skip)
    if not any(kinds):
        return [getattr(record, name) for name in names]
    return [str(v) if isinstance(v, Path) else v for v in (getattr(record, name) for name in names)]


def restored(cls, stored: list, **given):
    """`cls` from its stored values (all fields but those `given`), by field name; a field declared a Path
    or a tuple gets that type back from JSON's text and lists. Damaged when the count does not match."""
    names, kinds = _layout(cls, tuple(given))
    if len(stored) != len(names):
        raise Damaged(f"{len(stored)} values stored for the {len(names)} fields of a {cls.__name__} "
                      "(written by another version)")
    if not any(kinds) and not given:  # plain values (a paragraph, a discard): the quick way, by position
        return cls(*stored)
    data = {name: Path(v) if kind == "Path" else tuple(v) if kind == "tuple" else v
            for name, kind, v in zip(names, kinds, stored)}
    return cls(**data, **given)


@lru_cache(maxsize=None)
def _layout(cls, given: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names of `cls`'s stored fields and for each what it is converted to ("Path", "tuple" or "")."""
    kept = [f for f in fields(cls) if f.name not in given]
    return (tuple(f.name for f in kept),
            tuple("Path" if f.type == "Path" else "tuple" if f.type.startswith("tuple") else "" for f in kept))


def tuples(value):
    """JSON lists back into the tuples the records hold."""
    return tuple(tuples(v) for v in value) if isinstance(value, list) else value
