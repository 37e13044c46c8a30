"""Bytes to text. General-purpose charset detectors guess wrong on these files (Windows-1250 for
1252, 1252 for DOS 437), so single-byte candidates are checked against what the rules contain."""
from __future__ import annotations

import bisect
import codecs
import re

from pipeline.ingest.clean import MAX_CHARS, NOT_RULES
from pipeline.errors import SourceError
from pipeline.patterns import ACCENTED, KNOWN_WORDS, TYPOGRAPHY

SINGLE_BYTE = ("cp1252", "cp437", "mac_roman")  # tried in this order; ties keep the earlier one
BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF16_LE, "utf-16-le"))
MOJIBAKE = ("â€", "Ã©", "Ã¢", "Ã¨", "\ufffd")
NON_ASCII = re.compile(r"[^\x00-\x7f]")


MANGLED_BOM = b"\xef\xbf\xbd\xef\xbf\xbd"  # a UTF-16 BOM that went through a UTF-8 "repair"
# Out of step by one byte, UTF-16 text reads as characters whose low byte is 0 ("A" 00 -> U+4100):
# NUL and U+0100, U+0200 ... U+FF00. Real rules text never holds them.
OUT_OF_STEP = re.compile("[" + "".join(re.escape(chr(x << 8)) for x in range(256)) + "]")
LOST = "\ufffd"
MAX_BYTES = 4 * MAX_CHARS  # no encoding takes more than 4 bytes a character: refused before decoding


def decode(data: bytes, path: object = None) -> tuple[str, str]:
    """Return (text, encoding name). Raise SourceError for empty, binary or undecodable input."""
    text, encoding, _ = decode_with_repairs(data, path)
    return text, encoding


def decode_with_repairs(data: bytes, path: object = None) -> tuple[str, str, list[str]]:
    """(text, encoding, warnings): a damaged UTF-16 file is repaired, and the warnings say where."""
    if len(data) > MAX_BYTES:
        raise SourceError(f"{len(data):,} bytes (over {MAX_BYTES:,}): {NOT_RULES}", path=path)
    if not data.strip():
        raise SourceError("empty file", path=path)
    if data.startswith(MANGLED_BOM) and b"\x00" in data[:200]:
        return _repair_utf16(data[len(MANGLED_BOM):], path)
    return (*_decode(data, path), [])


def _decode(data: bytes, path: object) -> tuple[str, str]:
    for bom, name in BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(name.replace("-sig", "")), name
            except UnicodeDecodeError as e:
                raise SourceError(f"starts with a {name} byte-order mark but byte {e.start} "
                                  f"is not {name}", path=path, line=_line_of(data, e.start)) from None
    if b"\x00" in data:
        return _decode_bomless_utf16(data, path)
    try:
        text = data.decode("utf-8")
        return text, "ascii" if data.isascii() else "utf-8"
    except UnicodeDecodeError:
        pass
    if _clearly_utf8(data):  # a few bad bytes in a UTF-8 file: replaced and reported, not mojibake
        return data.decode("utf-8", "replace"), "utf-8"
    if _looks_binary(data):
        raise SourceError("binary file (control bytes), not text", path=path)
    scored = []
    for name in SINGLE_BYTE:
        try:
            text = data.decode(name)
        except UnicodeDecodeError:
            continue
        scored.append((plausibility(text), -SINGLE_BYTE.index(name), name, text))
    if not scored:
        raise SourceError("bytes are neither UTF-8 nor a known single-byte encoding", path=path)
    _, _, name, text = max(scored)
    return text, name


UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
LOCATED = 10  # invalid sequences located by line in the warning; the rest are counted


def _clearly_utf8(data: bytes) -> bool:
    """Valid multi-byte UTF-8 sequences outnumber the invalid bytes at least two to one (a
    single-byte encoding's text almost never forms valid UTF-8 sequences)."""
    valid = len(UTF8_MULTIBYTE.findall(data))
    invalid = _invalid_count(data)
    return valid >= 2 and valid >= 2 * invalid


def _invalid_count(data: bytes) -> int:
    return data.decode("utf-8", "replace").count("\ufffd") - data.count("\ufffd".encode())


def replaced_bytes(data: bytes, encoding: str) -> list[str]:
    """The warning for a UTF-8 file decoded with replacement: how many invalid sequences, and where."""
    if encoding != "utf-8":
        return []
    try:
        data.decode("utf-8")
        return []
    except UnicodeDecodeError:
        pass
    where, pos = [], 0
    while len(where) < LOCATED:
        try:
            data[pos:].decode("utf-8")
            break
        except UnicodeDecodeError as e:
            offset = pos + e.start
            where.append(f"line {_line_of(data, offset)} (byte {offset})")
            pos = pos + e.end
    n = _invalid_count(data)
    more = f" and {n - len(where)} more" if n > len(where) else ""
    return [f"{n} invalid UTF-8 byte sequence{'s' if n != 1 else ''} replaced with U+FFFD: "
            f"{', '.join(where)}{more}"]


def plausibility(text: str) -> int:
    """Score a candidate decoding: known words and typography count for, odd characters against."""
    score = 10 * sum(text.count(w) for w in KNOWN_WORDS)
    for m in NON_ASCII.finditer(text):
        i, ch = m.start(), m.group()
        if ch in TYPOGRAPHY:
            score += 1
        elif ch in ACCENTED and 0 < i < len(text) - 1 and text[i - 1].isalpha() and text[i + 1].isalpha():
            score += 1
        else:
            score -= 1
    return score


def mojibake(text: str) -> list[str]:
    """Sequences that show text was decoded with the wrong codec somewhere upstream."""
    return [m for m in MOJIBAKE if m[0] in text and m in text]  # one character is found 10 times faster


def _repair_utf16(data: bytes, path: object) -> tuple[str, str, list[str]]:
    """A byte lost here and there puts UTF-16 out of step. Both one-byte alignments are decoded
    once; the text is read from one until it goes out of step, then from the other. The character
    whose byte was lost is recovered when its zero byte was the lost one, guessed for a line break
    in CRLF text, and otherwise marked U+FFFD."""
    if _utf16_order(data) is None:
        raise SourceError("starts with a mangled byte-order mark but is not UTF-16", path=path)
    # Little-endian bytes read backwards are big-endian text read backwards: one algorithm for both.
    # Lost bytes flip which positions hold the zero bytes, so the byte order is the reading that
    # needs fewer repairs.
    readings = [_resync(data, "\r\n"), _resync(data[::-1], "\n\r")]
    forward = readings[0][1] <= readings[1][1]
    name = "utf-16-be" if forward else "utf-16-le"
    out, repairs, lost = readings[0] if forward else readings[1]
    text = "".join(out) if forward else "".join(out)[::-1]
    text = text.encode("utf-16-le", errors="surrogatepass").decode("utf-16-le", errors="replace")
    warnings = ["damaged UTF-16: byte-order mark mangled into EF BF BD EF BF BD"]
    if repairs:
        offsets = list(_repair_offsets(out))
        if not forward:
            offsets = [len(text) - 1 - i for i in offsets]
        breaks = [m.start() for m in re.finditer("\n", text)]
        lines = sorted({bisect.bisect_left(breaks, i) + 1 for i in offsets})
        shown = ", ".join(map(str, lines[:20])) + (", ..." if len(lines) > 20 else "")
        warnings.append(f"damaged UTF-16: bytes missing, re-synchronised at {repairs} places, {lost} characters "
                        f"lost (marked U+FFFD), on lines {shown}")
    return text, f"{name} (repaired)", warnings


def _resync(data: bytes, line_break: str) -> tuple[list[str], int, int]:
    """Big-endian UTF-16 with bytes missing -> (pieces, in-step text and repaired characters
    alternating; repairs; characters lost)."""
    streams = [data[i:len(data) - (len(data) - i) % 2].decode("utf-16-be", errors="surrogatepass") for i in (0, 1)]
    out: list[str] = []
    parity = index = 0
    repairs = lost = 0
    while True:
        stream = streams[parity]
        m = OUT_OF_STEP.search(stream, index)
        if m is None:
            out.append(stream[index:])
            break
        out.append(stream[index:m.start()])
        code = ord(m.group()) >> 8
        char = chr(code) if code else LOST  # a zero byte lost: the other byte is the character
        if char == LOST or (code < 32 and char not in "\r\n\t"):
            char = _guess_lost(out, stream, m.end(), line_break)
        lost += char == LOST
        out.append(char)
        repairs += 1
        index = m.start() + parity  # the other alignment, one byte further on
        parity = 1 - parity
    return out, repairs, lost


def _guess_lost(out: list[str], stream: str, after: int, line_break: str) -> str:
    """A lost character right after CR (before LF) is the line break's other half."""
    first, second = line_break
    before = out[-1][-1:] if out and out[-1] else ""
    nxt = stream[after:after + 1]
    if before == first and nxt != second:
        return second
    if nxt == second and before not in (first, ""):
        return first
    return LOST


def _repair_offsets(out: list[str]):
    """Offsets in the joined text of the repaired characters (every second piece of `out`)."""
    offset = 0
    for i, piece in enumerate(out):
        if i % 2:
            yield offset
        offset += len(piece)


def _utf16_order(data: bytes) -> str | None:
    """Which positions hold most zero bytes (lost bytes may have flipped them midway); None when
    too few bytes are zero for UTF-16 text."""
    sample = data[:65536]
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    half = len(sample) // 2 or 1
    if (even + odd) / half < 0.3:
        return None
    return "utf-16-be" if even > odd else "utf-16-le"


def _decode_bomless_utf16(data: bytes, path: object) -> tuple[str, str]:
    even = data[0::2].count(0)
    odd = data[1::2].count(0)
    half = len(data) // 2 or 1
    if max(even, odd) / half > 0.3 and min(even, odd) / half < 0.05:
        name = "utf-16-be" if even > odd else "utf-16-le"
        try:
            return data.decode(name), name
        except UnicodeDecodeError:
            pass
    raise SourceError("binary file (NUL bytes), not text", path=path)


def _looks_binary(data: bytes) -> bool:
    controls = sum(1 for b in data[:65536] if b < 32 and b not in (9, 10, 12, 13))
    return controls > 0.01 * min(len(data), 65536)


def _line_of(data: bytes, offset: int) -> int:
    return data[:offset].count(b"\n") + 1
