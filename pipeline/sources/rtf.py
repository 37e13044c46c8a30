"""RTF editions: control words stripped by striprtf, in the code page the file declares."""
from __future__ import annotations

import codecs
import re

from pipeline.errors import SourceError

CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
CODEC = {10000: "mac_roman", 437: "cp437", 1252: "cp1252", 65001: "utf-8"}  # \ansicpgN -> codec
MAC = re.compile(rb"^\{\\rtf1\\mac\b")


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    from striprtf.striprtf import rtf_to_text

    encoding = _encoding(data[:4096])
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SourceError(f"RTF declares code page {encoding!r}, which Python cannot decode", path=path) from None
    # RTF is 7-bit: the bytes above 127 are \'hh escapes, so latin-1 only carries them through.
    text = rtf_to_text(data.decode("latin-1"), encoding=encoding, errors="replace")
    if "\ufffd" in text:
        raise SourceError(f"RTF text has bytes that are not {encoding}", path=path)
    return text, f"rtf ({encoding})"


def _encoding(head: bytes) -> str:
    m = CODE_PAGE.search(head)
    if m:
        page = int(m[1])
        return CODEC.get(page, f"cp{page}")
    return "mac_roman" if MAC.match(head) else "cp1252"  # \ansi without a code page is Windows-1252
