"""Editions published as documents rather than text: recognised by their first bytes (never by the
file name) and turned into text that the official adapter reads like a TXT edition."""
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


def sniff(data: bytes) -> str | None:
    """The container format of these bytes, or None for plain text."""
    head = data[:1024]
    return next((name for name, test in SIGNATURES if test(head)), None)


def extract(data: bytes, fmt: str, path: object = None) -> tuple[str, str]:
    """(text, description of how it was read). Raises SourceError naming the file when it cannot."""
    if fmt == "doc":
        raise SourceError("a Word 97-2003 .doc file: no maintained pure-Python reader exists; "
                          "open it in Word or LibreOffice and save it as DOCX, PDF or plain text", path=path)
    from pipeline.sources import pdf, rtf, word  # the readers load their libraries only when needed
    reader = {"pdf": pdf.extract_text, "docx": word.extract_text, "rtf": rtf.extract_text}[fmt]
    try:
        return reader(data, path)
    except SourceError:
        raise
    except Exception as e:  # a damaged file makes the parsers raise anything: report it, never a traceback
        raise SourceError(f"a damaged {fmt.upper()} file ({type(e).__name__}: {e})", path=path) from None
