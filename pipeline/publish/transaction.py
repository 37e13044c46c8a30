"""Whole runs published all or nothing, one writer at a time.

A run writes its files into `<folder>/.staging/`, lists them (size and sha256) in
`.staging/run.json` with the run id, then writes `.staging/COMMITTED`: from that moment the run
counts as done, and the files are moved into place by renames. A run killed before COMMITTED
leaves the published files untouched (its staging is deleted by the next run); one killed while
moving is finished by the next run (the journal is the staging folder). Readers check every table
they load against `run.json`, so tables of two different runs are never used together.

Everything a run does stays inside its folders: a name read from a listing or a journal becomes a path
only through `confined` (a plain relative path, no symbolic link on the way), and a folder holding a
symbolic link anywhere is refused when it is locked, so no link is ever followed.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.atomic import write_atomic

STAGING = ".staging"
LISTING = "run.json"
COMMITTED = "COMMITTED"
KEPT = "kept.json"  # in a staging folder: published files this run would write byte for byte, left in place
LOCK = ".lock"
RUN_STAMP = ".cache/run.json"  # written by stages.run_all: the fingerprint of a finished run, its files' stamps
PAGE_FOLDERS = ("pairs", "lineage", "sources")  # report pages a run owns wholly: unlisted ones are stale


@contextmanager
def locked(*folders: Path):
    """Hold an exclusive lock on each folder for the whole run. The lock is the kernel's (flock), so
    a killed run never leaves a stale one behind. A second run fails at once with the holder's pid."""
    with ExitStack() as stack:
        for folder in sorted({f.resolve() for f in folders}):
            _hold(stack, folder)
            _refuse_links(folder)
            recover(folder)
            listing(folder)  # a planted listing is refused here, before the run writes anything
        try:
            yield
        except BaseException:  # a failed run (disk full, an error, Ctrl-C) frees what it staged
            for folder in folders:
                drop_uncommitted(folder)
            raise


def _hold(stack: ExitStack, folder: Path) -> None:
    """Take `folder`'s lock for as long as `stack` lasts, and write this run's pid into it."""
    folder.mkdir(parents=True, exist_ok=True)
    f = stack.enter_context(_lock_file(folder))
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "unknown"
        raise PipelineError(f"another run (pid {holder}) is writing here; wait for it to finish "
                            "or use another folder", path=folder) from None
    f.truncate(0)
    f.write(str(os.getpid()))
    f.flush()
    stack.callback(_release, f)


def _lock_file(folder: Path):
    """The lock file, opened without following a link (O_NOFOLLOW) and refused unless it is a plain file
    of its own: truncating a link or a hard link would truncate the file it shares."""
    path = folder / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _link_error(path) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise PipelineError("the lock file is not a plain file of its own (a hard link, a pipe, ...): refused, "
                            "as a run empties it; remove it", path=path)
    return os.fdopen(fd, "a+", encoding="utf-8")


def confined(folder: Path, name: str, source: Path | None = None) -> Path:
    """`folder / name` for a name read from `source` (a listing or a journal), refused unless it stays
    inside `folder`: a plain relative name (`_plain`) with no symbolic link from `folder` down to it.
    The error names `source` for a bad name, the link for a link."""
    return Path(checked(folder, [name], source)[0][0])


def checked(folder: Path, names, source: Path | None = None) -> list[tuple[str, os.stat_result | None]]:
    """`confined` for many names at once, as (path, what lstat says of it or None when it is not there): each
    folder on the way is looked at once, not once per file below it, and no Path is made (the listings of
    8,400 pages were checked about 36,000 times a run, name by name: 0.9 s of adding the 110th simulated
    edition, under the profiler)."""
    seen: dict[str, bool] = {}  # a folder on the way -> it is there (and no link)
    base, out = os.fspath(folder), []
    for name in names:
        parts = _plain(name, folder, source)
        step, there = base, True
        for part in parts[:-1]:
            step = f"{step}/{part}"
            if step not in seen:
                try:
                    mode = os.lstat(step).st_mode
                except OSError:
                    mode = None
                if mode is not None and stat.S_ISLNK(mode):
                    raise _link_error(Path(step))
                seen[step] = mode is not None
            if not seen[step]:  # nothing there (yet): nothing below it either
                there = False
                break
        step = f"{base}/{name}"
        info = None
        if there:
            try:
                info = os.lstat(step)
            except OSError:
                info = None
            if info is not None and stat.S_ISLNK(info.st_mode):
                raise _link_error(Path(step))
        out.append((step, info))
    return out


def _plain(name: str, folder: Path, source: Path | None) -> list[str]:
    """The parts of a relative name joined by '/': no absolute path, no '', '.' or '..' part, no
    backslash or NUL, so that it can only name something inside `folder`."""
    parts = name.split("/") if isinstance(name, str) else [""]
    if any(part in ("", ".", "..") or "\\" in part or "\0" in part for part in parts):
        raise PipelineError(f"lists {name!r}, not a plain relative path inside {folder.name}: refused (a damaged "
                            "or planted listing; remove it, then run again)", path=source or folder)
    return parts


def _refuse_links(folder: Path) -> None:
    """An output folder holding a symbolic link anywhere is refused: a run would follow it (write pages
    through it, delete or empty what it leads to)."""
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_symlink():
                    raise _link_error(Path(entry.path))
                if entry.is_dir():
                    pending.append(entry.path)


def _link_error(path: Path) -> PipelineError:
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return PipelineError(f"a symbolic link{target} in an output folder: refused, a run never follows one; "
                         "remove it", path=path)


def drop_uncommitted(folder: Path) -> None:
    """Delete a staging folder that was never committed (a committed one is the next run's to finish)."""
    stage = folder / STAGING
    if stage.is_dir() and not (stage / COMMITTED).exists():
        shutil.rmtree(stage, ignore_errors=True)


def writer(folder: Path) -> str:
    """The pid of the run holding `folder`'s lock, or "" when none does (a reader only looks)."""
    try:  # never through a link: its target's text is no pid
        f = os.fdopen(os.open(folder / LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC),
                      encoding="utf-8")
    except OSError:
        return ""
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return f.read().strip() or "unknown"
        fcntl.flock(f, fcntl.LOCK_UN)
    return ""


def _release(f) -> None:
    f.truncate(0)  # an idle folder's lock file is empty: outputs stay byte-identical between runs
    f.flush()


def begin(folder: Path) -> Path:
    """A fresh, empty staging folder inside `folder` (call under `locked`)."""
    stage = confined(folder, STAGING)
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    return stage


STAGES = ("ingest", "segment", "align", "export")  # the order of the stages that write into processed/


def stage_of(name: str) -> str:
    """Which stage a published file belongs to, when a whole run writes them together."""
    stem = name.removeprefix(".stages/").split(".")[0]
    return stem if name.startswith(".stages/") and stem in STAGES else "export"


def commit(folder: Path, run_id: str, stage: str | None = None) -> None:
    """List what the staging folder holds, mark it committed, and move it into place. A whole run
    (`stage` None) replaces every file; one stage replaces its own files and drops those of the
    stages after it (they were made from what it replaces), keeping the earlier stages' files."""
    staging = confined(folder, STAGING)
    files = sorted(p for p in staging.rglob("*") if p.is_file() and p.name != LISTING and p != staging / KEPT)
    new = {p.relative_to(staging).as_posix(): _digest(p) for p in files}
    if (staging / KEPT).exists():  # listed, not moved: apply finds them already in place
        kept = json.loads((staging / KEPT).read_text(encoding="utf-8"))
        checked(folder, kept, staging / KEPT)
        new.update({name: digest for name, digest in kept.items() if name not in new})
    stages = {name: stage or stage_of(name) for name in new}
    if stage is not None:
        old, old_stages = listing(folder) or {}, _stages(folder)
        for name, digest in old.items():
            earlier = STAGES.index(old_stages.get(name, stage_of(name))) < STAGES.index(stage)
            if earlier and name not in new:
                new[name], stages[name] = digest, old_stages.get(name, stage_of(name))
    listed = {"run_id": run_id, "files": dict(sorted(new.items()))}
    tagged = {name: tag for name, tag in sorted(stages.items()) if tag != stage_of(name)}  # only the exceptions
    if tagged:
        listed["stages"] = tagged
    write_atomic(staging / LISTING, json.dumps(listed, indent=1, sort_keys=True) + "\n")
    write_atomic(staging / COMMITTED, run_id + "\n")
    apply(folder)


def apply(folder: Path) -> None:
    """Move a committed staging folder's files into place; safe to repeat after a crash. Every name is
    checked before anything moves: a planted journal is refused whole."""
    stage = confined(folder, STAGING)
    journal = stage / LISTING
    new = _listed(journal)
    if new is None:
        raise PipelineError(f"a committed run whose {LISTING} is damaged: remove {STAGING}, then run again",
                            path=journal)
    moves = list(zip(checked(stage, new, journal), checked(folder, new, journal)))
    gone = checked(folder, sorted(set(listing(folder) or {}) - set(new)), folder / LISTING)
    for (src, staged), (dst, _) in moves:
        if staged is not None:  # absent: kept in place, or already moved by an interrupted apply
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.replace(src, dst)
    for path, there in gone:  # an earlier run's file this run did not write
        if there is not None:
            Path(path).unlink(missing_ok=True)
    for sub in PAGE_FOLDERS:
        pages = confined(folder, sub)
        for page in pages.glob("*.html") if pages.is_dir() else ():
            if f"{sub}/{page.name}" not in new:
                page.unlink()
    os.replace(journal, folder / LISTING)  # last: from here the folder is the new run
    shutil.rmtree(stage, ignore_errors=True)


def keep(staging: Path, kept: dict[str, list]) -> None:
    """Record in a staging folder the published files the run leaves as they are ({name: [bytes,
    sha256]}, what it would have written): commit lists them without rewriting them."""
    write_atomic(staging / KEPT, json.dumps(kept, sort_keys=True) + "\n")


def keep_also(staging: Path, kept: dict[str, list]) -> None:
    """`keep`, beside what another stage of the run keeps already."""
    listed = staging / KEPT
    before = json.loads(listed.read_text(encoding="utf-8")) if listed.exists() else {}
    keep(staging, {**before, **kept})


def same(path: Path, data: bytes) -> bool:
    """`path` holds exactly `data`."""
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def still_listed(path: Path, entry) -> bool:
    """`path` is still the file its run listed as `entry` ([bytes, sha256]): the size first, as a
    page edited by hand mostly changes it, then the bytes."""
    try:
        return isinstance(entry, list) and path.stat().st_size == entry[0] and _digest(path) == entry
    except OSError:
        return False


def recover(folder: Path) -> None:
    """Finish a committed publication or drop an uncommitted one; remove orphan temporary files."""
    stage = confined(folder, STAGING)
    if (stage / COMMITTED).exists() and (stage / LISTING).exists():
        apply(folder)
    shutil.rmtree(stage, ignore_errors=True)
    for tmp in folder.rglob(".*.tmp"):  # write_atomic's names, in any sub-folder (.stages, rules/, ...)
        if tmp.is_file():
            tmp.unlink(missing_ok=True)


def listing(folder: Path) -> dict[str, list] | None:
    """{relative name: [bytes, sha256]} of the published run, or None when there is none; a name that
    is not a plain relative path inside `folder` is an error naming run.json."""
    return _listed(folder / LISTING)


def _listed(path: Path) -> dict[str, list] | None:
    """The files a listing or journal names, each name checked (`_plain`; links are checked where a name
    becomes a path, by `confined`); None when it is unreadable."""
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, dict):
        return None
    for name in files:
        _plain(name, path.parent, path)
    return files


def _stages(folder: Path) -> dict[str, str]:
    try:
        tags = dict(json.loads((folder / LISTING).read_text(encoding="utf-8"))["stages"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    bad = sorted(str(tag) for tag in tags.values() if tag not in STAGES)
    if bad:
        raise PipelineError(f"tags files with {bad[0]!r}, which is no stage ({', '.join(STAGES)}): written by "
                            "something else than this pipeline? remove the folder and run again", path=folder / LISTING)
    return tags


def run_id(folder: Path) -> str:
    try:
        return json.loads((folder / LISTING).read_text(encoding="utf-8"))["run_id"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def missing(folder: Path, name: str, stage: str = "run") -> PipelineError:
    """The error for a file a reader needs that is not in `folder`: which command writes it."""
    return PipelineError(f"{name} is missing: run `python -m pipeline {stage}` first", path=folder)


def verify(folder: Path, names: list[str], quick: bool = False) -> str:
    """For readers: every named file is the one the published run wrote. Returns the run id. With
    `quick`, a file whose size and modification time are still those recorded just after its run
    published it (RUN_STAMP) is not hashed again: what `run` trusts to skip a whole run."""
    for name in names:
        if not (folder / name).exists():
            holder = writer(folder)
            if holder:  # a first run still writing: nothing published yet
                raise PipelineError(f"{name} is not there yet: a run (pid {holder}) is writing here; wait for it "
                                    "to finish", path=folder)
            raise missing(folder, name)
    files = listing(folder)
    if files is None:
        raise PipelineError(f"no readable {LISTING}: these tables were not published by one complete run; "
                            "run `python -m pipeline run` again", path=folder)
    rid = run_id(folder)
    stamps = published_stamps(folder) if quick else {}
    for name in names:
        if name not in files:
            raise PipelineError(f"{name} was not written by run {rid} (the run that wrote {LISTING}); "
                                "run `python -m pipeline run` again", path=folder)
        if name in stamps and stamps[name][0] == files[name][0] and stamp(folder, [name]).get(name) == stamps[name]:
            continue
        if _digest(confined(folder, name, folder / LISTING)) != files[name]:
            raise PipelineError(f"{name} is not the file run {rid} wrote (changed, truncated, or left by "
                                "another run): tables of different runs are never used together; "
                                "run `python -m pipeline run` again", path=folder)
    return rid


def stamp(folder: Path, names=None) -> dict[str, list[int]]:
    """Size and modification time of every published file (or of `names`): a cheap check that none
    changed since."""
    names = list((listing(folder) or {}) if names is None else names)
    return {name: [st.st_size, st.st_mtime_ns] for name, (_, st) in zip(names, checked(folder, names, folder / LISTING))
            if st is not None}


def published_stamps(folder: Path) -> dict[str, list[int]]:
    """The stamp `run` recorded just after publishing into `folder` (a processed folder), or {}."""
    try:
        recorded = json.loads((folder / RUN_STAMP).read_text(encoding="utf-8"))["processed"]
        return recorded if isinstance(recorded, dict) else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def intact(folder: Path, recorded: dict) -> bool:
    files = listing(folder)
    return bool(files) and set(files) == set(recorded) and stamp(folder) == recorded


def _digest(path: Path) -> list:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return [path.stat().st_size, h.hexdigest()]
