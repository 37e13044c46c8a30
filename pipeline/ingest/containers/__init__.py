"""Editions published as documents rather than text: recognised by their first bytes (never by the
file name) and turned into text that the official adapter reads like a TXT edition.

A hostile container costs little to make and much to read (a zip or Flate bomb, millions of empty
paragraphs or pages): the readers check it against the caps below before and while they read, and
refuse it past one with a SourceError naming the file and the cap."""
from __future__ import annotations

from pipeline.errors import SourceError

OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Word 97-2003 .doc (and other Office binaries)
# (format, test on the first bytes): "%PDF-1.4", a ZIP whose first entries name word/, "{\rtf1".
SIGNATURES = (
    ("pdf", lambda head: head.lstrip(b"\x00\t\r\n \xef\xbb\xbf")[:5] == b"%PDF-"),
    ("docx", lambda head: head[:4] == b"PK\x03\x04"),
    ("rtf", lambda head: head.lstrip(b"\x00\t\r\n \xef\xbb\xbf")[:5] == b"{\\rtf"),
    ("doc", lambda head: head[:8] == OLE2),
)

MB = 1 << 20
# Caps, each far above the largest real edition (../shared/cr-formats, 2003-2026: the figure in brackets).
MAX_CONTAINER_BYTES = 64 * MB  # the file itself [2.5 MB: 2026-01-16.pdf]
MAX_INFLATED_BYTES = 128 * MB  # PDF streams or DOCX parts decompressed [9.7 MB: 2026 PDF; 5.1 MB: 2026 DOCX]
MAX_INFLATE_RATIO = 100  # ... per byte of the file [7.3: 2026 DOCX, whose document.xml alone is 33]
MAX_TEXT_CHARS = 8_000_000  # characters read out [0.95 M: 2026 PDF]
MAX_TEXT_RATIO = 32  # ... per byte of the file [2.1: 2013 DOCX]
MAX_PAGES = 3_000  # PDF pages [306: 2026 PDF]
MAX_PDF_MEMORY = 768 * MB  # address space of the process that runs PDFium [153 MB reading the 2026 PDF]
MAX_PDF_SECONDS = 30  # ... and its time [2.4 s: 2026 PDF]
MAX_PARAGRAPHS = 100_000  # DOCX paragraphs [9,203: 2026 DOCX]
MAX_XML_TAGS = 1_000_000  # '<' in a DOCX's parts, a bound on its XML elements [0.22 M: 2026 DOCX]
MAX_ZIP_MEMBERS = 1_000  # parts of a DOCX [30: 2026 DOCX]
MAX_DOC_PIECES = 100_000  # a .doc's piece table, pieces or property modifiers [20: 2005 DOC]
INFLATED = f"bytes ({MAX_INFLATE_RATIO} times the file's size, at most {MAX_INFLATED_BYTES:,})"
CHARACTERS = f"characters ({MAX_TEXT_RATIO} per byte of the file, at most {MAX_TEXT_CHARS:,})"


def sniff(data: bytes) -> str | None:
    """The container format of these bytes, or None for plain text."""
    head = data[:1024]
    return next((name for name, test in SIGNATURES if test(head)), None)


def extract(data: bytes, fmt: str, path: object = None) -> tuple[str, str]:
    """(text, description of how it was read). Raises SourceError naming the file when it cannot."""
    if len(data) > MAX_CONTAINER_BYTES:
        raise over_cap(f"a {fmt.upper()} file of", MAX_CONTAINER_BYTES, "bytes", path)
    from pipeline.ingest.containers import msdoc, pdf, rtf, word  # the readers load their libraries only when needed
    reader = {"pdf": pdf.extract_text, "docx": word.extract_text, "rtf": rtf.extract_text,
              "doc": msdoc.extract_text}[fmt]
    try:
        text, how = reader(data, path)
    except SourceError:
        raise
    except Exception as e:  # a damaged file makes the parsers raise anything: report it, never a traceback
        raise damaged(fmt, f"{type(e).__name__}: {e}", path) from None
    check_text_size(len(text), len(data), path)
    return text, how


def damaged(fmt: str, error: str, path: object) -> SourceError:
    return SourceError(f"a damaged {fmt.upper()} file ({error})", path=path)


def over_cap(what: str, cap: int, unit: str, path: object) -> SourceError:
    """The one-line refusal of a file past a cap ("a PDF of more than 3,000 pages, ...")."""
    return SourceError(f"{what} more than {cap:,} {unit}, far beyond any edition: refused as hostile or "
                       "not an edition", path=path)


def inflate_budget(n_bytes: int) -> int:
    """How many bytes a container of `n_bytes` may decompress to, in all."""
    return min(MAX_INFLATED_BYTES, MAX_INFLATE_RATIO * n_bytes)


def text_budget(n_bytes: int) -> int:
    """How many characters of text a container of `n_bytes` may hold."""
    return min(MAX_TEXT_CHARS, MAX_TEXT_RATIO * n_bytes)


def check_text_size(n_chars: int, n_bytes: int, path: object) -> None:
    if n_chars > text_budget(n_bytes):
        raise over_cap("text of", text_budget(n_bytes), CHARACTERS, path)
