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
that have it, as segmentation itself shares them (memory stays as it was).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.cache import Cache, Damaged, code_hash
from pipeline.records import Citation, CleanDoc, Rule
from pipeline.segment.rules import ParagraphCache, segment

Body = tuple  # (kind, parent, title, text, compare, examples, sentences, references, citations)


class SourceRecords:
    """Records per source, from the cache file at `path` when it holds them (None: a store that keeps nothing)."""

    def __init__(self, path: Path | None):
        code = code_hash("pipeline.segment.stored", ("spacy",))
        self.sources = Cache(path, "source records", code)
        self.bodies = Cache(path, "record bodies", code)  # keyed by their content: no code needed
        self.body: dict[str, Body] = {}  # body key -> the one body every record with it shares
        self.key_of: dict[Body, str] = {}
        self.read: set[str] = set()  # body keys found in the cache file (not written again)

    @property
    def warnings(self) -> list[str]:
        return self.sources.warnings + self.bodies.warnings

    def records(self, docs: list[CleanDoc], paragraphs: ParagraphCache, progress=None) -> list[Rule]:
        """Every source's records, in order: kept ones read back, the others segmented (through
        `paragraphs`, which analyses each of their paragraphs once) and kept."""
        keys = [self.sources.key(_content(d)) for d in docs]
        kept = self.sources.get_many(keys, _decode_rows)
        self._read_bodies({row[1] for rows in kept.values() for row in rows})
        todo = [d for d, k in zip(docs, keys) if k not in kept or any(row[1] not in self.body for row in kept[k])]
        paragraphs.analyse_docs(todo)
        fresh, out = [], []
        for doc, key in zip(docs, (progress or iter)(keys)):
            if key in kept and all(row[1] in self.body for row in kept[key]):
                out += [self._rule(doc, row) for row in kept[key]]
                continue
            rules = segment(doc, paragraphs)
            fresh.append((key, [self._row(r) for r in rules]))
            out += rules
        self.bodies.put_many([(k, _encode_body(self.body[k])) for k in {row[1] for _, rows in fresh for row in rows}
                              if k not in self.read])
        self.sources.put_many(fresh)
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

    def _rule(self, doc: CleanDoc, row: list) -> Rule:
        rule_id, body_key, flags, line_start, line_end, occurrence, pieces = row
        kind, parent, title, text, compare, examples, sentences, references, citations = self.body[body_key]
        return Rule(doc.edition or "", doc.source.source_id, rule_id, kind, parent, title, text, compare, examples,
                    sentences, references, citations, flags, line_start, line_end, occurrence, pieces=pieces)

    def _row(self, r: Rule) -> list:
        body = (r.kind, r.parent, r.title, r.text, r.compare, r.examples, r.sentences, r.references, r.citations)
        key = self.key_of.get(body)
        if key is None:
            key = hashlib.sha256(json.dumps(_encode_body(body), ensure_ascii=False).encode(
                "utf-8", "surrogatepass")).hexdigest()
            self.body.setdefault(key, body)
            self.key_of[body] = key
        return [r.rule_id, key, r.flags, r.line_start, r.line_end, r.occurrence, r.pieces]


def _content(doc: CleanDoc) -> str:
    """What segmentation reads of a source, as one text (hashed into its key)."""
    lines = "".join(f"{p.role}\0{p.first_line}\0{p.last_line}\0" for p in doc.paragraphs)
    text_hash = hashlib.sha256(doc.source.text.encode("utf-8", "surrogatepass")).hexdigest()
    return "\0".join((doc.source.source_id, doc.edition or "", str(doc.complete), text_hash, lines, doc.content))


def _encode_body(body: Body) -> list:
    *head, citations = body
    return [*head, [[c.source, c.value, c.text, c.part] for c in citations]]


def _decode_body(value) -> Body:
    kind, parent, title, text, compare, examples, sentences, references, citations = value
    if not all(isinstance(x, str) for x in (kind, parent, title, text, compare)):
        raise Damaged("not a record body")
    return (kind, parent, title, text, compare, tuple(examples), tuple(sentences), tuple(references),
            tuple(Citation(*c) for c in citations))


def _decode_rows(value) -> list[list]:
    rows = []
    for rule_id, body_key, flags, line_start, line_end, occurrence, pieces in value:
        if not isinstance(line_start, int) or not isinstance(line_end, int) or not isinstance(occurrence, int):
            raise Damaged("not a record")
        rows.append([rule_id, body_key, tuple(flags), line_start, line_end, occurrence,
                     tuple((s, e) for s, e in pieces)])
    return rows
