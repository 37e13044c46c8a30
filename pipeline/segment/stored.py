"""Each source's records kept between runs, so that a run segments only the sources that are new or changed.

Consecutive editions differ in a few percent of their rules, yet a run used to rebuild every source's
records from its paragraphs' cached analyses (110 editions: looking up 300,000 analyses and assembling
313,000 records, 6 s). Here a source's records are kept in the SQLite cache (pipeline/cache.py) under a
key made of what segmentation reads of it: its cleaned paragraphs (text, lines, role), its id, edition,
completeness and source text, and the code of segmentation (`code_hash`), so a changed file (noticed by
its content, never by its name) or changed code is segmented again and never served old records.

A record is kept as its place in the source (number, flags, lines, pieces) and a reference to its body
(kind, parent, title, text, comparison form, examples, sentences, references, citations): most bodies
recur unchanged in every edition, so each is stored once, read once, and shared by all the records
that have it, as segmentation itself shares them (memory stays as it was). A body's key is 96 bits of a hash of
its content (8,700 distinct bodies in 110 simulated editions: a collision is out of reach), a source's records
one packed (zlib'd) row: 110 simulated editions keep 313,000 records in 7.3 MB (two thirds of it the bodies'
keys) and their 8,700 bodies in 1.9 MB.
"""
from __future__ import annotations

import hashlib
import json
from array import array
from itertools import accumulate
from operator import add, attrgetter
from pathlib import Path

from pipeline.cache import Cache, Damaged, code_hash
from pipeline.records import Citation, CleanDoc, Rule
from pipeline.segment.rules import ParagraphCache, segment

Body = tuple  # (kind, parent, title, text, compare, examples, sentences, references, citations)
BODY = attrgetter("kind", "parent", "title", "text", "compare", "examples", "sentences", "references", "citations")


class SourceRecords:
    """Records per source, from the cache file at `path` when it holds them (None: a store that keeps nothing)."""

    def __init__(self, path: Path | None):
        code = code_hash("pipeline.segment.stored", ("spacy",))
        self.sources = Cache(path, "source records", code, packed=True)
        self.bodies = Cache(path, "record bodies", code, packed=True)
        self.body: dict[str, Body] = {}  # body key -> the one body every record with it shares
        self.key_of: dict[Body, str] = {}
        self.read: set[str] = set()  # body keys found in the cache file (not written again)
        self.segmented = self.kept = 0  # sources segmented now, sources whose records were read back
        self.keys: dict[str, str] = {}  # source id -> the key of its content (of its records too)

    @property
    def warnings(self) -> list[str]:
        return self.sources.warnings + self.bodies.warnings

    def records(self, docs: list[CleanDoc], paragraphs: ParagraphCache, progress=None,
                cleaned: dict[str, str] | None = None) -> list[Rule]:
        """Every source's records, in order: kept ones read back, the others segmented (through
        `paragraphs`, which analyses each of their paragraphs once) and kept. `cleaned`: each source's key
        in the ingest stage (pipeline/ingest/stored.py: its file's bytes, path, manifest entry and the code),
        which settles its cleaned source and so stands for its content: hashing what segmentation reads of
        every source again cost 0.4 s of adding the 110th simulated edition."""
        keys = [self.sources.key(_content(d) if (cleaned or {}).get(d.source.source_id) is None
                                 else f"cleaned\0{cleaned[d.source.source_id]}") for d in docs]
        self.keys = {d.source.source_id: k for d, k in zip(docs, keys)}
        kept = self.sources.get_many(keys, _decode_rows)
        self._read_bodies({row[1] for rows in kept.values() for row in rows})
        reusable = {k for k, rows in kept.items() if all(row[1] in self.body for row in rows)}
        todo = [d for d, k in zip(docs, keys) if k not in reusable]
        paragraphs.analyse_docs(todo)
        fresh, out = [], []
        for doc, key in zip(docs, (progress or iter)(keys)):
            if key in reusable:
                self.kept += 1
                edition, source, body = doc.edition or "", doc.source.source_id, self.body
                out += [Rule(edition, source, rule_id, *body[body_key], flags, line_start, line_end, occurrence,
                             pieces=pieces)
                        for rule_id, body_key, flags, line_start, line_end, occurrence, pieces in kept[key]]
                continue
            self.segmented += 1
            rules = segment(doc, paragraphs)
            fresh.append((key, [self._row(r) for r in rules]))
            out += rules
        self.bodies.put_many([(k, _encode_body(self.body[k])) for k in {row[1] for _, rows in fresh for row in rows}
                              if k not in self.read])
        self.sources.put_many([(key, _encode_rows(rows)) for key, rows in fresh])
        return out

    def close(self) -> None:
        self.sources.close()
        self.bodies.close()

    def _read_bodies(self, keys: set[str]) -> None:
        found = self.bodies.get_many(sorted(keys - set(self.body)), _decode_body)
        for key, body in found.items():
            self.body[key] = body
            self.key_of[body] = key
        self.read |= set(found)

    def _row(self, r: Rule) -> list:
        body = BODY(r)
        key = self.key_of.get(body)
        if key is None:
            key = hashlib.blake2b(json.dumps(_encode_body(body), ensure_ascii=False).encode(
                "utf-8", "surrogatepass"), digest_size=12).hexdigest()
            self.body.setdefault(key, body)
            self.key_of[body] = key
        return [r.rule_id, key, r.flags, r.line_start, r.line_end, r.occurrence, r.pieces]


def _content(doc: CleanDoc) -> str:
    """What segmentation reads of a source, as one digest (hashed into its key): its paragraphs (text, lines,
    role), id, edition, completeness and source text, fed to the hash in parts rather than joined first."""
    ps = doc.paragraphs
    digest = hashlib.sha256("\0".join((doc.source.source_id, doc.edition or "", str(doc.complete))).encode())
    for part in (doc.source.text, "\0".join(map(attrgetter("role"), ps)), doc.content):
        digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
    digest.update(array("q", [*map(attrgetter("first_line"), ps), *map(attrgetter("last_line"), ps)]).tobytes())
    return digest.hexdigest()


def _encode_body(body: Body) -> list:
    *head, citations = body
    return [*head, [[c.source, c.value, c.text, c.part] for c in citations]]


def _decode_body(value) -> Body:
    kind, parent, title, text, compare, examples, sentences, references, citations = value
    if not all(isinstance(x, str) for x in (kind, parent, title, text, compare)):
        raise Damaged("not a record body")
    return (kind, parent, title, text, compare, tuple(examples), tuple(sentences), tuple(references),
            tuple(Citation(*c) for c in citations))


ROW = ("rule_id", "body", "flags", "line_start", "line_end", "occurrence", "pieces")


def _encode_rows(rows: list[list]) -> dict[str, list]:
    """A source's records column by column, numbers as differences (a line from the one before, a rule's last line
    from its first, a piece's start from the end of the piece before and its end from its start): mostly small
    and repeated, they pack to a fifth, and what is left of a record is mostly its body's key (21 bytes a record,
    the key 16 of them)."""
    columns = dict(zip(ROW, map(list, zip(*rows)))) if rows else {name: [] for name in ROW}
    starts = columns["line_start"]
    columns["line_start"] = [b - a for a, b in zip([0, *starts], starts)]
    columns["line_end"] = [e - s for s, e in zip(starts, columns["line_end"])]
    flat = [n for pieces in columns["pieces"] for piece in pieces for n in piece]
    columns["pieces"] = [len(p) for p in columns["pieces"]]  # how many pieces each record has
    columns["offsets"] = [b - a for a, b in zip([0, *flat], flat)]
    return columns


def _decode_rows(value: dict[str, list]) -> list[tuple]:
    """The inverse of `_encode_rows`, in whole-column steps (slices, not an iterator per record: reading back
    the 313,000 records of 110 simulated editions took 1.5 s under the profiler, half of it here)."""
    rule_ids, bodies, flags, starts, ends, occurrences, counts = (value[name] for name in ROW)
    offsets = value["offsets"]
    if len({len(column) for column in (rule_ids, bodies, flags, starts, ends, occurrences, counts)}) != 1 or not (
            {int} >= set(map(type, starts)) | set(map(type, ends)) | set(map(type, occurrences))
            | set(map(type, counts)) | set(map(type, offsets))) or 2 * sum(counts) != len(offsets):
        raise Damaged("not a source's records")
    starts = list(accumulate(starts))
    flat = list(accumulate(offsets))
    pairs = list(zip(flat[0::2], flat[1::2]))
    bounds = list(accumulate(counts, initial=0))
    pieces = [tuple(pairs[a:b]) for a, b in zip(bounds, bounds[1:])]
    return list(zip(rule_ids, bodies, map(tuple, flags), starts, map(add, starts, ends), occurrences, pieces))
