"""Benchmarks that print figures measured in the same run (never timed unit tests)."""
from __future__ import annotations

import difflib
import multiprocessing
import re
import resource
import shutil
import time
from datetime import date, timedelta
from pathlib import Path

from pipeline import stages
from pipeline.align import align
from pipeline.clean import normalize_newlines
from pipeline.decode import decode
from pipeline.errors import SourceError
from pipeline.patterns import EFFECTIVE_DATE
from pipeline.records import Rule
from pipeline.sources.official import looks_official

# Chains the July 2009 renumbering must keep whole, and the near-twins it must not swap.
CHAINS_2009 = {"212.1b": "204.1a", "212.1d": "204.4b", "212.1e": "204.3d", "212.5b": "304.2", "212.7b": "307.2"}
BODY = ("rule", "subrule", "ruling")


def baseline_align(old: list[Rule], new: list[Rule]) -> dict[str, str]:
    """What the best-known public tool does: difflib get_close_matches (cutoff 0.4) on word lists,
    then greedy pairing by best score."""
    new_words = [tuple(r.compare.split()) for r in new]
    index = {}
    for j, words in enumerate(new_words):
        index.setdefault(words, j)
    candidates = []
    for i, r in enumerate(old):
        words = tuple(r.compare.split())
        for match in difflib.get_close_matches(words, new_words, n=5, cutoff=0.4):
            score = difflib.SequenceMatcher(None, words, match).ratio()
            candidates.append((score, i, index[match]))
    pairs, used_old, used_new = {}, set(), set()
    for score, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs[old[i].rule_id] = new[j].rule_id
    return pairs


def ours(old: list[Rule], new: list[Rule]) -> dict[str, str]:
    return {old[m.old].rule_id: new[m.new].rule_id for m in align(old, new)
            if m.old is not None and m.new is not None and m.method not in ("split", "merge")}


def alignment_bench(old: list[Rule], new: list[Rule]) -> list[dict]:
    """Time and chain results of both methods on one pair of editions (body rules only)."""
    old = [r for r in old if r.kind in BODY]
    new = [r for r in new if r.kind in BODY]
    rows = []
    for name, method in (("crdiff (rapidfuzz + Hungarian + structure)", ours),
                         ("baseline (difflib get_close_matches 0.4 + greedy)", baseline_align)):
        start = time.perf_counter()
        pairs = method(old, new)
        seconds = time.perf_counter() - start
        right = {k: pairs.get(k, "-") for k in CHAINS_2009}
        rows.append({"method": name, "seconds": seconds, "matched": len(pairs),
                     "chains": right, "correct": sum(right[k] == v for k, v in CHAINS_2009.items())})
    return rows


# --- the whole archive -----------------------------------------------------------------------

SPLIT = re.compile(r"(?m)^(?=\d{3}\.\d+[a-z]?\.? )")


def naive_floor(corpora: list[Path]) -> tuple[float, int]:
    """Decode every file and split it into rules with one regular expression: the floor."""
    start = time.perf_counter()
    pieces = 0
    for folder in corpora:
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            try:
                text, _ = decode(path.read_bytes(), path)
            except SourceError:
                continue
            pieces += len(SPLIT.split(normalize_newlines(text)))
    return time.perf_counter() - start, pieces


def _child(queue, raw, corpora, processed, reports):
    start = time.perf_counter()
    result = stages.run_all(raw, corpora, processed, reports, quiet=True)
    seconds = time.perf_counter() - start
    queue.put({"seconds": seconds, "skipped": result is None,
               "stages": {} if result is None else {k: round(v, 2) for k, v in result.seconds.items()},
               "records": 0 if result is None else result.records,
               "editions": 0 if result is None else len(result.editions),
               "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def timed_run(raw: Path, corpora: list[Path], processed: Path, reports: Path) -> dict:
    """One whole run in a forked child (modules already imported, as in a warm interpreter), so
    its peak memory is its own."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue, raw, corpora, processed, reports))
    child.start()
    out = queue.get()
    child.join()
    return out


def simulate(corpora: list[Path], count: int, folder: Path) -> Path:
    """`count` editions made from the corpus by copying its files, in date order, with shifted
    effective dates: each real edition stands for a run of identical copies, so consecutive
    editions are mostly the same, as real consecutive editions are."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for path in sorted(p for c in corpora for p in c.iterdir() if p.is_file()):
        try:
            if looks_official(decode(path.read_bytes(), path)[0]):
                files.append(path)
        except SourceError:
            continue
    day = date(1990, 1, 1)
    for n in range(count):
        source = files[n * len(files) // count]
        text, _ = decode(source.read_bytes(), source)
        day += timedelta(days=90)
        stamp = day.strftime("%B %d, %Y").replace(" 0", " ")
        text = EFFECTIVE_DATE.sub(lambda m: m.group(0).replace(m.group("date"), stamp), text, count=1)
        (folder / f"edition-{n:03d}.txt").write_text(text, encoding="utf-8")
    return folder


def change_one_file(corpus: Path, folder: Path) -> Path:
    """A copy of the corpus in which one rule of the newest edition has one more word."""
    shutil.copytree(corpus, folder)
    newest = sorted(folder.iterdir())[-1]
    text, _ = decode(newest.read_bytes(), newest)
    newest.write_text(text.replace("100.1. These Magic rules apply", "100.1. These Magic rules always apply", 1),
                      encoding="utf-8")
    return folder


# --- the cost of each format ------------------------------------------------------------------

def format_costs(folders: list[Path]) -> list[dict]:
    """Per file: seconds to read it (decode, or extract from PDF/DOCX/RTF) and to clean it, and how
    many characters it yields; each format's cost is comparable with the TXT of the same edition."""
    from pipeline.ingest import read_source
    from pipeline.sources import ADAPTERS
    rows = []
    for path in sorted(p for folder in folders for p in folder.iterdir() if p.is_file()):
        start = time.perf_counter()
        try:
            source = read_source(path, None)
        except SourceError:
            continue
        read = time.perf_counter() - start
        start = time.perf_counter()
        doc = ADAPTERS[source.format](source)
        rows.append({"file": path.name, "format": "txt" if source.format == "official" else source.format,
                     "bytes": source.n_bytes, "chars": doc.chars_total, "read": read,
                     "clean": time.perf_counter() - start})
    return rows
