"""The source manifest (raw/manifest.toml): which non-official file is which source."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pipeline.errors import ManifestError
from pipeline.options import MANIFEST_FORMATS as FORMATS
from pipeline.records import COPY_LANGUAGES, SOURCE_KINDS

MANIFEST_NAME = "manifest.toml"
REQUIRED = ("file", "format", "kind", "edition", "language")
OPTIONAL = ("url", "note")
DATE = r"\d{4}-\d{2}-\d{2}"
LANGUAGES = tuple(code.lower() for code in COPY_LANGUAGES)
EDITION = re.compile(rf"^(?P<start>{DATE})(?:\.\.(?P<end>{DATE}))?$|^unknown$|^(?P<auto>auto)$")


@dataclass(frozen=True, slots=True)
class Entry:
    path: Path
    format: str
    kind: str
    edition: str | None
    edition_end: str | None
    language: str
    url: str
    note: str
    line: int  # manifest line of the entry's [[source]] header

    @property
    def source_id(self) -> str:
        return self.path.stem


def read_manifest(raw: Path) -> dict[Path, Entry]:
    """Entries keyed by resolved file path. Every problem is one ManifestError naming the line."""
    path = raw / MANIFEST_NAME
    if not path.exists():
        return {}
    text = read_utf8(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None) or _line_from_message(str(e))
        raise ManifestError(f"not valid TOML: {e}", path=path, line=line) from None
    unknown_top = set(data) - {"source"}
    if unknown_top:
        key = sorted(unknown_top)[0]
        raise ManifestError(f"unknown top-level key {key!r} (expected [[source]] tables)",
                            path=path, line=key_line(text, key, 0))
    headers = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == "[[source]]"]
    entries: dict[Path, Entry] = {}
    for n, item in enumerate(data.get("source", [])):
        line = headers[n] if n < len(headers) else None
        entry = _entry(item, raw, path, text, line or 0)
        if entry.path in entries:
            raise ManifestError(f"{entry.path.name} is listed twice (first at line "
                                f"{entries[entry.path].line})", path=path, line=line)
        entries[entry.path] = entry
    return entries


def read_utf8(path: Path) -> str:
    """A settings file's text; not UTF-8 is one ManifestError naming the line of the first bad byte."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ManifestError(f"not UTF-8 (byte {e.start} is 0x{data[e.start]:02x}); save it as UTF-8",
                            path=path, line=data[:e.start].count(b"\n") + 1) from None


def _entry(item: dict, raw: Path, path: Path, text: str, line: int) -> Entry:
    def fail(message: str, key: str | None = None):
        at = key_line(text, key, line) if key else line
        raise ManifestError(message, path=path, line=at)

    for key in item:
        if key not in REQUIRED + OPTIONAL:
            fail(f"unknown key {key!r}; allowed: {', '.join(REQUIRED + OPTIONAL)}", key)
    for key in REQUIRED:
        if key not in item:
            fail(f"missing key {key!r}")
        if isinstance(item[key], date):  # TOML's own date type: `edition = 2008-03-17`
            fail(f"{key!r} must be quoted: {key} = \"{item[key].isoformat()}\"", key)
        if not isinstance(item[key], str) or not item[key].strip():
            fail(f"{key!r} must be a non-empty string", key)
    file = raw / item["file"]
    resolved = file.resolve()
    if not resolved.is_relative_to(raw.resolve()):
        fail(f"file {item['file']!r} is outside {raw}/", "file")
    if not resolved.is_file():
        fail(f"file {item['file']!r} does not exist in {raw}/", "file")
    if item["format"] not in FORMATS:
        fail(f"unknown format {item['format']!r}; known: {', '.join(FORMATS)}", "format")
    if item["kind"] not in SOURCE_KINDS:
        fail(f"unknown kind {item['kind']!r}; known: {', '.join(SOURCE_KINDS)}", "kind")
    m = EDITION.match(item["edition"])
    if not m:
        fail(f"edition {item['edition']!r} is not YYYY-MM-DD, YYYY-MM-DD..YYYY-MM-DD, unknown or auto", "edition")
    for side in ("start", "end"):
        if m.group(side) and not _real_date(m.group(side)):
            fail(f"edition {item['edition']!r}: {m.group(side)} is not a real date", "edition")
    if m.group("end") and m.group("end") < m.group("start"):
        fail(f"edition {item['edition']!r}: the range ends before it starts", "edition")
    if item["language"] not in LANGUAGES:
        fail(f"unknown language {item['language']!r}; known (ISO 639-1): {', '.join(LANGUAGES)}", "language")
    return Entry(resolved, item["format"], item["kind"], m.group("start") or m.group("auto"), m.group("end"),
                 item["language"], item.get("url", ""), item.get("note", ""), line)


def _real_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
        return True
    except ValueError:
        return False


def key_line(text: str, key: str, after: int) -> int:
    """First line at or after `after` that assigns `key` (tomllib reports no positions)."""
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=|^\s*\[+\s*{re.escape(key)}\b")
    lines = text.splitlines()
    for i in range(max(after - 1, 0), len(lines)):
        if pattern.match(lines[i]):
            return i + 1
    return after


def _line_from_message(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None
