"""Which edition a downloaded file is, read as the ingest code reads it: the date stated in the text,
the file name's date only as a fallback. What is not an edition (an error page served with status
200 on a .txt address, a snapshot of the rules page, a cut-off PDF) says why."""
from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.ingest.decode import decode
from pipeline.errors import SourceError
from pipeline.ingest.discover import date_in_name
from pipeline.records import SourceDoc
from pipeline.ingest.adapters.official import clean, effective_date, looks_official

HTML_START = re.compile(rb"^(?:\xef\xbb\xbf)?\s*(?:<!doctype\s+html|<html|<head|<body|<\?xml[^>]*>\s*<!doctype html)",
                        re.I)
HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)
DOCX_TEXT = re.compile(r"<w:t(?:\s[^>]*)?>([^<]*)</w:t>|</w:p>")
# what zipfile raises for a damaged, encrypted or multi-disk archive, besides BadZipFile
UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError)
RTF_CONTROL = re.compile(r"\\[a-z]+-?\d* ?|\\'[0-9a-f]{2}|\\[^a-z]|[{}]", re.I)  # \par, \'93, \~, braces


@dataclass(frozen=True, slots=True)
class Identity:
    edition: str | None  # ISO date, None when it is not (known to be) an edition
    read_from: str = ""  # "text" or "name" (the file name's date: no text reader for this format)
    complete: bool = True  # txt: the ingest code found the credits after the glossary
    problem: str = ""  # why it is not stored as an edition


def identify(data: bytes, fmt: str, name: str) -> Identity:
    """`name` is the published file name (its date is the fallback)."""
    if HTML_START.match(data[:2048]):
        return Identity(None, problem=f"an HTML page, not a .{fmt} edition{_title(data)}")
    check = FORMAT_CHECKS.get(fmt)
    problem = check(data) if check else ""
    if problem:
        return Identity(None, problem=problem)
    if fmt == "txt":
        return _identify_text(data, name)
    try:
        stated = effective_date(TEXT_FOR_DATE[fmt](data)) if fmt in TEXT_FOR_DATE else None
    except UNREADABLE as e:  # a damaged or encrypted member: _docx_problem only checks the archive's index
        return Identity(None, problem=f"not a readable {fmt.upper()} ({type(e).__name__}: {str(e)[:80]})")
    if stated:
        return Identity(stated, "text")
    named = date_in_name(name)
    if named:
        return Identity(named, "name")
    return Identity(None, problem=f"no date in the file name, and the .{fmt} text is not read here: edition unknown")


def _identify_text(data: bytes, name: str) -> Identity:
    try:
        text, encoding = decode(data, name)
    except SourceError as e:
        return Identity(None, problem=e.message)
    if not looks_official(text):
        return Identity(None, problem="not a Comprehensive Rules edition (no title near the top, or no rule 100.1)")
    stated, named = effective_date(text), date_in_name(name)
    if not (stated or named):
        return Identity(None, problem="no effective date in the text and none in the file name")
    doc = SourceDoc(source_id=Path(name).stem, path=Path(name), format="official", kind="official rules",
                    text=text, encoding=encoding, sha256="", n_bytes=len(data), edition=stated or named)
    try:
        complete = clean(doc).complete
    except SourceError as e:
        return Identity(None, problem=e.message)
    return Identity(stated or named, "text" if stated else "name", complete)


def _pdf_problem(data: bytes) -> str:
    if not data.startswith(b"%PDF-"):
        return f"not a PDF (starts with {data[:16]!r})"
    if b"%%EOF" not in data[-2048:]:
        return "truncated PDF (no %%EOF marker at the end)"
    return ""


def _docx_problem(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            if "word/document.xml" not in z.namelist():
                return "a ZIP file without word/document.xml: not a DOCX"
    except UNREADABLE:
        return "not a DOCX (not a complete ZIP archive: truncated or another kind of file)"
    return ""


def _rtf_problem(data: bytes) -> str:
    return "" if data.lstrip().startswith(b"{\\rtf") else f"not an RTF file (starts with {data[:16]!r})"


FORMAT_CHECKS = {"pdf": _pdf_problem, "docx": _docx_problem, "rtf": _rtf_problem}


def _docx_text(data: bytes) -> str:
    """Enough of a DOCX's text to read its effective date: the runs of the first paragraphs. Only that
    much is inflated: a 1 MB document.xml can inflate to gigabytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as z, z.open("word/document.xml") as member:
        xml = member.read(400_000).decode("utf-8", "replace")
    return "".join(m.group(1) if m.group(1) is not None else "\n" for m in DOCX_TEXT.finditer(xml))


def _rtf_text(data: bytes) -> str:
    """Enough of an RTF's text to read its effective date: control words dropped, from the title on
    (the font and style tables before it are longer than the part effective_date reads)."""
    text = RTF_CONTROL.sub("", data[:1_000_000].decode("latin-1"))
    return text[max(0, text.find("Comprehensive Rules")):]


# Formats whose text is read here only for the date; a PDF needs a real text reader (pipeline.ingest.adapters).
TEXT_FOR_DATE = {"docx": _docx_text, "rtf": _rtf_text}


def _title(data: bytes) -> str:
    m = HTML_TITLE.search(data[:65536])
    title = " ".join(m.group(1).decode("utf-8", "replace").split())[:80] if m else ""
    return f" (title: {title!r})" if title else ""
