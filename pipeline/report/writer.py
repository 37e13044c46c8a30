"""Writing the report pages: only what changed is rewritten, a page whose key is the published one is
not even rendered (pagekeys), and pages an earlier run wrote that this one did not are removed."""
from __future__ import annotations

import hashlib
from pathlib import Path

from pipeline.atomic import write_if_changed
from pipeline.publish import transaction as publish
from pipeline.report import pagekeys


class Writer:
    """put(name, data) writes a file of the reports; into a run's staging folder, only when the
    published one differs: an identical page is left in place (publish.keep lists it), so a run
    that changes a few pages rewrites only those. `put.skip(name, key)` records a page's key and
    says whether the page can be left in place without even rendering it (pagekeys). `put.finish()`
    writes the keys and records what was kept."""

    def __init__(self, reports: Path, written: list[Path]):
        self.reports, self.written = reports, written
        self.published = reports.parent if reports.name == publish.STAGING else None
        self.listed, self.previous = pagekeys.published(self.published) if self.published is not None else ({}, {})
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
        if self.previous.get(name) != key or not publish.still_listed(self.published / name, self.listed.get(name)):
            return False
        self.kept[name] = self.listed[name]
        self.written.append(self.reports / name)
        return True

    def finish(self) -> None:
        self(pagekeys.FILE, pagekeys.encode(self.keys))
        if self.kept:
            publish.keep(self.reports, self.kept)


def _remove_stale(reports: Path, written: set[Path]) -> None:
    """Pages an earlier run wrote that this one did not (a lineage that no longer exists); a page folder
    that is a symbolic link is refused, never emptied (publish.confined)."""
    for sub in ("pairs", "lineage", "sources", "editions", "rules"):
        pages = publish.confined(reports, sub)
        for path in pages.glob("*.html") if pages.is_dir() else ():
            if path not in written:
                path.unlink()
