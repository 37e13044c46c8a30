"""Ingestion: find the sources, decode them, date them, and hand each to its format's adapter."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from pipeline.decode import decode_with_repairs, mojibake
from pipeline.errors import SourceError
from pipeline.manifest import MANIFEST_NAME, Entry, read_manifest
from pipeline.patterns import FILE_DATE
from pipeline.records import CleanDoc, SourceDoc
from pipeline.sources import ADAPTERS
from pipeline.sources.containers import extract, sniff
from pipeline.sources.official import effective_date, looks_official

IGNORED = {MANIFEST_NAME, "README.md", "overrides.toml"}


@dataclass(frozen=True, slots=True)
class Rejection:
    """A file the run could not use, and why. Written to sources.csv; the run goes on."""

    path: Path
    reason: str
    sha256: str = ""
    n_bytes: int = 0


@dataclass(slots=True)
class Ingested:
    docs: list[CleanDoc] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)


def discover(raw: Path, corpora: list[Path]) -> tuple[list[tuple[Path, Entry | None]], dict[Path, Entry]]:
    """Every file to read: raw/ (manifest entries, or official editions found by content) and corpora."""
    entries = read_manifest(raw)
    found: list[tuple[Path, Entry | None]] = []
    seen: set[Path] = set()
    for folder in [raw, *corpora]:
        if not folder.is_dir():
            raise SourceError("not a folder", path=folder)
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            resolved = path.resolve()
            if path.name in IGNORED or path.name.startswith(".") or resolved in seen:
                continue
            seen.add(resolved)
            found.append((path, entries.get(resolved) if folder == raw else None))
    return found, entries


def read_source(path: Path, entry: Entry | None) -> SourceDoc:
    """Decode and identify one file. Raises SourceError when it cannot be a source."""
    data = path.read_bytes()
    container = sniff(data)
    text, encoding, warnings = (*extract(data, container, path), []) if container else decode_with_repairs(data, path)
    warnings += [f"mojibake in the decoded text: {', '.join(bad)}" for bad in [mojibake(text)] if bad]
    # A PDF or DOCX beside its TXT twin keeps its extension in its id: "2026-01-16.pdf".
    common = dict(source_id=path.name if container else path.stem, path=path, text=text, encoding=encoding,
                  sha256=hashlib.sha256(data).hexdigest(), n_bytes=len(data))
    if entry is not None:
        return SourceDoc(format=entry.format, kind=entry.kind, edition=entry.edition,
                         edition_end=entry.edition_end, language=entry.language, url=entry.url,
                         warnings=tuple(warnings), **common)
    if not looks_official(text):
        raise SourceError("not a Comprehensive Rules edition and not in the manifest "
                          "(no 'Comprehensive Rules' title and no rule 100.1)", path=path)
    stated = effective_date(text)
    named = _date_in_name(path.name)
    if stated and named and stated != named:
        warnings.append(f"file name says {named} but the text is effective {stated}: using {stated}")
    if not stated:
        if not named:
            raise SourceError("no effective date in the text ('These rules are effective as of ...') "
                              "and none in the file name", path=path)
        warnings.append(f"no effective date in the text: using {named} from the file name")
    return SourceDoc(format=container or "official", kind="official rules", edition=stated or named,
                     warnings=tuple(warnings), **common)


def ingest(raw: Path, corpora: list[Path], progress=None) -> Ingested:
    """Read and clean every source. Bad files become rejections; a bad manifest raises."""
    files, _ = discover(raw, corpora)
    out = Ingested()
    for path, entry in (progress(files) if progress else files):
        try:
            doc = read_source(path, entry)
            clean = ADAPTERS[doc.format](doc)
        except SourceError as e:
            data = path.read_bytes() if path.is_file() else b""
            out.rejections.append(Rejection(path, e.message, hashlib.sha256(data).hexdigest(), len(data)))
            continue
        out.docs.append(replace(clean, warnings=doc.warnings + clean.warnings))
    return out


def _date_in_name(name: str) -> str | None:
    m = FILE_DATE.search(name)
    if not m:
        return None
    try:
        return date(int(m["y"]), int(m["m"]), int(m["d"])).isoformat()
    except ValueError:
        return None
