"""Word 97-2003 .doc editions: the main document's text, read through its piece table ([MS-DOC]).

The file is an OLE compound file (opened with olefile). Its WordDocument stream starts with the FIB,
which says which table stream holds the CLX (fWhichTblStm: 0Table or 1Table), where the CLX is, and
how many characters the main document has (ccpText; footnotes, headers and text boxes follow it and are
never read). The CLX's piece table maps character positions to pieces of the WordDocument stream:
8-bit pieces (fCompressed: Windows-1252) or UTF-16 ones. The characters then lose their field codes
(0x13 instructions 0x14 result 0x15: the result is kept, nested fields too) and Word's special
characters become what a TXT edition prints: a line end for a paragraph or a break, nothing for an
object anchor or an optional hyphen.

Every structure is checked before it is used: a FAT chain that loops or ends early, a missing table
stream, an encrypted document, a piece table too long or pointing outside its stream, or more text
than the file can hold are each refused with a SourceError naming the file."""
from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass

import olefile

from pipeline.errors import SourceError
from pipeline.ingest.containers import CHARACTERS, MAX_DOC_PIECES, over_cap, text_budget

WORD_IDENT = 0xA5EC  # FibBase.wIdent
FIRST_WORD97_NFIB = 0xC0  # nFib below this: Word 6/95 or older, whose FIB has another layout
ENCRYPTED, WHICH_TABLE = 1 << 8, 1 << 9  # FibBase flags at 0x0A
CCP_TEXT = 3  # index of ccpText in FibRgLw97
CLX = 33  # index of the (fcClx, lcbClx) pair in FibRgFcLcb97
PRC, PCDT = 1, 2  # CLX entries: property modifiers (skipped), then the piece table
COMPRESSED = 1 << 30  # in a piece's FcCompressed
FC_MASK = COMPRESSED - 1

# Bytes 0x80-0x9F of an 8-bit piece: Windows-1252 where it defines them, else the same code point ([MS-DOC] 2.4.1).
CP1252 = {b: bytes([b]).decode("cp1252", "ignore") or chr(b) for b in range(0x80, 0xA0)}
FIELD_MARK = re.compile("([\x13\x14\x15])")  # field begin, separator, end
FIELD_BEGIN, FIELD_SEPARATOR, FIELD_END = "\x13", "\x14", "\x15"
# Word's special characters, as a TXT edition prints them (every other control character is dropped):
SPECIAL = {
    0x0D: "\n",  # paragraph end
    0x0B: "\n",  # line break (Shift+Enter)
    0x0C: "\n",  # page or section break
    0x0E: "\n",  # column break
    0x07: "\t",  # table cell or row end
    0x09: "\t",  # tab
    0x1E: "-",  # non-breaking hyphen
    0x1F: "",  # optional hyphen, shown only where a line wraps
}
CONTROLS = {c: SPECIAL.get(c, "") for c in range(0x20)}  # 0x01 picture, 0x08 drawing, 0x02 footnote mark...


@dataclass(frozen=True, slots=True)
class Fib:
    table: str  # "0Table" or "1Table"
    ccp_text: int  # characters of the main document
    fc_clx: int  # where the CLX is in the table stream, and its size
    lcb_clx: int


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    try:  # olefile's errors (OleFileError) are OSErrors, raised opening the file or a stream
        with olefile.OleFileIO(io.BytesIO(data), raise_defects=olefile.DEFECT_INCORRECT) as ole:
            word = _stream(ole, "WordDocument", path, "not a Word document (an Excel or PowerPoint file?)")
            fib = read_fib(word, path)
            table = _stream(ole, fib.table, path, "the FIB names a table stream the file does not have")
    except OSError as e:
        raise SourceError(f"a damaged Word 97-2003 file (OLE container: {e})", path=path) from None
    pieces = read_pieces(_clx(table, fib, path), path)
    if pieces[-1][1] < fib.ccp_text:
        raise SourceError(f"a damaged Word 97-2003 file (its piece table holds {pieces[-1][1]:,} of the "
                          f"{fib.ccp_text:,} characters of its text)", path=path)
    if fib.ccp_text > text_budget(len(data)):
        raise over_cap("text of", text_budget(len(data)), CHARACTERS, path)
    characters = main_text(word, pieces, fib.ccp_text, path)
    return plain(characters), f"doc (olefile, {len(pieces)} pieces)"


def _stream(ole, name: str, path: object, missing: str) -> bytes:
    """A stream's bytes, once its sector chain is known to be sound."""
    entry = next((kid for kid in ole.root.kids if kid.name == name and kid.entry_type == olefile.STGTY_STREAM), None)
    if entry is None:
        raise SourceError(f"a Word 97-2003 file without a {name} stream: {missing}", path=path)
    check_chain(ole, entry, path)
    return ole.openstream(name).read()


def check_chain(ole, entry, path: object) -> None:
    """Refuse a stream whose sector chain loops or ends before the stream does: olefile would read a loop
    over and over up to the stream's declared size, and give the repeated bytes as the stream's."""
    if entry.size < ole.minisectorcutoff:  # a small stream lives in the mini stream, chained by the mini FAT
        ole.loadminifat()
        fat, sector = ole.minifat, ole.mini_sector_size
    else:
        fat, sector = ole.fat, ole.sector_size
    seen, current = set(), entry.isectStart
    for _ in range(-(-entry.size // sector)):
        if current >= len(fat) or current in seen:
            problem = "loops back on itself" if current in seen else "ends early"
            raise SourceError(f"a damaged Word 97-2003 file (the sector chain of its {entry.name} stream "
                              f"{problem})", path=path)
        seen.add(current)
        current = fat[current]


def read_fib(word: bytes, path: object) -> Fib:
    """The FIB's fields this reader needs, checked."""
    if len(word) < 0x22 or struct.unpack_from("<H", word)[0] != WORD_IDENT:
        raise SourceError("an OLE file whose WordDocument stream is not a Word document", path=path)
    n_fib, flags = struct.unpack_from("<H", word, 2)[0], struct.unpack_from("<H", word, 0x0A)[0]
    if flags & ENCRYPTED:
        raise SourceError("an encrypted (password-protected) Word document: open it in Word and save it "
                          "without a password", path=path)
    if n_fib < FIRST_WORD97_NFIB:
        raise SourceError(f"a Word 6/95 document (nFib {n_fib:#x}), older than Word 97: save it as DOCX or TXT",
                          path=path)
    try:  # FibBase (32 bytes), csw and FibRgW, cslw and FibRgLw, cbRgFcLcb and FibRgFcLcb
        csw = struct.unpack_from("<H", word, 0x20)[0]
        at = 0x22 + 2 * csw
        cslw = struct.unpack_from("<H", word, at)[0]
        ccp_text = struct.unpack_from("<i", word, at + 2 + 4 * CCP_TEXT)[0] if cslw > CCP_TEXT else -1
        at += 2 + 4 * cslw
        pairs = struct.unpack_from("<H", word, at)[0]
        fc_clx, lcb_clx = struct.unpack_from("<II", word, at + 2 + 8 * CLX) if pairs > CLX else (0, 0)
    except struct.error:
        raise SourceError("a damaged Word 97-2003 file (its FIB is cut short)", path=path) from None
    if ccp_text < 0 or lcb_clx == 0:
        raise SourceError("a damaged Word 97-2003 file (its FIB has no text length or no piece table)", path=path)
    return Fib("1Table" if flags & WHICH_TABLE else "0Table", ccp_text, fc_clx, lcb_clx)


def _clx(table: bytes, fib: Fib, path: object) -> bytes:
    if fib.fc_clx + fib.lcb_clx > len(table):
        raise SourceError(f"a damaged Word 97-2003 file (its piece table lies outside the {fib.table} stream)",
                          path=path)
    return table[fib.fc_clx:fib.fc_clx + fib.lcb_clx]


def read_pieces(clx: bytes, path: object) -> list[tuple[int, int, int, bool]]:
    """The piece table: (first character, end character, offset in WordDocument, 8-bit?) per piece.
    The CLX's property modifiers before it are skipped, each counted against MAX_DOC_PIECES too."""
    at, entries = 0, 0
    while at + 3 <= len(clx) and clx[at] == PRC and entries <= MAX_DOC_PIECES:
        size = struct.unpack_from("<h", clx, at + 1)[0]
        if size < 0:
            break  # refused below: no piece table here
        at, entries = at + 3 + size, entries + 1
    if entries > MAX_DOC_PIECES:
        raise over_cap("a Word piece table of", MAX_DOC_PIECES, "entries", path)
    if at + 5 > len(clx) or clx[at] != PCDT:
        raise SourceError("a damaged Word 97-2003 file (no piece table in its CLX)", path=path)
    size = struct.unpack_from("<I", clx, at + 1)[0]
    n = (size - 4) // 12  # n + 1 character positions of 4 bytes, then n descriptors of 8
    if size < 16 or size != 4 + 12 * n or at + 5 + size > len(clx):
        raise SourceError(f"a damaged Word 97-2003 file (a piece table of {size:,} bytes)", path=path)
    if n > MAX_DOC_PIECES:
        raise over_cap("a Word piece table of", MAX_DOC_PIECES, "pieces", path)
    positions = struct.unpack_from(f"<{n + 1}i", clx, at + 5)
    if positions[0] != 0 or any(a >= b for a, b in zip(positions, positions[1:])):
        raise SourceError("a damaged Word 97-2003 file (its piece table's positions do not increase)", path=path)
    pieces = []
    for i in range(n):
        fc = struct.unpack_from("<I", clx, at + 5 + 4 * (n + 1) + 8 * i + 2)[0]
        pieces.append((positions[i], positions[i + 1], fc & FC_MASK, bool(fc & COMPRESSED)))
    return pieces


def main_text(word: bytes, pieces: list[tuple[int, int, int, bool]], ccp_text: int, path: object) -> str:
    """The characters 0 .. ccp_text, piece by piece, as Word stores them (special characters included)."""
    parts = []
    for start, end, fc, eight_bit in pieces:
        if start >= ccp_text:
            break
        n = min(end, ccp_text) - start
        offset, size = (fc // 2, n) if eight_bit else (fc, 2 * n)
        if offset + size > len(word):
            raise SourceError("a damaged Word 97-2003 file (a piece of its text lies outside the WordDocument "
                              "stream)", path=path)
        chunk = word[offset:offset + size]
        parts.append(chunk.decode("latin-1").translate(CP1252) if eight_bit else chunk.decode("utf-16-le", "replace"))
    return "".join(parts)


def plain(characters: str) -> str:
    """Word's characters as text: field codes dropped (each field's result kept), special characters
    mapped. One pass, whatever the fields' nesting."""
    kept, results, hidden = [], [], 0  # results: per open field, whether its result has started
    for part in FIELD_MARK.split(characters):
        if part == FIELD_BEGIN:
            results.append(False)
            hidden += 1
        elif part == FIELD_SEPARATOR:
            if results and not results[-1]:
                results[-1] = True
                hidden -= 1
        elif part == FIELD_END:
            if results and not results.pop():
                hidden -= 1
        elif hidden == 0:
            kept.append(part)
    return "".join(kept).translate(CONTROLS)
