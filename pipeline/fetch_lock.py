"""The lock file `fetch` keeps beside the editions (fetched.json): for every file, where it was
published, which snapshot, when it was retrieved, its sha256 and the edition found in it; and
what was not kept, and why, so that the next run asks for neither again. Also where each file
belongs: one file per edition and format at the top (what `make` reads), other copies in variants/."""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.store import write_atomic

LOCK_NAME = "fetched.json"
VARIANTS = "variants"
LIVE = "99999999999999"  # a file fetched from the live page is newer than any snapshot


@dataclass(slots=True)
class Stored:
    file: str  # relative to the folder: cr-2026-01-16-txt.txt, or variants/cr-...-<sha>.txt
    edition: str
    read_from: str  # "text": the date stated in it; "name": the published file name's date
    format: str
    complete: bool
    sha256: str
    bytes: int
    url: str  # the address it was published at
    fetched_from: str  # the address the bytes came from (a snapshot's raw address, or the url)
    snapshot: str  # Wayback Machine timestamp, "" when fetched from the live site
    digest: str  # the CDX digest, "" when unknown
    retrieved: str  # UTC, ISO 8601
    also_at: list[dict] = field(default_factory=list)  # other {url, snapshot, digest} with the same bytes


@dataclass(slots=True)
class Skipped:
    url: str
    fetched_from: str
    snapshot: str
    digest: str
    sha256: str
    reason: str
    retrieved: str


@dataclass
class Lock:
    files: list[Stored] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def known(self, url: str, snapshot: str, digest: str) -> str | None:
        """What the lock already says of this address or digest: a file name, a skip reason, or None."""
        for s in self.files:
            places = [(s.url, s.snapshot, s.digest)] + [(a["url"], a["snapshot"], a["digest"]) for a in s.also_at]
            if any((digest and d == digest) or (u == url and t == snapshot) for u, t, d in places):
                return s.file
        for k in self.skipped:
            if (digest and k.digest == digest) or (k.url == url and k.snapshot == snapshot):
                return f"skipped before: {k.reason}"
        return None

    def by_sha256(self, sha256: str) -> Stored | None:
        return next((s for s in self.files if s.sha256 == sha256), None)


def load(folder: Path) -> Lock:
    """The lock as recorded, less the files that are no longer there as recorded (fetched again)."""
    path = folder / LOCK_NAME
    if not path.exists():
        return Lock()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        lock = Lock([Stored(**s) for s in data["files"]], [Skipped(**k) for k in data["skipped"]])
    except json.JSONDecodeError as e:
        raise PipelineError(f"not valid JSON: {e.msg}", path=path, line=e.lineno) from None
    except (KeyError, TypeError) as e:
        raise PipelineError(f"not a fetch lock file ({e}); move it away to start afresh", path=path) from None
    lock.files = [s for s in lock.files if _intact(folder / s.file, s)]
    return lock


def save(folder: Path, lock: Lock) -> None:
    files = sorted(lock.files, key=lambda s: s.file)
    skipped = sorted(lock.skipped, key=lambda k: (k.url, k.snapshot, k.digest))
    data = {"files": [asdict(s) for s in files], "skipped": [asdict(k) for k in skipped]}
    write_atomic(folder / LOCK_NAME, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def placement(files: list[Stored]) -> dict[str, str]:
    """sha256 -> file name. Per edition and format the best copy takes the plain name: a complete
    text first, then a date read from the text, then the newest snapshot (a re-published file fixes
    the old one). Decided from the records alone, so it does not depend on download order."""
    groups: dict[tuple[str, str], list[Stored]] = {}
    for s in files:
        groups.setdefault((s.edition, s.format), []).append(s)
    names = {}
    for (edition, fmt), group in groups.items():
        group.sort(key=lambda s: (not s.complete, s.read_from != "text", -int(s.snapshot or LIVE), s.sha256))
        names[group[0].sha256] = f"cr-{edition}-{fmt}.{fmt}"
        for s in group[1:]:
            names[s.sha256] = f"{VARIANTS}/cr-{edition}-{fmt}-{s.sha256[:12]}.{fmt}"
    return names


def settle(folder: Path, lock: Lock) -> list[tuple[str, str]]:
    """Move files to where placement() puts them (renames, in two steps so swaps cannot collide)."""
    names = placement(lock.files)
    moving = [s for s in lock.files if s.file != names[s.sha256]]
    for s in moving:
        os.replace(folder / s.file, folder / f".fetch-{s.sha256}.moving")
    moves = []
    for s in moving:
        target = folder / names[s.sha256]
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(folder / f".fetch-{s.sha256}.moving", target)
        moves.append((s.file, names[s.sha256]))
        s.file = names[s.sha256]
    return moves


def fetched_url(path: Path) -> str:
    """Where a file in a fetched folder came from, per the lock beside it ("" if none)."""
    lock = path.parent / LOCK_NAME
    try:
        return _urls(lock, lock.stat().st_mtime_ns).get(path.name, "")
    except (OSError, ValueError, KeyError, TypeError):
        return ""  # no lock, or not ours: the URL is only provenance, never needed to read the file


@functools.lru_cache(maxsize=8)
def _urls(lock: Path, mtime_ns: int) -> dict[str, str]:
    data = json.loads(lock.read_text(encoding="utf-8"))
    return {Path(s["file"]).name: s["fetched_from"] for s in data["files"] if "/" not in s["file"]}


def _intact(path: Path, s: Stored) -> bool:
    try:
        return path.stat().st_size == s.bytes and hashlib.sha256(path.read_bytes()).hexdigest() == s.sha256
    except OSError:
        return False

