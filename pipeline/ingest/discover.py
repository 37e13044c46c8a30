"""Ingestion: find the sources, decode them, date them, and hand each to its format's adapter."""
from __future__ import annotations

import errno
import hashlib
import os
from dataclasses import replace
from datetime import date
from pathlib import Path

from pipeline.ingest.clean import LINE_BREAK, normalize_newlines
from pipeline.ingest.decode import decode_with_repairs, mojibake, replaced_bytes
from pipeline.errors import SourceError
from pipeline.ingest.lockfile import LOCK_NAME, fetched_url
from pipeline.ingest.stored import CleanedFiles
from pipeline.ingest.manifest import MANIFEST_NAME, Entry, read_manifest
from pipeline.patterns import EFFECTIVE_DATE, FILE_DATE
from pipeline.records import CleanDoc, Ingested, Rejection, SourceDoc
from pipeline.ingest.adapters import ADAPTERS
from pipeline.ingest.containers import extract, sniff
from pipeline.ingest.adapters.official import FIRST_RULE_ANYWHERE, effective_date, looks_official

IGNORED = {MANIFEST_NAME, "README.md", "overrides.toml", LOCK_NAME}


CONTAINER_SUFFIXES = (".pdf", ".docx", ".rtf", ".doc")  # ids keep these: a PDF beside its TXT twin
# A source's page is reports/sources/<id>.html, and file names stop at 255 bytes (U+FFFD, in place of an
# undecodable byte, takes three): longer ids are cut and given the hash suffix.
MAX_ID_BYTES = 120
MAX_LINE = 1_000_000  # characters: spaCy's max_length; no rules text has a line near this long
NOT_SOURCES = {"README.md": "documentation", "manifest.toml": "a manifest is only read in --raw",
               "overrides.toml": "overrides are only read in --raw"}


def discover(raw: Path, corpora: list[Path], skipped: list[Rejection] | None = None
             ) -> tuple[list[tuple[Path, Entry | None]], dict[Path, Entry]]:
    """Every file to read: raw/ (manifest entries, or official editions found by content) and corpora.
    What a folder holds but the run does not read is added to `skipped`, with why."""
    entries = read_manifest(raw)
    found: list[tuple[Path, Entry | None]] = []
    seen: set[Path] = set()
    for folder in [raw, *corpora]:
        if not folder.is_dir():
            raise SourceError("not a folder", path=folder)
        for path in sorted(folder.iterdir()):
            why = _not_read(path, folder == raw, seen)
            if why is None:
                seen.add(path.resolve())
                found.append((path, entries.get(path.resolve()) if folder == raw else None))
            elif why and skipped is not None:
                skipped.append(Rejection(path=path, reason=f"not read: {why}"))
    return found, entries


def _not_read(path: Path, in_raw: bool, seen: set[Path]) -> str | None:
    """None for a file to read; else why not ('' for raw/'s own manifest and overrides: used, not sources)."""
    if in_raw and path.name in IGNORED:
        return "" if path.name != "README.md" else NOT_SOURCES["README.md"]
    if path.name == LOCK_NAME:  # fetch's provenance: read for the URLs, not a source
        return ""
    if path.name in NOT_SOURCES:
        return NOT_SOURCES[path.name]
    if path.name.startswith("."):
        return "hidden file (the name starts with '.')"
    try:
        resolved = path.resolve(strict=True)
    except RuntimeError:  # Python 3.11 and 3.12; 3.13 raises OSError ELOOP
        return "symbolic link loop"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "symbolic link loop"
        return "symbolic link to nothing" if path.is_symlink() else "vanished while listed"
    if path.is_dir():
        return "a folder (sub-folders are not searched: pass it as another --corpus)"
    if not path.is_file():
        return "not a regular file (a pipe, socket or device)"
    if resolved in seen:
        return f"the same file as {resolved.name}, already read"
    return None


def source_ids(paths: list[Path]) -> dict[Path, str]:
    """A unique, stable id per file: its name without extension, unless that is not valid UTF-8,
    holds control characters, or an earlier file (raw/ first, then each --corpus in order) already
    has it (compared ignoring case, as some file systems do), or is longer than MAX_ID_BYTES; then it
    is cut to fit, and '-' and the first 8 hex digits of the SHA-256 of the file's full path are added
    (undecodable bytes shown as U+FFFD)."""
    ids: dict[Path, str] = {}
    taken: set[str] = set()
    for path in paths:
        name = path.name if path.suffix.lower() in CONTAINER_SUFFIXES else path.stem  # "2026-01-16.pdf"
        stem = os.fsencode(name).decode("utf-8", "replace")
        clean = "".join(ch if ch.isprintable() else "\ufffd" for ch in stem) or "_"
        sid = clean
        if clean != name or clean.casefold() in taken or len(clean.encode("utf-8")) > MAX_ID_BYTES:
            suffix = hashlib.sha256(os.fsencode(path.absolute())).hexdigest()[:8]
            sid = f"{_cut(clean, MAX_ID_BYTES - len(suffix) - 1)}-{suffix}"
        taken.add(sid.casefold())
        ids[path] = sid
    return ids


def _cut(text: str, n_bytes: int) -> str:
    """The longest start of `text` whose UTF-8 takes at most `n_bytes`."""
    return text.encode("utf-8")[:n_bytes].decode("utf-8", "ignore")


def read_source(path: Path, entry: Entry | None, data: bytes | None = None, source_id: str | None = None) -> SourceDoc:
    """Decode and identify one file. Raises SourceError when it cannot be a source."""
    data = path.read_bytes() if data is None else data
    container = sniff(data)
    text, encoding, warnings = (*extract(data, container, path), []) if container else decode_with_repairs(data, path)
    _check_line_lengths(text, path)
    warnings += [f"mojibake in the decoded text: {', '.join(bad)}" for bad in [mojibake(text)] if bad]
    warnings += replaced_bytes(data, encoding) if not container else []
    # A PDF or DOCX beside its TXT twin keeps its extension in its id: "2026-01-16.pdf".
    common = dict(source_id=source_id or (path.name if container else path.stem), path=path, text=text,
                  encoding=encoding,
                  sha256=hashlib.sha256(data).hexdigest(), n_bytes=len(data))
    if entry is not None:
        return SourceDoc(format=entry.format, kind=entry.kind, edition=entry.edition,
                         edition_end=entry.edition_end, language=entry.language, url=entry.url,
                         warnings=tuple(warnings), **common)
    if not looks_official(text):
        raise SourceError("not a Comprehensive Rules edition and not in the manifest "
                          "(no 'Comprehensive Rules' title and no rule 100.1)", path=path)
    _check_single_edition(text, path)
    stated = effective_date(text)
    named = date_in_name(path.name)
    if stated and named and stated != named:
        warnings.append(f"file name says {named} but the text is effective {stated}: using {stated}")
    if not stated:
        if not named:
            raise SourceError("no effective date in the text ('These rules are effective as of ...') "
                              "and none in the file name", path=path)
        warnings.append(f"no effective date in the text: using {named} from the file name")
    return SourceDoc(format=container or "official", kind="official rules", edition=stated or named,
                     url=fetched_url(path), warnings=tuple(warnings), **common)


def ingest(raw: Path, corpora: list[Path], progress=None, kept: CleanedFiles | None = None) -> Ingested:
    """Read and clean every source (a file `kept` has by its bytes is read back, not cleaned again).
    Bad files become rejections; a bad manifest raises."""
    skipped: list[Rejection] = []
    files, _ = discover(raw, corpora, skipped)
    ids = source_ids([p for p, _ in files] + [r.path for r in skipped])
    out = Ingested(rejections=[replace(r, source_id=ids[r.path]) for r in skipped])
    for path, entry in (progress(files) if progress else files):
        data = b""
        try:
            data = path.read_bytes()
            key = kept.key(path, entry, ids[path], fetched_url(path) if entry is None else "", data) if kept else ""
            clean = kept.get(key, path, data) if kept else None
            if clean is not None:
                out.docs.append(clean)
                continue
            doc = read_source(path, entry, data, ids[path])
            clean = ADAPTERS[doc.format](doc)
            _check_paragraphs(clean, path)
        except (SourceError, OSError) as e:
            reason = e.message if isinstance(e, SourceError) else f"cannot be read: {e.strerror or e}"
            if isinstance(e, SourceError) and e.line:
                reason = f"line {e.line}: {reason}"
            sha256, n_bytes = _fingerprint(path, data)
            out.rejections.append(Rejection(path=path, reason=reason, sha256=sha256, n_bytes=n_bytes,
                                            source_id=ids[path]))
            continue
        out.docs.append(replace(clean, warnings=doc.warnings + clean.warnings))
        if kept:
            kept.put(key, out.docs[-1], data)
    return out


def _fingerprint(path: Path, data: bytes) -> tuple[str, int]:
    """The SHA-256 and size a rejection publishes: none for a symbolic link, whose target may be any file
    on the machine (/etc/hostname); a link that is used is a source like any other."""
    if not data or path.is_symlink():
        return "", 0
    return hashlib.sha256(data).hexdigest(), len(data)


def _check_line_lengths(text: str, path: Path) -> None:
    if len(text) <= MAX_LINE:
        return
    for no, line in enumerate(LINE_BREAK.split(text), 1):
        if len(line) > MAX_LINE:
            raise SourceError(f"a line of {len(line):,} characters (over {MAX_LINE:,}, spaCy's limit): "
                              "not a rules text", path=path, line=no)


def _check_paragraphs(doc: CleanDoc, path: Path) -> None:
    for p in doc.paragraphs:
        if len(p.text) > MAX_LINE:
            raise SourceError(f"a paragraph of {len(p.text):,} characters (over {MAX_LINE:,}, spaCy's limit)",
                              path=path, line=p.first_line)


def _check_single_edition(text: str, path: Path) -> None:
    """A file holding several editions one after another is refused rather than read as one
    edition whose later copies would all become 'credits'."""
    dates: dict[str, int] = {}
    line, counted = 1, 0  # lines are counted on from the previous statement, never from the start
    for m in _date_statements(text):
        stated = effective_date(m.group(0))
        if stated and stated not in dates:
            line += len(LINE_BREAK.findall(text, counted, m.start()))
            counted = m.start()
            dates[stated] = line
    if len(dates) > 1 and len(FIRST_RULE_ANYWHERE.findall(normalize_newlines(text))) > 1:
        where = ", ".join(f"{d} at line {n}" for d, n in dates.items())
        raise SourceError(f"holds {len(dates)} editions ({where}): split it into one file per edition", path=path)
    again = _opening_again(text)
    if again:
        raise SourceError(f"holds the same edition twice (it starts again at line {again}): keep one copy", path=path)


def _opening_again(text: str, size: int = 3) -> int | None:
    """The line where the file's first `size` non-blank lines (title, effective date, 'Introduction')
    appear again, one after another: a second copy of the edition. None when they do not."""
    first = next((line for line in LINE_BREAK.split(text[:4096]) if line.strip().lstrip("\ufeff").strip()), None)
    if first is not None and text.count(first.strip().lstrip("\ufeff").strip()) < 2:
        return None  # the first line's words are nowhere else (most files: 0.1 ms, not the 7 ms of every line)
    lines = [(no, line.strip().lstrip("\ufeff").strip())
             for no, line in enumerate(LINE_BREAK.split(text), 1) if line.strip().lstrip("\ufeff").strip()]
    opening = [line for _, line in lines[:size]]
    if len(opening) < size:
        return None
    for i in range(size, len(lines) - size + 1):
        if lines[i][1] == opening[0] and [line for _, line in lines[i:i + size]] == opening:
            return lines[i][0]
    return None


def _date_statements(text: str):
    """EFFECTIVE_DATE.finditer(text), 20 times faster: the pattern is only tried where one of its
    first words begins (found by str.find), not at every character of a 1 MB text."""
    starts = sorted(i for word in ("effective", "current") for i in _find_all(text, word))
    end = 0
    for i in starts:
        m = EFFECTIVE_DATE.match(text, i) if i >= end else None
        if m:
            end = m.end()
            yield m


def _find_all(text: str, word: str):
    i = text.find(word)
    while i >= 0:
        yield i
        i = text.find(word, i + 1)


def date_in_name(name: str) -> str | None:
    """The ISO date a file name gives (cr-2007-10-01.txt), if it is a real date: ingest's and fetch's."""
    m = FILE_DATE.search(name)
    if not m:
        return None
    try:
        return date(int(m["y"]), int(m["m"]), int(m["d"])).isoformat()
    except ValueError:
        return None
