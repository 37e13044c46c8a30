"""The lock file `fetch` keeps beside the editions (fetched.json): for every file, where it was
published, which snapshot, when it was retrieved, its sha256 and the edition found in it; and
what was not kept, and why, so that the next run asks for neither again. Also where each file
belongs: one file per edition and format at the top (what `make` reads), other copies in variants/.

The lock file may come from someone else (a shared corpus): every entry is checked before it is used,
file names are confined to the names fetch itself gives, and a bad entry is reported and left alone.
Only one fetch at a time works in a folder (exclusive())."""
from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import stat
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.ingest.lockchecks import (NO_FOLLOW, SKIPPED_CHECKS, STORED_CHECKS, in_folder, os_why, read_regular,
                                   record_problem)
from pipeline.atomic import write_atomic

LOCK_NAME = "fetched.json"
FOLDER_LOCK = ".fetch.lock"  # held while a fetch runs in the folder
PART_PREFIX = ".fetch-"  # temporary files: .fetch-<random>.part (downloads), .fetch-<sha256>.moving (renames)
VARIANTS = "variants"
LIVE = "99999999999999"  # a file fetched from the live page is newer than any snapshot
MAX_LOCK_BYTES = 32 * 1024 * 1024  # a lock of every edition in every format is well under 1 MB


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
    final_url: str = ""  # where the bytes came from after redirects ("" in locks written before it was kept)


@dataclass(slots=True)
class Skipped:
    url: str
    fetched_from: str
    snapshot: str
    digest: str
    sha256: str
    reason: str
    retrieved: str
    final_url: str = ""


@dataclass
class Lock:
    files: list[Stored] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # entries of the file not used, and why (not saved)

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
    """The lock as recorded, less the files that are no longer there as recorded (fetched again) and
    the entries that are not what fetch writes (reported in `rejected`, never acted on)."""
    path = folder / LOCK_NAME
    if not os.path.lexists(path):
        return Lock()
    lock = Lock()
    files, skipped = _entries(path)
    for i, entry in enumerate(files):
        problem = stored_problem(entry) or _repeated(entry, lock.files)
        if problem:
            lock.rejected.append(f"{path}: files[{i}]: {problem}: entry ignored")
        else:
            lock.files.append(Stored(**entry))
    for i, entry in enumerate(skipped):
        problem = skipped_problem(entry)
        if problem:
            lock.rejected.append(f"{path}: skipped[{i}]: {problem}: entry ignored")
        else:
            lock.skipped.append(Skipped(**entry))
    lock.files = [s for s in lock.files if _intact(folder, s)]
    return lock


def _entries(path: Path) -> tuple[list, list]:
    """The two lists of a lock file, read as JSON; a file that is not one at all is an error."""
    text = read_regular(path, MAX_LOCK_BYTES, "a fetch lock file").decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PipelineError(f"not valid JSON: {e.msg}", path=path, line=e.lineno) from None
    except (RecursionError, ValueError) as e:
        raise PipelineError(f"not a fetch lock file ({_why(e)}); move it away to start afresh", path=path) from None
    if not (isinstance(data, dict) and isinstance(data.get("files"), list) and isinstance(data.get("skipped"), list)):
        raise PipelineError("not a fetch lock file (no 'files' and 'skipped' lists); move it away to start afresh",
                            path=path)
    return data["files"], data["skipped"]


def _why(e: Exception) -> str:
    return "nested too deeply" if isinstance(e, RecursionError) else str(e)[:120]


def check_folder(folder: Path) -> None:
    """variants/ must be a real folder: files moved into a symbolic link would land outside."""
    variants = folder / VARIANTS
    if variants.is_symlink() or (variants.exists() and not variants.is_dir()):
        raise PipelineError("a symbolic link or a file, not a folder: fetch will not write through it (move it "
                            "away)", path=variants)


def save(folder: Path, lock: Lock) -> None:
    files = sorted(lock.files, key=lambda s: s.file)
    skipped = sorted(lock.skipped, key=lambda k: (k.url, k.snapshot, k.digest))
    data = {"files": [asdict(s) for s in files], "skipped": [asdict(k) for k in skipped]}
    write_atomic(folder / LOCK_NAME, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def stored_problem(entry: object) -> str:
    """Why a `files` entry of a lock file cannot be used as it is ('' when it can)."""
    return record_problem(entry, Stored, STORED_CHECKS)


def skipped_problem(entry: object) -> str:
    return record_problem(entry, Skipped, SKIPPED_CHECKS)


def _repeated(entry: dict, files: list[Stored]) -> str:
    for s in files:
        if s.file == entry["file"] or s.sha256 == entry["sha256"]:
            return f"names the same file or bytes as {s.file}"
    return ""


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
    """Move files to where placement() puts them (renames, in two steps so swaps cannot collide).
    A file not in the lock is never overwritten: a copy whose place it holds stays where it is."""
    names = placement(lock.files)
    held = _held(folder, lock, names)
    moving = [s for s in lock.files if s.file != names[s.sha256] and s.sha256 not in held]
    for s in moving:
        os.replace(in_folder(folder, s.file), folder / f"{PART_PREFIX}{s.sha256}.moving")
    moves = []
    for s in moving:
        target = in_folder(folder, names[s.sha256])
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(folder / f"{PART_PREFIX}{s.sha256}.moving", target)
        moves.append((s.file, names[s.sha256]))
        s.file = names[s.sha256]
    return moves


def _held(folder: Path, lock: Lock, names: dict[str, str]) -> set[str]:
    """sha256 of the files that cannot move: their place is taken by a file the lock does not know,
    or by one of the lock's files that cannot move itself."""
    by_file = {s.file: s for s in lock.files}
    held: set[str] = set()
    changed = True
    while changed:
        changed = False
        for s in lock.files:
            target = names[s.sha256]
            if s.sha256 in held or s.file == target:
                continue
            holder = by_file.get(target)
            if (holder is None and os.path.lexists(in_folder(folder, target))) or \
                    (holder is not None and holder.sha256 in held):
                held.add(s.sha256)
                changed = True
    return held


def blocked(lock: Lock) -> list[str]:
    """What settle() left where it is, and why."""
    names = placement(lock.files)
    by_file = {s.file: s for s in lock.files}
    return [f"{s.file} stays: {names[s.sha256]} is taken by " +
            (f"{by_file[names[s.sha256]].file}, which cannot move" if names[s.sha256] in by_file else
             f"a file not in {LOCK_NAME}") for s in lock.files if s.file != names[s.sha256]]


@contextmanager
def exclusive(folder: Path):
    """Only one fetch at a time in `folder`: two would each save a lock without the other's files, and
    remove the other's temporary downloads. The lock file is opened without following a link."""
    path = folder / FOLDER_LOCK
    fd = _take(path, folder)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # still ours: _take checked it is the file locked
        os.close(fd)


def _take(path: Path, folder: Path) -> int:
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | NO_FOLLOW, 0o644)
        except OSError as e:
            advice = ": move it away" if e.errno == errno.ELOOP else ""
            raise PipelineError(f"cannot open the lock file ({os_why(e)}){advice}", path=path) from None
        try:
            if _locked_and_still_there(fd, path, folder):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the run that held it has just removed it: take the new one
    raise PipelineError("the lock file keeps being replaced: is another fetch starting?", path=path)


def _locked_and_still_there(fd: int, path: Path, folder: Path) -> bool:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise PipelineError("not a regular file: move it away", path=path)
    if not _lock_fd(fd):
        raise PipelineError(f"another fetch is running in {folder}")
    try:
        return os.path.samestat(os.fstat(fd), os.lstat(path))
    except FileNotFoundError:
        return False


def _lock_fd(fd: int) -> bool:
    """An exclusive lock on the open file, without waiting; False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def fetched_url(path: Path) -> str:
    """Where a file in a fetched folder came from, per the lock beside it ("" if none)."""
    lock = path.parent / LOCK_NAME
    try:
        return _urls(lock, lock.stat().st_mtime_ns).get(path.name, "")
    except (OSError, PipelineError):
        return ""  # no lock, or not ours: the URL is only provenance, never needed to read the file


@functools.lru_cache(maxsize=8)
def _urls(lock: Path, mtime_ns: int) -> dict[str, str]:
    files, _ = _entries(lock)
    return {s["file"]: s["fetched_from"] for s in files if not stored_problem(s) and "/" not in s["file"]}


def _intact(folder: Path, s: Stored) -> bool:
    """The file is there as recorded: a regular file (not a link), of the size and sha256 recorded."""
    try:
        fd = os.open(in_folder(folder, s.file), os.O_RDONLY | NO_FOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != s.bytes:
            return False
        return hashlib.file_digest(f, "sha256").hexdigest() == s.sha256
