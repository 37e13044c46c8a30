"""Each file's cleaned source kept between runs, keyed by the file's bytes, so a run cleans only new or
changed files.

The key is what the result depends on: the file's bytes (their SHA-256: a file changed under the same name
and time is read again), its path, id and manifest entry, the URL its folder's lock gives, and the code of
ingestion with the libraries that read containers (`code_hash`), so changed code never serves an old result.
A rejected file is not kept: it is read again, and its rejection said again, each run.

What is kept is small (110 simulated editions, 88 MB: 1.7 MB) because most of a cleaned source can be had
again for less than it costs to store and read back: its text is decoded again from the bytes (7 ms for a
1 MB edition, against 28 ms to date, check and clean it; a container's text, slow to extract, is kept), and
a paragraph's text is kept only when it is not its source lines stripped and joined by a space (all but 21
of 36,000 in the real archive). The rest, one packed row a file. `encode` and `decode` are the ingest stage
file's layout (pipeline/publish/stagefiles.py), which keeps everything.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import fields
from pathlib import Path

from pipeline.cache import Cache, Damaged, code_hash, restored, values
from pipeline.ingest.containers import sniff
from pipeline.ingest.decode import decode_with_repairs
from pipeline.records import CleanDoc, Discard, Paragraph, SourceDoc

LIBRARIES = ("pypdfium2", "python-docx", "striprtf", "olefile", "beautifulsoup4", "lingua-language-detector")
NESTED = ("source", "paragraphs", "discards")  # CleanDoc's fields stored on their own
SOURCE_TEXT = [f.name for f in fields(SourceDoc)].index("text")
PARAGRAPH_FIELDS = tuple(f.name for f in fields(Paragraph))  # kept column by column, rebuilt in one map


class CleanedFiles:
    """Cleaned sources by file, in the cache file at `path` (None: a store that keeps nothing)."""

    def __init__(self, path: Path | None):
        self.store = Cache(path, "cleaned sources", code_hash("pipeline.ingest.discover", LIBRARIES), packed=True)
        self.fresh: list[tuple[str, dict]] = []
        self.keys: dict[str, str] = {}  # source id -> key: the name of its piece of the ingest stage file

    def key(self, path: Path, entry, source_id: str, url: str, data: bytes) -> str:
        return self.store.key("\0".join((os.fsdecode(path), repr(entry), source_id, url,
                                         hashlib.sha256(data).hexdigest())))

    def get(self, key: str, path: Path, data: bytes) -> CleanDoc | None:
        """The cleaned source kept for the file whose bytes are `data`, or None."""
        doc = self.store.get(key, lambda value: _unpacked(value, path, data))
        if doc is not None:
            self.keys[doc.source.source_id] = key
        return doc

    def put(self, key: str, doc: CleanDoc, data: bytes) -> None:
        """Kept when the run ends (`close`): one write for all the files."""
        self.keys[doc.source.source_id] = key
        if self.store.db is not None:
            self.fresh.append((key, _packed(doc, data)))

    def close(self) -> None:
        self.store.put_many(self.fresh)
        self.store.close()

    @property
    def warnings(self) -> list[str]:
        return self.store.warnings


def _packed(doc: CleanDoc, data: bytes) -> dict:
    source = values(doc.source)
    decoded = None
    if not sniff(data):
        source[SOURCE_TEXT] = None  # decoded again from the bytes
        decoded = _plainly(data, doc.source.encoding, doc.source.text)
    lines = _lines(doc.source.text)
    columns = {name: [getattr(p, name) for p in doc.paragraphs] for name in PARAGRAPH_FIELDS}
    columns["text"] = [None if p.text == _joined(lines, p.first_line, p.last_line) else p.text
                       for p in doc.paragraphs]
    return {"source": source, "paragraphs": columns, "discards": [values(x) for x in doc.discards],
            "rest": values(doc, skip=NESTED), "decoded": decoded}


def _plainly(data: bytes, encoding: str, text: str) -> str | None:
    """The codec that gives `text` from `data` by itself, when one does: the file's text is then decoded
    with it alone, not found again among the single-byte encodings by scoring each (reading back the 110
    simulated editions, a third of them Windows-1252: 0.3 s)."""
    for codec in (encoding, f"{encoding}-sig"):
        try:
            if data.decode(codec) == text:
                return codec
        except (LookupError, UnicodeDecodeError):
            continue
    return None


def _unpacked(value: dict, path: Path, data: bytes) -> CleanDoc:
    source = list(value["source"])
    codec = value.get("decoded")
    if source[SOURCE_TEXT] is None and isinstance(codec, str):
        try:
            source[SOURCE_TEXT] = data.decode(codec)  # the codec that gave the text when it was kept
        except LookupError:
            raise Damaged("not a codec") from None
    elif source[SOURCE_TEXT] is None:
        source[SOURCE_TEXT] = decode_with_repairs(data, path)[0]  # what read_source decodes a text file to
    lines, columns = _lines(source[SOURCE_TEXT]), value["paragraphs"]
    columns["text"] = [_joined(lines, first, last) if text is None else text
                       for text, first, last in zip(columns["text"], columns["first_line"], columns["last_line"])]
    paragraphs = tuple(map(Paragraph, *(columns[name] for name in PARAGRAPH_FIELDS)))  # its fields are all plain
    return restored(CleanDoc, value["rest"], source=restored(SourceDoc, source), paragraphs=paragraphs,
                    discards=tuple(restored(Discard, x) for x in value["discards"]))


def _lines(text: str) -> list[str]:
    """LINE_BREAK.split(text), five times as fast."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _joined(lines: list[str], first: int, last: int) -> str:
    """Lines `first` to `last` (1-based) stripped and joined by a space: what most paragraphs are."""
    if first == last and 0 < first <= len(lines):
        return lines[first - 1].strip()
    return " ".join(line.strip() for line in lines[max(first - 1, 0):max(last, 0)])


def encode(doc: CleanDoc) -> dict:
    return {"source": values(doc.source), "paragraphs": [values(p) for p in doc.paragraphs],
            "discards": [values(x) for x in doc.discards], "rest": values(doc, skip=NESTED)}


def decode(value: dict) -> CleanDoc:
    return restored(CleanDoc, value["rest"], source=restored(SourceDoc, value["source"]),
                    paragraphs=tuple(restored(Paragraph, p) for p in value["paragraphs"]),
                    discards=tuple(restored(Discard, x) for x in value["discards"]))
