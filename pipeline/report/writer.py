"""Writing the report pages: only what changed is rewritten, a page whose key is the published one is
not even rendered (pagekeys), and pages an earlier run wrote that this one did not are removed.

A page left in place must still be the file the published run listed. Reading and hashing every page to
know it (165 MB on 110 editions) was a quarter of the report stage when an edition is added, so each run
also records every page's stamp (size and modification time, as `run` tells its published files unchanged:
publish.stamp) in `.cache/.page-stamps.json` beside the published pages, never listed: a page whose stamp is the
recorded one has not been touched since, and only the others are hashed. (A copy that keeps the times, cp -a or
rsync -t, keeps the stamps true.) The stamps
of a run that is never committed describe its staged files, not the published ones: they match nothing
and the next run hashes, as before."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from pipeline.atomic import write_atomic, write_if_changed
from pipeline.publish import transaction as publish
from pipeline.report import pagekeys

STAMPS = ".cache/.page-stamps.json"  # not an output: in a dot folder, its name a dot file


class Writer:
    """put(name, data) writes a file of the reports; into a run's staging folder, only when the
    published one differs: an identical page is left in place (publish.keep lists it), so a run
    that changes a few pages rewrites only those. `put.skip(name, key)` records a page's key and
    says whether the page can be left in place without even rendering it (pagekeys). `put.finish()`
    writes the keys, records what was kept and the pages' stamps."""

    def __init__(self, reports: Path, written: list[Path]):
        self.reports, self.written = reports, written
        self.published = reports.parent if reports.name == publish.STAGING else None
        self.listed, self.previous = pagekeys.published(self.published) if self.published is not None else ({}, {})
        self.stamps = _stamps(self.published / STAMPS) if self.published is not None else {}
        self.kept: dict[str, list] = {}
        self.keys: dict[str, str] = {}

    def __call__(self, name: str, data: str | bytes) -> None:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if self.published is not None and publish.same(self.published / name, raw):
            self.kept[name] = [len(raw), hashlib.sha256(raw).hexdigest()]
        else:
            write_if_changed(self.reports / name, raw)
        self.written.append(self.reports / name)

    def skip(self, name: str, key: str) -> bool:
        self.keys[name] = key
        if self.previous.get(name) != key or not self._untouched(name):
            return False
        self.kept[name] = self.listed[name]
        self.written.append(self.reports / name)
        return True

    def _untouched(self, name: str) -> bool:
        """The published page is still the file its run listed: its stamp is the one recorded, else its bytes."""
        entry, path = self.listed.get(name), self.published / name
        recorded = self.stamps.get(name)
        if isinstance(recorded, list) and isinstance(entry, list) and entry and recorded[:1] == entry[:1]:
            if _stamp(os.fspath(path)) == recorded:
                return True
        return publish.still_listed(path, entry)

    def finish(self) -> None:
        self(pagekeys.FILE, pagekeys.encode(self.keys))
        if self.kept:
            publish.keep(self.reports, self.kept)
        if self.published is not None:
            self._record_stamps()

    def _record_stamps(self) -> None:
        """Every page's stamp as it will be once published: a staged file keeps its own through the rename
        into place, a kept one is the published file."""
        stamps = {}
        for path in self.written:
            name = path.relative_to(self.reports).as_posix()
            stamp = _stamp(os.fspath(self.published / name if name in self.kept else path))
            if stamp is not None:
                stamps[name] = stamp
        write_atomic(self.published / STAMPS, json.dumps(stamps, sort_keys=True, separators=(",", ":")) + "\n")


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _stamps(path: Path) -> dict[str, list[int]]:
    """The recorded stamps, or none when the file is missing or damaged (every page is then hashed)."""
    try:
        stamps = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stamps if isinstance(stamps, dict) else {}


def _remove_stale(reports: Path, written: set[Path]) -> None:
    """Pages an earlier run wrote that this one did not (a lineage that no longer exists); a page folder
    that is a symbolic link is refused, never emptied (publish.confined)."""
    for sub in ("pairs", "lineage", "sources", "editions", "rules"):
        pages = publish.confined(reports, sub)
        for path in pages.glob("*.html") if pages.is_dir() else ():
            if path not in written:
                path.unlink()
