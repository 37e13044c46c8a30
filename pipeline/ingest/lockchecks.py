"""What fetch's inputs must look like before they are used. A lock file may come from someone else (a
shared corpus): its file names are confined to the names fetch itself gives (never joined as they are),
its dates are real dates and its timestamps ASCII digits (str.isdigit() also takes '²' and '２'). Files
are read without following a link and only up to a size, so a link to /dev/zero cannot hold a run."""
from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import MISSING, fields
from datetime import date, datetime
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.options import FETCH_FORMATS

# opening never follows a link, never waits on a FIFO
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# The names fetch gives: cr-2026-01-16-txt.txt; variants/cr-2020-06-01-txt-0123456789ab.txt; variants/<sha256>.txt
FILE_NAME = re.compile(r"(?:variants/)?(?:cr-[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z]+(?:-[0-9a-f]{12})?|[0-9a-f]{64})"
                       r"\.[a-z]+")
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits only: str.isdigit() takes '²' too
SNAPSHOT = re.compile(r"[0-9]{14}")  # a Wayback timestamp, YYYYMMDDhhmmss
SHA256 = re.compile(r"[0-9a-f]{64}")


def read_regular(path: Path, limit: int, what: str) -> bytes:
    """A regular file's bytes, read without following a symbolic link, and at most `limit` of them:
    a planted link to /dev/zero or a FIFO would otherwise be read forever."""
    try:
        fd = os.open(path, os.O_RDONLY | NO_FOLLOW)
    except OSError as e:
        raise PipelineError(f"cannot read it ({os_why(e)})", path=path) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PipelineError(f"not a regular file: not {what}", path=path)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise PipelineError(f"larger than {limit >> 20} MB: not {what}", path=path)
    return data


def os_why(e: OSError) -> str:
    return "a symbolic link: not followed" if e.errno == errno.ELOOP else (e.strerror or str(e))


def in_folder(folder: Path, name: str) -> Path:
    """The path of a file fetch keeps in `folder`; anything but a name fetch gives is refused, so a
    lock entry can never name a file outside the folder (../x, /etc/x) or one that is not an edition."""
    if not (isinstance(name, str) and FILE_NAME.fullmatch(name)):
        raise PipelineError(f"{name!r:.80} is not a file name fetch gives", path=folder)
    return folder / name


def record_problem(entry: object, record: type, checks: dict) -> str:
    """Why `entry` cannot be made a `record` (a dataclass) as it is: a key missing or unknown, or the
    first value its check in `checks` refuses (a value without a check must be a short text). '' if it can."""
    if not isinstance(entry, dict):
        return f"not an object but {type(entry).__name__}"
    names = {f.name for f in fields(record)}
    optional = {f.name for f in fields(record) if f.default is not MISSING or f.default_factory is not MISSING}
    missing, unknown = sorted(names - optional - entry.keys()), sorted(map(str, entry.keys() - names))
    if missing or unknown:
        return "; ".join(filter(None, [missing and f"no {', '.join(missing)}",
                                       unknown and f"unknown {', '.join(unknown)[:80]}"]))
    for key, value in entry.items():
        problem = checks.get(key, _text)(value)
        if problem:
            return f"{key} {problem}"
    return ""


def _text(value: object) -> str:
    return "" if isinstance(value, str) and len(value) <= 4096 else "is not a text of at most 4096 characters"


def _shaped(pattern: re.Pattern, shape: str, parse=None, empty: bool = False):
    def check(value: object) -> str:
        if empty and value == "":
            return ""
        ok = isinstance(value, str) and pattern.fullmatch(value)
        try:
            ok = ok and (parse is None or parse(value) is not None)
        except ValueError:
            ok = False
        return "" if ok else f"{_shown(value)} is not {shape}"
    return check


def _shown(value: object) -> str:
    return repr(value)[:80]


def _one_of(*allowed):
    return lambda value: "" if value in allowed else f"{_shown(value)} is not one of {', '.join(map(str, allowed))}"


def _also_at(value: object) -> str:
    ok = isinstance(value, list) and all(
        isinstance(a, dict) and a.keys() == {"url", "snapshot", "digest"} and not any(map(_text, a.values()))
        and not _snapshot_or_live(a["snapshot"]) for a in value)
    return "" if ok else "is not a list of {url, snapshot, digest}"


def _timestamp(value: str) -> datetime:
    return datetime.strptime(value, "%Y%m%d%H%M%S")


snapshot_problem = _shaped(SNAPSHOT, "a Wayback timestamp (YYYYMMDDhhmmss, ASCII digits)", _timestamp)
_snapshot_or_live = _shaped(SNAPSHOT, "a Wayback timestamp (YYYYMMDDhhmmss, ASCII digits)", _timestamp, empty=True)
edition_problem = _shaped(ISO_DATE, "a date (YYYY-MM-DD, ASCII digits)", date.fromisoformat)
STORED_CHECKS = {
    "file": lambda v: "" if isinstance(v, str) and FILE_NAME.fullmatch(v) else
    f"{_shown(v)} is not a file name fetch gives (cr-YYYY-MM-DD-FMT.FMT, or one in variants/)",
    "edition": edition_problem, "read_from": _one_of("text", "name"), "format": _one_of(*FETCH_FORMATS),
    "complete": lambda v: "" if type(v) is bool else f"{_shown(v)} is not true or false",
    "sha256": _shaped(SHA256, "a sha256 (64 lowercase hex digits)"),
    "bytes": lambda v: "" if type(v) is int and v >= 0 else f"{_shown(v)} is not a number of bytes",
    "snapshot": _snapshot_or_live, "also_at": _also_at,
}
SKIPPED_CHECKS = {"snapshot": _snapshot_or_live, "sha256": _shaped(SHA256, "a sha256", empty=True)}
