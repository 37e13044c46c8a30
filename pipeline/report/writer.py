"""Writing the report pages: only what changed is rewritten, a page whose key is the published one is
not even rendered (pagekeys), and pages an earlier run wrote that this one did not are removed.

Each run records, for every keyed page, its key and the stamp (size and modification time, as `run` tells its
published files unchanged: publish.stamp) of the file it published for it, in `.cache/.page-keys.json` beside the
published pages, never listed. A page is left in place unrendered when its key is the recorded one and its file
still has the recorded stamp: it is the file rendered from that key, untouched since (no page is read or hashed
to know it; a copy that keeps the times, cp -a or rsync -t, keeps the stamps true). The keys of a run that is
never committed are recorded with the stamps of its staged files, which no published file has: they match
nothing, and the next run renders those pages again. The keys used to be published (`page-keys.json`, 0.55 MB
of 110 simulated editions' reports, and read back and checked against run.json's listing on every run)."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from pipeline.atomic import write_atomic, write_if_changed
from pipeline.publish import transaction as publish
from pipeline.report import pagekeys


class Writer:
    """put(name, data) writes a file of the reports; into a run's staging folder, only when the
    published one differs: an identical page is left in place (publish.keep lists it), so a run
    that changes a few pages rewrites only those. `put.skip(name, key)` records a page's key and
    says whether the page can be left in place without even rendering it. `put.finish()` records
    what was kept, and each keyed page's key with its stamp."""

    def __init__(self, reports: Path, written: list[Path]):
        self.reports, self.written = reports, written
        self.published = reports.parent if reports.name == publish.STAGING else None
        self.listed = (publish.listing(self.published) or {}) if self.published is not None else {}
        self.recorded = pagekeys.recorded(self.published) if self.published is not None else {}
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
        entry, listed = self.recorded.get(name), self.listed.get(name)
        if entry is None or entry[2] != key or listed is None or _stamp(os.fspath(self.published / name)) != entry[:2]:
            return False
        self.kept[name] = listed
        self.written.append(self.reports / name)
        return True

    def finish(self) -> None:
        if self.kept:
            publish.keep(self.reports, self.kept)
        if self.published is not None:
            self._record()

    def _record(self) -> None:
        """Each keyed page's stamp as it will be once published, with its key: a staged file keeps its own
        through the rename into place, a kept one is the published file."""
        out = {}
        for name, key in self.keys.items():
            stamp = _stamp(os.fspath(self.published / name if name in self.kept else self.reports / name))
            if stamp is not None:
                out[name] = [*stamp, key]
        write_atomic(self.published / pagekeys.FILE, json.dumps(out, sort_keys=True, separators=(",", ":")) + "\n")


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _remove_stale(reports: Path, written: set[Path]) -> None:
    """Pages an earlier run wrote that this one did not (a lineage that no longer exists); a page folder
    that is a symbolic link is refused, never emptied (publish.confined)."""
    for sub in ("pairs", "lineage", "sources", "editions", "rules"):
        pages = publish.confined(reports, sub)
        for path in pages.glob("*.html") if pages.is_dir() else ():
            if path not in written:
                path.unlink()
