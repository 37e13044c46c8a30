"""`cite --check --fix` and `--as-of git`: the edges of the citation checker that touch files and git.

A fix rewrites only what is certain (a renumbered citation, in its own form: only the number changes) and
computes every replacement from the text as read before applying any, so a rewrite is never rewritten again
(509.2 -> 509.1 and 509.1 -> 509.3 in one file give 509.1 and 509.3). Each file is written whole to a temporary
file beside it and renamed over it, only when its bytes are still those that were read and its text encodes
back to them; anything else is left alone, with the reason.
"""
from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pipeline import lookup
from pipeline.query.citecheck import Finding, Scanned
from pipeline.errors import PipelineError

BOM = "\ufeff".encode()


def replaced(text: str, findings: list[Finding]) -> tuple[str, int]:
    """`text` with every certain fix applied at once (offsets of the original text), and how many."""
    fixes = sorted((f for f in findings if f.fix), key=lambda f: f.start)
    out, last = [], 0
    for f in fixes:
        out += [text[last:f.start], f.fix]
        last = f.end
    out.append(text[last:])
    return "".join(out), len(fixes)


def fix_file(scanned: Scanned) -> tuple[int, str]:
    """Rewrite one file's renumbered citations: (how many, "" or why the file was left alone)."""
    text, count = replaced(scanned.text, scanned.findings)
    if not count:
        return 0, ""
    bom = BOM if scanned.data.startswith(BOM) else b""
    if bom + scanned.text.encode("utf-8") != scanned.data:
        return 0, "its text does not encode back to its bytes: left alone"
    _write(scanned.path, bom + text.encode("utf-8"), scanned.data)
    return count, ""


class ChangedWhileFixing(PipelineError):
    pass


def _write(path: Path, data: bytes, expected: bytes) -> None:
    """Atomically: a temporary file in the same folder, renamed over `path` only when `path` still holds
    `expected` (a file changed since it was read is someone's work: never overwritten)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".crdiff")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        shutil.copymode(path, tmp)
        if path.read_bytes() != expected:
            raise ChangedWhileFixing("changed while being fixed: left alone", path=path)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True)


def dirty_trees(paths: list[Path]) -> list[str]:
    """The git work trees holding `paths` that have uncommitted changes (each once)."""
    roots: dict[str, bool] = {}
    for path in paths:
        folder = path if path.is_dir() else path.parent
        try:
            top = _git(folder, "rev-parse", "--show-toplevel")
        except OSError:  # no git at all
            return []
        root = top.stdout.strip()
        if top.returncode == 0 and root not in roots:
            roots[root] = bool(_git(Path(root), "status", "--porcelain").stdout.strip())
    return [root for root, dirty in roots.items() if dirty]


def line_dates(path: Path) -> list[str] | None:
    """The date (YYYY-MM-DD, UTC) of the commit that last touched each line of `path`; a line not committed yet
    has today's date. None when git does not know the file."""
    done = _git(path.parent, "blame", "--line-porcelain", "--", path.name)
    if done.returncode != 0:
        return None
    dates, when = [], None
    for row in done.stdout.split("\n"):
        if row.startswith("committer-time "):
            when = int(row.split()[1])
        elif row.startswith("\t"):
            dates.append(datetime.datetime.fromtimestamp(when or time.time(), datetime.UTC).date().isoformat())
    return dates


def git_editions(editions: list[str], latest: str, notes: list[str]) -> Callable[[Path], Callable[[int], str]]:
    """For `--as-of git`: per file, the edition each line was written against (the one in force on the date of the
    commit that last touched it); files git does not know are read against `latest`, with a note."""
    first = min(editions)
    by_date: dict[str, str] = {}

    def edition_on(date: str) -> str:
        if date not in by_date:
            by_date[date] = lookup.in_force(date, editions) if date >= first else first
        return by_date[date]

    def edition_for(path: Path) -> Callable[[int], str]:
        dates = line_dates(path)
        if dates is None:
            notes.append(f"{path}: not in git history: read against {latest}")
            return lambda line: latest
        return lambda line: edition_on(dates[line - 1]) if line <= len(dates) else latest

    return edition_for
