"""Each file's cleaned source kept between runs, keyed by the file's bytes, so a run decodes and cleans only
new or changed files.

Decoding, dating and cleaning a 1 MB edition takes about 28 ms; reading its bytes, hashing them and reading
its cleaned form back about 16 ms (110 simulated editions). The key is what the result depends on: the file's
bytes (their SHA-256: a file changed under the same name and time is read again), its path, id and manifest
entry, the URL its folder's lock gives, and the code of ingestion with the libraries that read containers
(`code_hash`), so changed code never serves an old result. A rejected file is not kept: it is read again, and
its rejection said again, each run. The same layout (`encode`, `decode`) is the ingest stage file's
(pipeline/publish/stagefiles.py).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pipeline.cache import Cache, code_hash, restored, values
from pipeline.records import CleanDoc, Discard, Paragraph, SourceDoc

LIBRARIES = ("pypdfium2", "python-docx", "striprtf", "olefile", "beautifulsoup4", "lingua-language-detector")
NESTED = ("source", "paragraphs", "discards")  # CleanDoc's fields stored on their own


class CleanedFiles:
    """Cleaned sources by file, in the cache file at `path` (None: a store that keeps nothing)."""

    def __init__(self, path: Path | None):
        self.store = Cache(path, "cleaned sources", code_hash("pipeline.ingest.discover", LIBRARIES))
        self.fresh: list[tuple[str, dict]] = []

    def key(self, path: Path, entry, source_id: str, url: str, data: bytes) -> str:
        return self.store.key("\0".join((os.fsdecode(path), repr(entry), source_id, url,
                                         hashlib.sha256(data).hexdigest())))

    def get(self, key: str) -> CleanDoc | None:
        return self.store.get(key, decode)

    def put(self, key: str, doc: CleanDoc) -> None:
        """Kept when the run ends (`close`): one write for all the files."""
        self.fresh.append((key, encode(doc)))

    def close(self) -> None:
        self.store.put_many(self.fresh)
        self.store.close()

    @property
    def warnings(self) -> list[str]:
        return self.store.warnings


def encode(doc: CleanDoc) -> dict:
    return {"source": values(doc.source), "paragraphs": [values(p) for p in doc.paragraphs],
            "discards": [values(x) for x in doc.discards], "rest": values(doc, skip=NESTED)}


def decode(value: dict) -> CleanDoc:
    return restored(CleanDoc, value["rest"], source=restored(SourceDoc, value["source"]),
                    paragraphs=tuple(restored(Paragraph, p) for p in value["paragraphs"]),
                    discards=tuple(restored(Discard, x) for x in value["discards"]))
