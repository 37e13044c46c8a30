"""The whole run as a short list of stage calls; each stage is also a CLI command of its own."""
from __future__ import annotations

import hashlib
import json
from importlib import metadata
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline import datapackage, export, lineage
from pipeline.edition import Edition, editions, merge
from pipeline.identify import resolve_auto
from pipeline.overrides import read_overrides
from pipeline.ingest import Ingested, discover, ingest
from pipeline.schema import TABLES
from pipeline.store import write_atomic
from pipeline.records import Rule
from pipeline.segment import ParagraphCache, segment

CACHE_NAME = ".cache/paragraphs.pickle"
ALIGN_CACHE = ".cache/align"


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
    records: int = 0


def _bar(quiet: bool, desc: str, unit: str = "file"):
    return lambda items: tqdm(items, desc=desc, unit=unit, disable=quiet, leave=False)


def run_ingest(raw: Path, corpora: list[Path], processed: Path, quiet: bool = False, write: bool = True) -> Result:
    start = time.perf_counter()
    result = Result(ingest(raw, corpora, progress=_bar(quiet, "ingest")))
    result.seconds["ingest"] = time.perf_counter() - start
    if write:  # run_segment writes them once, with the record counts
        _write_sources(result, processed)
    return result


def run_segment(raw: Path, corpora: list[Path], processed: Path, quiet: bool = False,
                use_cache: bool = True) -> Result:
    result = run_ingest(raw, corpora, processed, quiet, write=False)
    start = time.perf_counter()
    docs = result.ingested.docs
    cache = ParagraphCache(processed / CACHE_NAME if use_cache else None)
    cache.analyse_docs(docs)
    rules = []
    for doc in _bar(quiet, "segment")(docs):
        rules += segment(doc, cache)
    rules, docs = resolve_auto(rules, docs)  # manifest entries with edition = "auto"
    result.ingested.docs = docs
    if use_cache:
        cache.save()
    result.rules = merge(rules, docs)
    result.records = len(result.rules)
    result.editions = editions(result.rules, docs)
    result.cache = (cache.misses, len(cache.data))
    result.seconds["segment"] = time.perf_counter() - start
    start = time.perf_counter()
    result.history = lineage.build(result.rules, result.editions, read_overrides(raw),
                                   processed / ALIGN_CACHE if use_cache else None,
                                   progress=_bar(quiet, "align", "edition"))
    result.seconds["align"] = time.perf_counter() - start
    start = time.perf_counter()
    records = Counter(s for r in rules for s in r.source.split(";"))
    _write_sources(result, processed, records)
    rules, history, eds = result.rules, result.history, result.editions
    tables = {  # built, written and freed one at a time: only a summary of each is kept
        "rules": lambda: export.rule_rows(rules, history),
        "changes": lambda: export.change_rows(history),
        "lineages": lambda: export.lineage_rows(rules, history, eds),
        "editions": lambda: export.edition_rows(eds, rules),
        "references": lambda: export.reference_rows(rules),
        "citations": lambda: export.citation_rows(rules, history, eds),
        "glossary": lambda: export.glossary_rows(rules, history),
        "terminology": lambda: export.terminology_rows(history),
        "renumberings": lambda: export.renumbering_rows(history),
    }
    summaries = {"sources": datapackage.summarize(result.sources_frame),
                 "discards": datapackage.summarize(result.discards_frame)}
    for name, build in tables.items():
        data = build()
        export.write_table(data, processed, name)
        summaries[name] = datapackage.summarize(data)
        del data
    datapackage.write(processed, summaries)
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


RUN_STAMP = ".cache/run.json"


def fingerprint(raw: Path, corpora: list[Path], reports: Path | None) -> str:
    """What the outputs depend on: every input file's bytes, the manifest and overrides, the
    pipeline's own code and templates, the versions of the libraries that shape the results,
    and where the reports go."""
    digest = hashlib.sha256()
    for package in ("spacy", "rapidfuzz", "scipy", "pandas", "jinja2", "lingua-language-detector"):
        digest.update(f"{package}={metadata.version(package)}".encode())
    files, _ = discover(raw, corpora)
    extra = [raw / name for name in ("manifest.toml", "overrides.toml") if (raw / name).exists()]
    code = sorted(p for p in Path(__file__).parent.rglob("*") if p.suffix in (".py", ".html", ".css", ".js"))
    for path in [p for p, _ in files] + extra + code:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    digest.update(str(reports.resolve() if reports else "").encode())
    return digest.hexdigest()


def up_to_date(processed: Path, reports: Path | None, stamp: str) -> bool:
    path = processed / RUN_STAMP
    if not path.exists():
        return False
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    outputs = [processed / f"{t.name}.csv" for t in TABLES] + [processed / "datapackage.json"]
    if reports is not None:
        outputs.append(reports / "index.html")
    return recorded.get("fingerprint") == stamp and all(p.exists() for p in outputs)


def run_all(raw: Path, corpora: list[Path], processed: Path, reports: Path | None, quiet: bool = False,
            use_cache: bool = True) -> Result | None:
    """The whole job. With the cache on, a run whose inputs, code and outputs are unchanged does
    nothing and returns None."""
    stamp = fingerprint(raw, corpora, reports) if use_cache else ""
    if use_cache and up_to_date(processed, reports, stamp):
        return None
    (processed / RUN_STAMP).unlink(missing_ok=True)  # an interrupted run must not look finished
    result = run_segment(raw, corpora, processed, quiet, use_cache)
    # The datasets are written; the reports read them back. Free what they do not need.
    result.records = len(result.rules)
    result.rules, result.history = [], None
    result.ingested.docs = [replace(d, paragraphs=()) for d in result.ingested.docs]
    if reports is not None:
        start = time.perf_counter()
        from pipeline import report
        report.render(processed, reports, result.ingested.docs, progress=_bar(quiet, "report", "page"))
        result.seconds["report"] = time.perf_counter() - start
    if use_cache:
        write_atomic(processed / RUN_STAMP, json.dumps({"fingerprint": stamp}) + "\n")
    return result
