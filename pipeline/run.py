"""The whole run as a short list of stage calls: ingest, segment, align, export, report. Each is
also a CLI command of its own that reads the previous stage's stored output (pipeline/publish/stagefiles.py)
and publishes only its own (pipeline/publish/transaction.py: a stage's commit keeps the earlier stages' files
and drops the later ones', so processed/ never mixes two runs)."""
from __future__ import annotations

import gc
import hashlib
import json
import os
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from pipeline.publish import datapackage
from pipeline.publish import database, export, grow
from pipeline.publish import jsonout
from pipeline.publish import transaction as publish
from pipeline.publish import stagefiles as stored
from pipeline.cache import CACHE_FILE, Cache, code_hash
from pipeline.publish.database import Database
from pipeline.errors import PipelineError
from pipeline.ingest.lockfile import LOCK_NAME
from pipeline.segment.dating import resolve_auto
from pipeline.report.pagekeys import TEMPLATES
from pipeline.align.overrides import read_overrides
from pipeline.ingest.discover import discover, ingest
from pipeline.ingest import stored as cleaning
from pipeline.ingest.stored import CleanedFiles
from pipeline.atomic import write_atomic
from pipeline.records import Aligned, Edition, Ingested, Rule, edition_status
from pipeline import registry


@dataclass
class Result:
    ingested: Ingested
    rules: list[Rule] = field(default_factory=list)
    editions: list[Edition] = field(default_factory=list)
    history: object = None  # pipeline.records.History, when this process aligned
    sources_frame: object = None
    discards_frame: object = None
    seconds: dict[str, float] = field(default_factory=dict)
    cache: tuple[int, int, int] = (0, 0, 0)  # (sources segmented now, read back, paragraphs analysed now)
    records: int = 0
    warnings: list[str] = field(default_factory=list)  # about the run itself (a damaged cache)
    grown: dict = field(default_factory=dict)  # the export's marks, for the sidecar (pipeline/publish/grow.py)
    # the keys that name the stage files' pieces (pipeline/publish/stagefiles.py): each source's, each edition's
    source_keys: dict[str, str] = field(default_factory=dict)
    cleaned_keys: dict[str, str] = field(default_factory=dict)  # each source's in the cache of cleaned sources
    edition_keys: dict[str, str] = field(default_factory=dict)


def progress_bar(quiet: bool, desc: str, unit: str = "file"):
    """A stage's progress over its items (on stderr, gone when done; none with `quiet`): the CLI's too."""
    return lambda items: tqdm(items, desc=desc, unit=unit, disable=quiet, leave=False)


@contextmanager
def _collector_paused():
    """The cyclic garbage collector off while a stage runs. The stages make millions of small objects
    that live until the run ends (records, changes, rows), and the collector's full passes over them,
    which free nothing, took half of the segment and align stages (simulated archive, everything
    cached: segment 10.4 -> 5.3 s, align 6.3 -> 2.9 s; peak memory the same). Objects are still freed
    when their last reference goes; the rare cycle waits for the collector's next pass. The whole run
    and the reports alone are paused too: with the collector back on after the datasets, adding the
    110th simulated edition spent 5.0 s in 6,070 passes (the reports' loaded tables, the publication)."""
    if not gc.isenabled():  # paused already (a stage inside a run): the outermost one resumes it
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def run_ingest(raw: Path, corpora: list[Path], processed: Path, quiet: bool = False, write: bool = True,
               use_cache: bool = True) -> Result:
    """Ingest alone: the cleaned sources for `segment`, and sources and discards tables (records
    not yet counted), published as the run's first stage. Only new or changed files are cleaned (the
    others' cleaned sources are kept in processed/'s cache, as `run` keeps them)."""
    if not write:
        return _ingest(raw, corpora, quiet)
    with publish.locked(processed):
        rid = run_id(raw, corpora)
        result = _ingest(raw, corpora, quiet, processed / CACHE_FILE if use_cache else None)
        require_sources(result, [raw, *corpora])
        out = publish.begin(processed)
        stored.save_ingested(out, result.ingested, result.source_keys, result.cleaned_keys)
        _write_sources(result, out)
        publish.commit(processed, rid, "ingest")
    return result


def run_segment(processed: Path, quiet: bool = False, use_cache: bool = True) -> Result:
    """Segment alone: the stored ingest output -> rule records and editions."""
    with publish.locked(processed):
        rid = publish.run_id(processed)
        result = Result(stored.load_ingested(processed), cleaned_keys=stored.cleaned_keys(processed))
        _segment(result, processed / CACHE_FILE if use_cache else None, quiet)
        stored.save_segmented(publish.begin(processed), result.rules, result.editions, result.edition_keys)
        publish.commit(processed, rid, "segment")
    return result


def run_align(raw: Path, processed: Path, quiet: bool = False, use_cache: bool = True) -> Result:
    """Align alone: the stored rule records -> lineages and changes (raw/overrides.toml applies)."""
    with publish.locked(processed):
        rid = publish.run_id(processed)
        result = Result(Ingested())
        result.rules, result.editions = stored.load_segmented(processed)
        overrides = read_overrides(raw)
        steps = stored.step_keys(pieces_code(), overrides, stored.segment_keys(processed), result.editions)
        aligned = _align(result, overrides, steps, processed / CACHE_FILE if use_cache else None, quiet)
        stored.save_aligned(publish.begin(processed), aligned, steps)
        publish.commit(processed, rid, "align")
    return result


def run_export(processed: Path, quiet: bool = False) -> Result:
    """Export alone: every table (CSV, Parquet), the SQLite database, the data package."""
    with publish.locked(processed):
        rid = publish.run_id(processed)
        result = Result(stored.load_ingested(processed))
        result.rules, result.editions = stored.load_segmented(processed)
        result.records = len(result.rules)
        _export(result, stored.load_aligned(processed), publish.begin(processed), steps=stored.walk_keys(processed))
        publish.commit(processed, rid, "export")
        _remember(processed, result)
    return result


def run_datasets(raw: Path, corpora: list[Path], processed: Path, quiet: bool = False,
                 use_cache: bool = True) -> Result:
    """Every stage but the reports, published as one run (the records stay in the result)."""
    with publish.locked(processed):
        rid = run_id(raw, corpora)
        result = _build(raw, corpora, publish.begin(processed), processed / CACHE_FILE if use_cache else None, quiet)
        publish.commit(processed, rid)
        _remember(processed, result, use_cache)
    return result


@_collector_paused()
def run_report(processed: Path, reports: Path, quiet: bool = False) -> list[Path]:
    """The reports alone, from the published tables (through the typed loader) and the stored
    cleaned sources (for the line-by-line source pages), tagged with their run id."""
    from pipeline.report import build as report
    _separate(processed, reports)
    rid = publish.verify(processed, [f"{name}.parquet" for name in report.NEEDED])  # no tables: no --reports made
    with publish.locked(reports):
        docs = stored.load_ingested(processed).docs if (processed / stored.FOLDER / "ingest.json.gz").exists() else []
        docs = [replace(d, paragraphs=()) for d in docs]  # the pages show each source's lines, not its paragraphs
        written = report.render(processed, publish.begin(reports), docs, progress=progress_bar(quiet, "report", "page"),
                                run_id=rid)
        publish.commit(reports, rid)
    return written


@_collector_paused()
def _ingest(raw: Path, corpora: list[Path], quiet: bool, cache_file: Path | None = None) -> Result:
    start = time.perf_counter()
    kept = CleanedFiles(cache_file)  # only new or changed files decoded and cleaned
    result = Result(ingest(raw, corpora, progress=progress_bar(quiet, "ingest"), kept=kept))
    kept.close()
    result.warnings += kept.warnings
    result.source_keys = {source: stored.key(pieces_code(), "ingest", k) for source, k in kept.keys.items()}
    result.cleaned_keys = dict(kept.keys)
    result.seconds["ingest"] = time.perf_counter() - start
    return result


SHOWN_REJECTIONS = 3


def require_sources(result: Result, folders: list[Path]) -> None:
    """A run that read no source at all is an error, raised before anything is published (the
    outputs of the last good run stay): it names the folders and says why the files were refused."""
    if result.ingested.docs:
        return
    rejected = result.ingested.rejections
    if not rejected:
        why = "no files to read"
    else:
        shown = "; ".join(f"{r.path}: {r.reason}" for r in rejected[:SHOWN_REJECTIONS])
        more = f"; and {len(rejected) - SHOWN_REJECTIONS} more" if len(rejected) > SHOWN_REJECTIONS else ""
        why = f"{len(rejected)} file{'s' * (len(rejected) != 1)} rejected: {shown}{more}"
    raise PipelineError(f"no editions found in {', '.join(map(str, folders))} ({why}); nothing was published")


@_collector_paused()
def _segment(result: Result, cache_file: Path | None, quiet: bool) -> None:
    from pipeline.segment.edition import editions, merge
    from pipeline.segment.rules import ParagraphCache
    from pipeline.segment.stored import SourceRecords
    start = time.perf_counter()
    docs = result.ingested.docs
    cache, kept = ParagraphCache(cache_file), SourceRecords(cache_file)
    # only new or changed sources segmented (known by their cleaned sources' keys)
    rules = kept.records(docs, cache, progress_bar(quiet, "segment"), result.cleaned_keys)
    rules, docs = resolve_auto(rules, docs)  # manifest entries with edition = "auto"
    result.ingested = replace(result.ingested, docs=docs)
    cache.save()
    kept.close()
    result.warnings += cache.warnings + kept.warnings
    result.rules = merge(rules, docs)
    result.records = len(result.rules)
    result.editions = editions(result.rules, docs)
    result.edition_keys = stored.edition_keys(pieces_code(), docs, kept.keys)
    result.cache = (kept.segmented, kept.kept, cache.misses)
    result.seconds["segment"] = time.perf_counter() - start


@_collector_paused()
def _align(result: Result, overrides, steps: dict[str, str], cache_file: Path | None, quiet: bool) -> Aligned:
    """The walk of lineages, resumed from the one the cache keeps (`steps`: each edition's key in the walk)."""
    from pipeline.align import lineage, resume
    start = time.perf_counter()
    pairs = Cache(cache_file, "pairs", code_hash("pipeline.align.lineage", ("rapidfuzz", "scipy")))
    history = resume.build(result.rules, result.editions, overrides, pairs if cache_file else None, steps,
                           cache_file, progress=progress_bar(quiet, "align", "edition"), warnings=result.warnings)
    cited = lineage.cited_lineages(result.rules, history, pairs if cache_file else None)
    pairs.close()
    result.warnings += pairs.warnings
    result.history = history
    aligned = Aligned(changes=history.changes, lineage=history.lineage, last_changed=history.last_changed,
                      renumberings=lineage.cascades(history.changes), cited=cited, observations=history.observations)
    result.seconds["align"] = time.perf_counter() - start
    return aligned


@_collector_paused()
def _build(raw: Path, corpora: list[Path], out: Path, cache_file: Path | None, quiet: bool) -> Result:
    """Every stage into `out` (a staging folder), each stage's stored output included, so the
    stages after it can also be run alone later; caches in `cache_file`."""
    overrides = read_overrides(raw)  # a mistake in it is said before the long stages, not after
    result = _ingest(raw, corpora, quiet, cache_file)
    require_sources(result, [raw, *corpora])
    stored.save_ingested(out, result.ingested, result.source_keys, result.cleaned_keys)
    _segment(result, cache_file, quiet)
    keys = stored.save_segmented(out, result.rules, result.editions, result.edition_keys)
    # The sources' table counts each source's paragraphs; nothing after it reads them (they were 140 MB of
    # 110 editions, held through the alignment and the export).
    _write_sources(result, out, _per_source(result.rules))
    result.ingested = replace(result.ingested, docs=[replace(d, paragraphs=()) for d in result.ingested.docs])
    steps = stored.step_keys(pieces_code(), overrides, keys, result.editions)
    aligned = _align(result, overrides, steps, cache_file, quiet)
    stored.save_aligned(out, aligned, steps)
    _export(result, aligned, out, grows=cache_file is not None, steps=steps)
    return result


@_collector_paused()
def _export(result: Result, history, out: Path, grows: bool = True, steps: dict[str, str] | None = None) -> None:
    """Every table into `out` (a staging folder). With `grows`, the big tables keep the published rows of
    the editions that did not change and only the later ones are written (pipeline/publish/grow.py);
    `steps`: each edition's key in the walk of lineages (pipeline/publish/stagefiles.py `step_keys`)."""
    start = time.perf_counter()
    rules, eds = result.rules, result.editions
    if result.sources_frame is None:  # the export stage run alone (a whole run wrote them after segmenting)
        _write_sources(result, out, _per_source(rules))
    published = out.parent
    code = code_hash("pipeline.run", LIBRARIES, (TEMPLATES, registry.TABLE.parent))  # the sets' names too
    current = grow.digests(eds, result.sources_frame, code, steps or {})
    tail = grow.plan(published, current) if grows and set(current) <= set(steps or ()) else None
    grown = [r for r in rules if r.edition >= tail.start] if tail else rules
    changes = export.stored_changes(history, grown, tail.start if tail else "")  # the tail's alone
    tables = {  # built, written and freed one at a time: only a summary of each is kept
        "rules": lambda: export.rule_chunks(grown, history),
        "changes": lambda: export.change_frame(changes),
        "lineages": lambda: export.lineage_rows(rules, history, eds),
        "editions": lambda: export.edition_rows(eds, rules),
        "references": lambda: export.reference_rows(grown),
        "citations": lambda: export.citation_rows(rules, history, eds),
        "glossary": lambda: export.glossary_rows(grown, history),
        "terminology": lambda: export.terminology_rows(history),
        "renumberings": lambda: export.renumbering_rows(history),
        "observations": lambda: export.observation_rows(history),
    }
    summaries = {"sources": datapackage.summarize(result.sources_frame),
                 "discards": datapackage.summarize(result.discards_frame)}
    db = Database(out, base=published / database.NAME if tail else None)
    statuses = {e.edition: edition_status(e) for e in eds}
    marks = {"editions": current, "statuses": statuses, "tables": {}, "sizes": {}, "tail": tail.start if tail else ""}
    try:
        if tail:
            db.keep_before(tail.start)
        for name, frame in (("sources", result.sources_frame), ("discards", result.discards_frame)):
            db.add(name, export.flatten(frame, name))
        texts = export.Texts(db.definitions() if tail else None)  # each wording once (in the CSV and the database)
        tables["texts"] = (lambda: export.frame("texts", db.texts(texts))) if tail else texts.frame
        for name, build in tables.items():
            data = build()
            if name in grow.GROWN:
                summaries[name] = grow.write(data, out, name, sorted(current), db, texts, tail, marks)
            else:  # a grown database has its texts already
                export.write_table(data, out, name, None if tail and name == "texts" else db, texts=texts)
                summaries[name] = datapackage.summarize(data)
            del data
        db.close()
    except BaseException:
        db.abandon()
        raise
    marks["changes_json"] = jsonout.write(out, rules, history, eds, published,
                                          tail.unchanged(statuses) if tail else set(),
                                          (tail.start, tail.old.get("changes_json", [])) if tail else None)
    datapackage.write(out, summaries)
    result.grown = marks
    result.seconds["export"] = time.perf_counter() - start


def _remember(processed: Path, result: Result | None, grows: bool = True) -> None:
    """After a publication: the sidecar of the grown tables, for the next run (none without a cache)."""
    if grows and result is not None and result.grown:
        grow.remember(processed, result.grown)
    else:
        grow.forget(processed)


def _per_source(rules: list) -> Counter:
    """How many records each source gave (a merged record names its sources joined by ';')."""
    return Counter(s for r in rules for s in r.source.split(";"))


def _write_sources(result: Result, processed: Path, records: Counter | None = None) -> None:
    ing = result.ingested
    result.sources_frame = export.source_rows(ing.docs, ing.rejections, records or {})
    result.discards_frame = export.discard_rows(ing.docs)
    export.write_table(result.sources_frame, processed, "sources")
    export.write_table(result.discards_frame, processed, "discards")


RUN_STAMP = publish.RUN_STAMP
# The libraries that shape the results: those of alignment and the reports, and those that read and clean sources.
LIBRARIES = tuple(dict.fromkeys(("spacy", "rapidfuzz", "scipy", "pandas", "jinja2", *cleaning.LIBRARIES)))


def pieces_code() -> str:
    """The code that makes the stage files' pieces: in their keys, so changed code never keeps an old one."""
    return code_hash("pipeline.run", LIBRARIES)


def inputs_fingerprint(raw: Path, corpora: list[Path]) -> str:
    """What the datasets depend on: every input file's bytes, the manifest and overrides, the
    code the run imports with the report's templates, and the versions of the libraries that shape the results."""
    digest = hashlib.sha256(code_hash("pipeline.run", LIBRARIES, (TEMPLATES,)).encode())
    files, _ = discover(raw, corpora)
    extra = [raw / name for name in ("manifest.toml", "overrides.toml") if (raw / name).exists()]
    extra += [c / LOCK_NAME for c in corpora if (c / LOCK_NAME).exists()]  # the URLs in sources.csv
    for path in [p for p, _ in files] + extra:
        try:
            content = hashlib.sha256(path.read_bytes()).digest()
        except OSError as e:  # unreadable: ingest rejects it; the error still changes the fingerprint
            content = str(e.strerror).encode()
        digest.update(os.fsencode(path.name) + b"\0" + content)
    return digest.hexdigest()


def run_id(raw: Path, corpora: list[Path]) -> str:
    """Names the run in every table listing and page: the same inputs and code give the same id
    (so outputs stay byte-identical between runs); any difference gives another."""
    return inputs_fingerprint(raw, corpora)[:16]


def up_to_date(processed: Path, reports: Path | None, stamp: str) -> bool:
    """The last run had these inputs and code, finished, and its outputs are all still there,
    unchanged in size and modification time."""
    try:
        recorded = json.loads((processed / RUN_STAMP).read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    if not isinstance(recorded, dict) or recorded.get("fingerprint") != stamp:
        return False
    return publish.intact(processed, recorded.get("processed") or {}) and \
        (reports is None or publish.intact(reports, recorded.get("reports") or {}))


def _separate(processed: Path, reports: Path) -> None:
    """Pages published into the processed folder would replace its listing and so delete every table."""
    if processed.resolve() == reports.resolve():
        raise PipelineError("--reports is the --processed folder: the pages would replace the datasets; "
                            "give the reports a folder of their own", path=reports)


@_collector_paused()
def run_all(raw: Path, corpora: list[Path], processed: Path, reports: Path | None, quiet: bool = False,
            use_cache: bool = True) -> Result | None:
    """The whole job, published all or nothing under a lock. With the cache on, a run whose inputs,
    code and outputs are unchanged does nothing and returns None."""
    if reports is not None:
        _separate(processed, reports)
    with publish.locked(processed, *([reports] if reports is not None else [])):
        rid = inputs_fingerprint(raw, corpora)
        stamp = hashlib.sha256(f"{rid}\0{reports.resolve() if reports else ''}".encode()).hexdigest()
        rid = rid[:16]
        if use_cache and up_to_date(processed, reports, stamp):
            return None
        (processed / RUN_STAMP).unlink(missing_ok=True)  # an interrupted run must not look finished
        stage = publish.begin(processed)
        result = _build(raw, corpora, stage, processed / CACHE_FILE if use_cache else None, quiet)
        # The datasets are written; the reports read them back. Free what they do not need.
        result.records = len(result.rules)
        result.rules, result.history = [], None
        result.ingested = replace(result.ingested, docs=[replace(d, paragraphs=()) for d in result.ingested.docs])
        if reports is not None:
            start = time.perf_counter()
            from pipeline.report import build as report
            report.render(stage, publish.begin(reports), result.ingested.docs,
                          progress=progress_bar(quiet, "report", "page"), run_id=rid)
            result.seconds["report"] = time.perf_counter() - start
        publish.commit(processed, rid)
        _remember(processed, result, use_cache)
        if reports is not None:
            publish.commit(reports, rid)
        if use_cache:
            write_atomic(processed / RUN_STAMP, json.dumps({
                "fingerprint": stamp, "processed": publish.stamp(processed),
                "reports": publish.stamp(reports) if reports is not None else {}}) + "\n")
    return result
