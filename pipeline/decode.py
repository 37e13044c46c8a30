"""Bytes to text. General-purpose charset detectors guess wrong on these files (Windows-1250 for
1252, 1252 for DOS 437), so single-byte candidates are checked against what the rules contain."""
from __future__ import annotations

import codecs
import re

from pipeline.errors import SourceError
from pipeline.patterns import ACCENTED, KNOWN_WORDS, TYPOGRAPHY

SINGLE_BYTE = ("cp1252", "cp437", "mac_roman")  # tried in this order; ties keep the earlier one
BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF16_LE, "utf-16-le"))
MOJIBAKE = ("â€", "Ã©", "Ã¢", "Ã¨", "\ufffd")
NON_ASCII = re.compile(r"[^\x00-\x7f]")


def decode(data: bytes, path: object = None) -> tuple[str, str]:
    """Return (text, encoding name). Raise SourceError for empty, binary or undecodable input."""
    if not data.strip():
        raise SourceError("empty file", path=path)
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
    return [m for m in MOJIBAKE if m in text]


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
