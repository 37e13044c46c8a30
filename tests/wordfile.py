"""Word 97-2003 .doc files built in code for the tests (no committed binaries): an OLE compound file
(version 3, 512-byte sectors, every stream at least 4,096 bytes so none lives in the mini stream)
holding a WordDocument stream (a Word 97 FIB, then the text's pieces) and a table stream (the CLX).

`word_file(["8-bit text", ("UTF-16 text", False)])` is a readable document; the keyword arguments
make the damaged or hostile ones."""
from __future__ import annotations

import struct

SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
SECTOR = 512
FREE, END, FAT_SECTOR, NO_STREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
MIN_STREAM = 4096  # the mini stream cutoff: smaller streams would live in the mini stream
ENCRYPTED, WHICH_TABLE, COMPRESSED = 1 << 8, 1 << 9, 1 << 30
TEXT_AT = 1024  # where the first piece's bytes start in WordDocument, after the FIB


def fib(ccp_text: int, fc_clx: int, lcb_clx: int, flags: int = WHICH_TABLE, n_fib: int = 0xC1) -> bytes:
    """A Word 97 FIB: FibBase, 14 words, 22 longs (ccpText the 4th), 93 (fc, lcb) pairs (the CLX the 34th)."""
    base = struct.pack("<HHHHHHH", 0xA5EC, n_fib, 0, 0x0409, 0, flags, 0xBF).ljust(32, b"\0")
    longs = [0] * 22
    longs[3] = ccp_text
    pairs = [0] * (2 * 93)
    pairs[66:68] = [fc_clx, lcb_clx]
    return (base + struct.pack("<H", 14) + b"\0" * 28 + struct.pack("<H22i", 22, *longs)
            + struct.pack("<H186I", 93, *pairs) + b"\0\0")


def clx(pieces: list[tuple[int, int, bool]], modifiers: int = 0) -> bytes:
    """A CLX: `modifiers` empty property modifiers, then the piece table of (characters, offset, 8-bit?)."""
    positions, descriptors = [0], []
    for n_chars, offset, eight_bit in pieces:
        positions.append(positions[-1] + n_chars)
        descriptors.append(struct.pack("<HIH", 0, (2 * offset | COMPRESSED) if eight_bit else offset, 0))
    table = struct.pack(f"<{len(positions)}i", *positions) + b"".join(descriptors)
    return b"\x01\0\0" * modifiers + b"\x02" + struct.pack("<I", len(table)) + table


def word_file(parts, *, flags: int = WHICH_TABLE, ccp_text: int | None = None, table: bytes | None = None,
              streams: dict | None = None, chain_edit=None, stream_size: int | None = None) -> bytes:
    """A .doc of `parts`: each a str (an 8-bit piece, Windows-1252), bytes (an 8-bit piece as stored) or
    (str, False) (a UTF-16 piece). `table` replaces
    the table stream's CLX, `streams` the streams (None: drop one), `chain_edit(fat, starts)` edits the
    FAT, `stream_size` replaces WordDocument's size in the directory."""
    body, pieces = b"", []
    for part in parts:
        text, eight_bit = (part, True) if isinstance(part, (str, bytes)) else part
        data = text if isinstance(text, bytes) else text.encode("cp1252" if eight_bit else "utf-16-le")
        pieces.append((len(data) if eight_bit else len(text.encode("utf-16-le")) // 2, TEXT_AT + len(body), eight_bit))
        body += data
    table = clx(pieces) if table is None else table
    n_chars = sum(n for n, _, _ in pieces) if ccp_text is None else ccp_text
    word = fib(n_chars, 0, len(table), flags).ljust(TEXT_AT, b"\0") + body
    named = {"WordDocument": word, "1Table" if flags & WHICH_TABLE else "0Table": table}
    named.update(streams or {})
    return compound_file({k: v for k, v in named.items() if v is not None}, chain_edit, stream_size)


def chain_loop(stream: str = "WordDocument", after: int = 4):
    """A chain_edit: the stream's `after`-th sector chained back to its first, so olefile alone would read
    the first sectors over and over, as if they were the stream."""
    def edit(fat, starts):
        fat[starts[stream] + after - 1] = starts[stream]
    return edit


def compound_file(streams: dict[str, bytes], chain_edit=None, stream_size: int | None = None) -> bytes:
    """An OLE compound file: the streams' sectors, one directory sector, then the FAT's sectors."""
    sectors, fat, starts = [], [], {}
    for name, data in streams.items():
        data = data.ljust(MIN_STREAM, b"\0")
        starts[name] = len(sectors)
        for i in range(0, len(data), SECTOR):
            sectors.append(data[i:i + SECTOR].ljust(SECTOR, b"\0"))
            fat.append(len(sectors))
        fat[-1] = END
    n_entries = 1 + len(streams)
    directory_start, n_directory = len(sectors), -(-n_entries // 4)
    fat += [*range(directory_start + 1, directory_start + n_directory), END]
    n_fat = -(-(len(fat) + 1) // 128)
    while n_fat < -(-(len(fat) + n_fat) // 128):
        n_fat += 1
    fat_start = len(fat)
    fat += [FAT_SECTOR] * n_fat
    if chain_edit:
        chain_edit(fat, starts)
    sizes = {name: max(len(data), MIN_STREAM) for name, data in streams.items()}
    if stream_size is not None:
        sizes["WordDocument"] = stream_size
    entries = [_entry("Root Entry", 5, END, 0, child=1 if streams else NO_STREAM)]
    entries += [_entry(name, 2, starts[name], sizes[name], right=i + 2 if i + 1 < len(streams) else NO_STREAM)
                for i, name in enumerate(streams)]
    directory = b"".join(entries).ljust(n_directory * 4 * 128, b"\0")
    fat_bytes = struct.pack(f"<{len(fat)}I", *fat).ljust(n_fat * SECTOR, b"\xff")
    if n_fat > 109:
        raise ValueError("too many FAT sectors for a header without DIFAT sectors")
    difat = list(range(fat_start, fat_start + n_fat)) + [FREE] * (109 - n_fat)
    header = (SIGNATURE + b"\0" * 16 + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\0" * 6
              + struct.pack("<IIIIIIIII", 0, n_fat, directory_start, 0, MIN_STREAM, END, 0, END, 0)
              + struct.pack("<109I", *difat))
    return header + b"".join(sectors) + directory + fat_bytes


def _entry(name: str, kind: int, start: int, size: int, child: int = NO_STREAM, right: int = NO_STREAM) -> bytes:
    """A 128-byte directory entry (black, no left sibling)."""
    encoded = name.encode("utf-16-le") + b"\0\0"
    return (encoded.ljust(64, b"\0") + struct.pack("<HBBIII", len(encoded), kind, 1, NO_STREAM, right, child)
            + b"\0" * 16 + b"\0" * 4 + b"\0" * 16 + struct.pack("<IQ", start, size))
