"""Atomic writes: a file is written under a temporary name and renamed into place."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import PipelineError


def write_atomic(path: Path, data: bytes | str) -> None:
    with _naming(path):
        _write_atomic(path, data)


def _write_atomic(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic_with(path: Path, write) -> None:
    """Like write_atomic, for big files: `write(file)` streams text into the temporary file, so
    the whole content never sits in memory at once."""
    with _naming(path):
        _write_atomic_with(path, write)


def _write_atomic_with(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            write(f)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
def _naming(path: Path):
    """A failed write (disk full, no permission) becomes an error naming the file it was writing."""
    try:
        yield
    except OSError as e:
        raise PipelineError(f"cannot write: {e.strerror or e}", path=path) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
