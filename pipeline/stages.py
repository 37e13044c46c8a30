"""The whole run as a short list of stage calls; each stage is also a CLI command of its own."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline import datapackage, export, lineage
from pipeline.edition import Edition, editions, merge
from pipeline.overrides import read_overrides
from pipeline.ingest import Ingested, ingest
from pipeline.records import Rule
from pipeline.segment import ParagraphCache, segment

CACHE_NAME = ".cache/paragraphs.pickle"


@dataclass
class Result:
    ingested: Ingested
    rules: list[Rule] = field(default_factory=list)
    editions: list[Edition] = field(default_factory=list)
    history: lineage.History | None = None
    sources_frame: object = None
    discards_frame: object = None
    seconds: dict[str, float] = field(default_factory=dict)
    cache: tuple[int, int] = (0, 0)  # (paragraphs analysed now, paragraphs in the cache)


def _bar(quiet: bool, desc: str):
    return lambda items: tqdm(items, desc=desc, unit="file", disable=quiet, leave=False)


def run_ingest(raw: Path, corpora: list[Path], processed: Path, quiet: bool = False) -> Result:
    start = time.perf_counter()
    result = Result(ingest(raw, corpora, progress=_bar(quiet, "ingest")))
    result.seconds["ingest"] = time.perf_counter() - start
    _write_sources(result, processed)
    return result


def run_segment(raw: Path, corpora: list[Path], processed: Path, quiet: bool = False,
                use_cache: bool = True) -> Result:
    result = run_ingest(raw, corpora, processed, quiet)
    start = time.perf_counter()
    docs = result.ingested.docs
    cache = ParagraphCache(processed / CACHE_NAME if use_cache else None)
    cache.analyse(p.text for d in docs for p in d.paragraphs if p.role not in ("glossary-term", "heading"))
    rules = []
    for doc in _bar(quiet, "segment")(docs):
        rules += segment(doc, cache)
    if use_cache:
        cache.save()
    result.rules = merge(rules, docs)
    result.editions = editions(result.rules, docs)
    result.cache = (cache.misses, len(cache.data))
    result.seconds["segment"] = time.perf_counter() - start
    start = time.perf_counter()
    result.history = lineage.build(result.rules, result.editions, read_overrides(raw))
    result.seconds["align"] = time.perf_counter() - start
    start = time.perf_counter()
    records = Counter(s for r in rules for s in r.source.split(";"))
    _write_sources(result, processed, records)
    rules, history, eds = result.rules, result.history, result.editions
    tables = {
        "rules": export.rule_rows(rules, history),
        "changes": export.change_rows(history),
        "lineages": export.lineage_rows(rules, history, eds),
        "editions": export.edition_rows(eds, rules),
        "references": export.reference_rows(rules),
        "citations": export.citation_rows(rules, history, eds),
        "glossary": export.glossary_rows(rules, history),
        "terminology": export.terminology_rows(history),
        "renumberings": export.renumbering_rows(history),
    }
    for name, data in tables.items():
        export.write_table(data, processed, name)
    datapackage.write(processed, tables | {"sources": result.sources_frame, "discards": result.discards_frame})
    result.seconds["export"] = time.perf_counter() - start
    return result


def _write_sources(result: Result, processed: Path, records: Counter | None = None) -> None:
    ing = result.ingested
    result.sources_frame = export.source_rows(ing.docs, ing.rejections, records or {})
    result.discards_frame = export.discard_rows(ing.docs)
    export.write_table(result.sources_frame, processed, "sources")
    export.write_table(result.discards_frame, processed, "discards")


def sources_for_report(raw: Path, corpora: list[Path], processed: Path):
    """The cleaned sources whose bytes are the ones the datasets were made from (same sha256)."""
    made_from = set(pd.read_csv(processed / "sources.csv", dtype=str, keep_default_na=False)["sha256"]) \
        if (processed / "sources.csv").exists() else set()
    return [d for d in ingest(raw, corpora).docs if d.source.sha256 in made_from]
