"""Read and segment files: the one chain read -> adapt -> analyse -> segment (-> merge into editions) for
commands and tools that start from files rather than from a run's stages (compare, bench, accuracy, tests).

    doc = read.clean(path)                       # a file read by its format's adapter
    rules = read.rules([doc])                    # its records, every paragraph analysed once
    rules, eds = read.editions(docs)             # records merged per edition, and the editions

A run does the same in two stages (ingest, then segment in pipeline/run.py), with progress and timings.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.ingest.discover import read_source
from pipeline.ingest.manifest import Entry
from pipeline.ingest.adapters import ADAPTERS
from pipeline.records import CleanDoc, Edition, Rule
from pipeline.segment import edition
from pipeline.segment.rules import ParagraphCache, segment


def clean(path: Path, entry: Entry | None = None, data: bytes | None = None) -> CleanDoc:
    """One file, read (its format sniffed unless `entry` names it) and cleaned by its format's adapter;
    `doc.source` is what was read."""
    source = read_source(path, entry, data)
    return ADAPTERS[source.format](source)


def rules(docs: list[CleanDoc], cache: ParagraphCache | None = None) -> list[Rule]:
    """The records of cleaned sources, in order; every paragraph is analysed once, through `cache` when
    one is given (to share analyses between calls or keep them in a cache file)."""
    cache = ParagraphCache() if cache is None else cache
    cache.analyse_docs(docs)
    return [r for d in docs for r in segment(d, cache)]


def editions(docs: list[CleanDoc], cache: ParagraphCache | None = None) -> tuple[list[Rule], list[Edition]]:
    """The records of these sources merged into one per rule and edition, and the editions they make."""
    merged = edition.merge(rules(docs, cache), docs)
    return merged, edition.editions(merged, docs)
