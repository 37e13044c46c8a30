"""Atomic writes: a file is written under a temporary name and renamed into place. The one place that
does so: every writer (text, streamed text, Parquet, the SQLite database) makes its file here."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import PipelineError


@contextmanager
def replacing(path: Path, mode: int | None = None):
    """A temporary path beside `path` to write; put in place when the block ends, deleted if it fails.
    A failed write (disk full, no permission) is an error naming `path` (`naming`)."""
    with naming(path):
        tmp = temporary(path)
        try:
            yield tmp
            into_place(tmp, path, mode)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def temporary(path: Path) -> Path:
    """A new empty file beside `path`, to be written and then put `into_place`. Its name,
    .<name>.<random>.tmp, is how an interrupted run's leftovers are recognised (publish/transaction.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(tmp)


def into_place(tmp: Path, path: Path, mode: int | None = None) -> None:
    """Rename the written temporary file over `path`, with permissions `mode` (default: `for_sharing`)."""
    os.chmod(tmp, for_sharing() if mode is None else mode)
    os.replace(tmp, path)


def write_atomic(path: Path, data: bytes | str) -> None:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path) as tmp, open(tmp, "wb") as f:
        f.write(raw)


def write_atomic_with(path: Path, write) -> None:
    """Like write_atomic, for big files: `write(file)` streams text into the temporary file, so
    the whole content never sits in memory at once."""
    with replacing(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        write(f)


def write_bytes_with(path: Path, write, mode: int | None = None) -> None:
    """Like write_atomic_with, for a writer of bytes (a grown file: published bytes copied, then text)."""
    with replacing(path, mode) as tmp, open(tmp, "wb") as f:
        write(f)


def write_if_changed(path: Path, data: bytes | str) -> bool:
    """write_atomic, skipped when the file already holds exactly these bytes. Rewriting thousands
    of identical report pages is the slowest thing a re-render does."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path.stat().st_size == len(raw) and path.read_bytes() == raw:
            return False
    except OSError:
        pass
    write_atomic(path, raw)
    return True


@contextmanager
def naming(path: Path):
    """A failed write (disk full, no permission) becomes an error naming the file it was writing."""
    try:
        yield
    except OSError as e:
        raise PipelineError(f"cannot write: {e.strerror or e}", path=path) from None


def for_sharing() -> int:
    """A new file's permissions as the umask allows, as open() would give: mkstemp makes 0600, and
    outputs (and fetched editions) are for sharing."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
