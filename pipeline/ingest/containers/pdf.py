"""PDF editions: the text layer page by page (pypdfium2), and the page furniture to drop.

The text keeps the PDF's hard line breaks; each page ends with a line holding only a form feed,
so the adapter knows where pages start (for page + line references and for running heads).

PDFium inflates a page's content streams whole and builds an object per drawing operator, so a 1 MB
file can make it take gigabytes. Two guards: a linear scan of the file's compressed streams refuses
one that inflates past the budget (the usual bomb, with a clear reason), and PDFium itself runs in a
child process capped in memory and time, which catches whatever the scan cannot see (a stream drawn
on thousands of pages, encrypted streams, a crash)."""
from __future__ import annotations

import base64
import binascii
import inspect
import json
import re
import signal
import subprocess
import sys
import zlib
from collections import Counter

from pipeline.ingest.clean import LINE_BREAK
from pipeline.errors import SourceError
from pipeline.patterns import NUMBERED_START
from pipeline.ingest.containers import (CHARACTERS, INFLATED, MAX_PAGES, MAX_PDF_MEMORY, MAX_PDF_SECONDS,
                                         damaged, inflate_budget, over_cap, text_budget)
from pipeline.ingest.adapters.official import HEADING

PAGE_BREAK = "\f"
# PDFium marks a hyphen it joined across a line end with U+FFFE ("State\ufffeBased"): the line
# break is put back, after a real hyphen, so lines are the page's lines and unwrapping keeps it.
LINE_END_HYPHEN = "\ufffe"
PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$", re.I)
EDGE = 3  # running heads and footers are among the first or last few lines of a page
REPEATS = 0.3  # ... and recur on at least this share of the pages
# A stream's data starts after the keyword (not "endstream") and its end of line; the filters PDFium
# inflates text through are Flate, alone or under ASCII85 or ASCIIHex (the 2003 PDF: [/A85 /Flate]).
STREAM = re.compile(rb"(?<![A-Za-z])stream(?:\r\n|\r|\n)?")
CHUNK = 1 << 20  # bytes inflated at a time
FEED = 1 << 16  # compressed bytes fed at a time
SCANS = 4  # passes over the file the measuring may take [1.0 in a real PDF: no stream inside another]


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    check_streams(data, path)
    pages = [_tidy(text) for text in _read_in_child(data, path)]
    if not any(p.strip() for p in pages):
        raise SourceError("a PDF without a text layer (scanned pages?): nothing to read", path=path)
    return "".join(p + PAGE_BREAK + "\n" for p in pages), "pdf (pypdfium2)"


def _tidy(text: str) -> str:
    text = LINE_BREAK.sub("\n", text.replace(LINE_END_HYPHEN, "-\n"))
    return text if not text or text.endswith("\n") else text + "\n"


# --- the compressed streams, measured without PDFium --------------------------------------------------

def check_streams(data: bytes, path: object = None) -> None:
    """Refuse a PDF whose compressed streams inflate past inflate_budget, in time linear in the file
    plus the budget. Every "stream" keyword is tried, so a dictionary that hides its /Filter hides
    nothing; streams nested inside others are measured again each, up to SCANS passes over the file."""
    budget, inflated, scanned, ascii85_end = inflate_budget(len(data)), 0, 0, 0
    for m in STREAM.finditer(data):
        size, taken = _inflated(data, m.end(), budget - inflated)
        hex_size, hex_end = _encoded_size(data, m.end(), HEX, budget - inflated - size)
        size, taken = size + hex_size, taken + hex_end - m.end()
        if m.end() >= ascii85_end:  # keywords inside an ASCII85 run would find the same end: tried once
            ascii85_size, ascii85_end = _encoded_size(data, m.end(), ASCII85, budget - inflated - size)
            size, taken = size + ascii85_size, taken + ascii85_end - m.end()
        inflated, scanned = inflated + size, scanned + taken
        if inflated > budget:
            raise over_cap("its compressed streams inflate to", budget, INFLATED, path)
        if scanned > SCANS * len(data) + FEED:
            raise over_cap("compressed streams nested so deep that measuring them takes", SCANS,
                           "passes over the file", path)


def _inflated(data: bytes, start: int, budget: int) -> tuple[int, int]:
    """(bytes the zlib stream at data[start:] inflates to, bytes of `data` it takes), (0, 0) if none
    starts there. Counting stops past `budget`; the stream goes in FEED bytes and comes out CHUNK
    bytes at a time, so a bomb is never held."""
    if len(data) < start + 2 or data[start] & 0x0F != 8 or (data[start] << 8 | data[start + 1]) % 31:
        return 0, 0
    view, inflate, size, fed = memoryview(data), zlib.decompressobj(), 0, 0
    try:
        for at in range(start, len(data), FEED):
            pending = view[at:at + FEED]
            fed += len(pending)
            while pending and size <= budget and not inflate.eof:  # at its end the rest stays a "tail"
                size += len(inflate.decompress(pending, CHUNK))
                pending = inflate.unconsumed_tail
            if inflate.eof:
                return size, fed - len(inflate.unused_data)
            if size > budget:
                return size, fed - len(pending)
    except zlib.error:  # PDFium stops where zlib does
        pass
    return size, fed


def _encoded_size(data: bytes, start: int, encoding: tuple, budget: int) -> tuple[int, int]:
    """(bytes the ASCIIHex or ASCII85 stream at `start` decodes and inflates to, where its run of
    characters ends); 0 when the run does not close there."""
    run, close, decode = encoding
    end = run.match(data, start).end()
    if end == start or not data.startswith(close, end):
        return 0, end
    encoded = data[start:end]
    if 4 * len(encoded) > budget:  # ASCII85's "z" stands for four bytes
        return budget + 1, end
    try:
        decoded = decode(encoded)
    except (ValueError, binascii.Error):
        return 0, end
    return max(len(decoded), _inflated(decoded, 0, budget)[0]), end


def _unhex(encoded: bytes) -> bytes:
    digits = re.sub(rb"\s", b"", encoded)
    return binascii.unhexlify(digits + b"0" * (len(digits) % 2))  # an odd last digit is followed by 0


def _un85(encoded: bytes) -> bytes:
    return base64.a85decode(encoded, ignorechars=b" \t\n\r\v\f")


HEX = (re.compile(rb"[0-9A-Fa-f\s]*"), b">", _unhex)  # a hex run holds no keyword: each is tried once
ASCII85 = (re.compile(rb"[!-uz\s]*"), b"~>", _un85)


# --- PDFium, in a child process ---------------------------------------------------------------------

def _read_in_child(data: bytes, path: object) -> list[str]:
    """Each page's text as PDFium gives it, read by a child process under MAX_PDF_MEMORY and
    MAX_PDF_SECONDS; the page count and text size are capped there too."""
    program = _child_program(len(data))
    try:
        done = subprocess.run([sys.executable, "-I", "-c", program], input=data, capture_output=True,
                              timeout=MAX_PDF_SECONDS)
    except subprocess.TimeoutExpired:
        raise over_cap("a PDF that takes", MAX_PDF_SECONDS, "seconds to read", path) from None
    if done.returncode:
        raise SourceError(_child_failure(done.returncode, done.stderr), path=path)
    reply = json.loads(done.stdout)
    if "pages" in reply:
        return reply["pages"]
    if "refused" in reply:
        raise SourceError(reply["refused"], path=path)
    if "damaged" in reply:
        raise damaged("pdf", reply["damaged"], path)
    if reply["over"] == "pages":
        raise over_cap("a PDF of", MAX_PAGES, "pages", path)
    raise over_cap("text of", text_budget(len(data)), CHARACTERS, path)


def _child_program(n_bytes: int) -> str:
    """The child's program: the two functions below (they import only the standard library and
    pypdfium2, from this process's sys.path, so the child starts in ~0.15 s) and a call of each."""
    return "\n".join([
        "import json, sys", f"sys.path[:] = {sys.path!r}",
        inspect.getsource(_limit_memory), inspect.getsource(_read_pages),
        f"_limit_memory({MAX_PDF_MEMORY})",
        f"json.dump(_read_pages(sys.stdin.buffer.read(), {MAX_PAGES}, {text_budget(n_bytes)}), sys.stdout)"])


def _child_failure(returncode: int, stderr: bytes) -> str:
    if returncode < 0:  # PDFium aborts when an allocation fails
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else -returncode
        return (f"the PDF reader was stopped by {name}: the file needs more than {MAX_PDF_MEMORY >> 20} MB "
                "of memory or crashes PDFium")
    last = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
    return f"the PDF reader failed ({last[0]})"


def _limit_memory(limit: int) -> None:
    """Runs in the child: cap its address space (where the platform can)."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass


def _read_pages(data: bytes, max_pages: int, max_chars: int) -> dict:
    """Runs in the child, so it uses no name from this module. {"pages": [text, ...]}, or {"refused":
    why}, {"damaged": "Error: message"}, {"over": "pages" or "text"}."""
    import pypdfium2 as pdfium
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        return {"refused": f"a PDF that cannot be read ({e})"}
    try:
        if len(document) > max_pages:
            return {"over": "pages"}
        pages, chars = [], 0
        for i in range(len(document)):
            page = document[i]
            textpage = page.get_textpage()
            try:
                pages.append(textpage.get_text_range())
            finally:
                textpage.close()
                page.close()
            chars += len(pages[-1])
            if chars > max_chars:
                return {"over": "text"}
        return {"pages": pages}
    except Exception as e:  # a damaged file makes PDFium raise anything: the parent reports it
        return {"damaged": f"{type(e).__name__}: {e}"}
    finally:
        document.close()


# --- page furniture -----------------------------------------------------------------------------------



def furniture(lines: list[str]) -> dict[int, str]:
    """Line index -> reason, for page breaks, page numbers and running heads or footers: lines at
    a page's top or bottom that recur (digits aside) on many pages. Rules never qualify."""
    pages = _pages(lines)
    out = {i: "page breaks" for i, line in enumerate(lines) if line == PAGE_BREAK}
    edges = [[i for i in page if lines[i].strip()] for page in pages]
    edges = [e[:EDGE] + e[-EDGE:] if len(e) > 2 * EDGE else e for e in edges]
    shape = {i: re.sub(r"\d+", "#", " ".join(lines[i].split())) for e in edges for i in e}
    counts = Counter(s for e in edges for s in {shape[i] for i in e})
    enough = max(3, REPEATS * len(pages))
    for e in edges:
        for i in e:
            text = lines[i].strip()
            if NUMBERED_START.match(text) or HEADING.match(text):
                continue
            if PAGE_NUMBER.match(text) and (i == e[0] or i == e[-1]):
                out[i] = "page numbers"
            elif counts[shape[i]] >= enough:
                out[i] = "running heads and footers"
    return out


def _pages(lines: list[str]) -> list[list[int]]:
    pages, current = [], []
    for i, line in enumerate(lines):
        if line == PAGE_BREAK:
            pages.append(current)
            current = []
        else:
            current.append(i)
    return pages + ([current] if current else [])
