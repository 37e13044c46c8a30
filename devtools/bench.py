"""Benchmarks that print figures measured in the same run (never timed unit tests)."""
from __future__ import annotations

import difflib
import multiprocessing
import queue
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline import run as stages
from pipeline.align.match import align
from pipeline.ingest.clean import normalize_newlines
from pipeline.ingest.decode import decode
from pipeline.errors import PipelineError, SourceError
from pipeline.patterns import DOTTED_NUMBER, NUMBERED_START
from pipeline.records import Rule

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
    for _score, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
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

SPLIT = re.compile(rf"(?m)^(?={DOTTED_NUMBER}\.? )")  # before "100.1. These" and "100.1a A"


def naive_floor(corpora: list[Path], repeat: int = 3) -> tuple[float, int]:
    """Decode every file and split it into rules with one regular expression: the floor (the best of
    a few tries: on a shared machine one try can take several times as long)."""
    return min(_floor_once(corpora) for _ in range(repeat))


def _floor_once(corpora: list[Path]) -> tuple[float, int]:
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


class BenchError(PipelineError):
    """A measured run that failed: its child died, raised or ran past its time."""


def in_child(fn, *args, timeout: float = 3600.0) -> dict:
    """fn(*args) (a dict) in a forked child of this warm interpreter, plus the child's peak memory in MB.
    A child that dies, raises or hangs is a BenchError, never a parent blocked on the queue."""
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    child = ctx.Process(target=_child, args=(results, fn, args))  # not a daemon: a run may use a pool
    child.start()
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                status, out = results.get(timeout=0.5)
                break
            except queue.Empty:
                if not child.is_alive() and results.empty():
                    raise BenchError(f"the measured run died (exit code {child.exitcode})") from None
                if time.monotonic() > deadline:
                    raise BenchError(f"the measured run took more than {timeout:.0f} s: stopped") from None
    finally:
        if child.is_alive():
            child.join(timeout=5)
        if child.is_alive():
            child.kill()
            child.join()
    if status != "ok":
        raise BenchError(f"the measured run failed: {out}")
    return out


def _child(results, fn, args):
    try:
        out = dict(fn(*args))
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        results.put(("ok", out))
    except BaseException as e:  # reported by the parent, whatever it was
        results.put(("error", f"{type(e).__name__}: {e}"))


def whole_run(raw: Path, corpora: list[Path], processed: Path, reports: Path) -> dict:
    start = time.perf_counter()
    result = stages.run_all(raw, corpora, processed, reports, quiet=True)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "skipped": result is None,
            "stages": {} if result is None else {k: round(v, 2) for k, v in result.seconds.items()},
            "records": 0 if result is None else result.records,
            "editions": 0 if result is None else len(result.editions)}


def timed_run(raw: Path, corpora: list[Path], processed: Path, reports: Path, timeout: float = 3600.0) -> dict:
    """One whole run in a forked child (modules already imported, as in a warm interpreter), so
    its peak memory is its own."""
    return in_child(whole_run, raw, corpora, processed, reports, timeout=timeout)


def folder_mb(folder: Path) -> tuple[float, list[tuple[str, float]]]:
    """Size of a published folder (caches and staging left out) and its biggest files, in MB."""
    sizes = [(str(p.relative_to(folder)), p.stat().st_size / 1e6) for p in folder.rglob("*")
             if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)]
    return sum(s for _, s in sizes), sorted(sizes, key=lambda x: -x[1])[:5]


def latency(args: list[str], repeat: int = 3) -> float:
    """Best wall time of a fresh `python -m pipeline ARGS` (start-up included, as a user sees it)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True)
        best = min(best, time.perf_counter() - start)
        if done.returncode:
            raise BenchError(f"python -m pipeline {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return best


# Runs `python -m pipeline ARGS` and prints its peak memory last on standard error: the peak of this
# process alone (VmHWM; ru_maxrss would count the benchmark's own memory, inherited before exec).
PEAK = ("import runpy, sys\nsys.argv = ['pipeline', *sys.argv[1:]]\ntry:\n"
        "    runpy.run_module('pipeline', run_name='__main__')\nexcept SystemExit as e:\n    code = e.code\n"
        "else:\n    code = 0\n"
        "peak = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')]\n"
        "print('peak-kb', *peak, file=sys.stderr)\nsys.exit(code)")


def measured(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak memory (MB) of one fresh `python -m pipeline ARGS`, as a user starts it."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise BenchError(f"python -m pipeline {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    peak = done.stderr.strip().rsplit("peak-kb", 1)[-1].split()
    return seconds, int(peak[0]) / 1024 if peak else float("nan")


def identify_rows(docs: dict[str, Path], processed: Path, tmp: Path) -> list[Row]:
    """identify of a plain fragment (20 lines from the middle of the newest edition's rules), best of 3."""
    newest = docs[max(docs)]
    lines = [line for line in normalize_newlines(decode(newest.read_bytes())[0]).split("\n") if line.strip()]
    numbered = [i for i, line in enumerate(lines) if NUMBERED_START.match(line)]
    start = numbered[len(numbered) // 2]
    fragment = tmp / "fragment.txt"
    fragment.write_text("\n".join(lines[start:start + 20]) + "\n", encoding="utf-8")
    seconds, mb = min(measured(["identify", str(fragment), "--processed", str(processed)]) for _ in range(3))
    return [Row(f"(l) identify 20 rule lines of {max(docs)}", seconds, base=1.0, target="<= 1"),
            Row("(l) identify: peak memory", mb, "MB", base=300.0, target="<= 1")]


def file_rules(path: Path) -> list[Rule]:
    from pipeline.segment import read
    return read.rules([read.clean(path)])


def pair_seconds(old: Path, new: Path) -> float:
    """Aligning and diffing one pair of files, their segmentation not counted."""
    from pipeline.query.compare import compare
    a, b = file_rules(old), file_rules(new)
    start = time.perf_counter()
    compare(a, b)
    return time.perf_counter() - start


# --- the cost of each format ------------------------------------------------------------------

def format_costs(folders: list[Path]) -> list[dict]:
    """Per file: seconds to read it (decode, or extract from PDF/DOCX/RTF) and to clean it, and how
    many characters it yields; each format's cost is comparable with the TXT of the same edition."""
    from pipeline.ingest.discover import read_source
    from pipeline.ingest.adapters import ADAPTERS
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


# --- every target of issue 15, measured in one run ----------------------------------------------

@dataclass
class Row:
    measure: str
    value: float
    unit: str = "s"
    base: float | None = None  # what the ratio divides by
    target: str = ""  # "<= 15" (ratio at most) or ">= 4" (ratio at least) or "" (for information)

    @property
    def ratio(self) -> float | None:
        return self.value / self.base if self.base else None

    @property
    def met(self) -> str:
        if not self.target:
            return ""
        op, bound = self.target.split()
        value = self.ratio if self.ratio is not None else self.value
        return "met" if (value <= float(bound) if op == "<=" else value >= float(bound)) else "NOT met"


def archive_rows(raw: Path, corpora: list[Path], tmp: Path, echo) -> tuple[list[Row], Path]:
    floor, pieces = naive_floor(corpora)
    echo(f"corpus: {', '.join(map(str, corpora))}; naive split found {pieces} pieces")
    full = timed_run(raw, corpora, tmp / "p", tmp / "r")
    again = timed_run(raw, corpora, tmp / "p", tmp / "r")
    echo(f"archive run by stage (s): {full['stages']}")
    size, biggest = folder_mb(tmp / "p")
    echo(f"archive processed/ biggest files (MB): {[(n, round(s, 1)) for n, s in biggest]}")
    return [Row("(a) archive: naive floor (decode + one regex)", floor, base=floor),
            Row(f"(b) archive: full run, cold ({full['editions']} editions)", full["seconds"], base=floor,
                target="<= 15"),
            Row("(b) archive: peak memory", full["peak_mb"], "MB", target="<= 1500"),
            Row("(c) archive: re-run, nothing changed" + ("" if again["skipped"] else " (NOT skipped)"),
                again["seconds"], base=floor),
            Row("(d) archive: processed/ size", size, "MB"),
            Row("(d) archive: reports/ size", folder_mb(tmp / "r")[0], "MB")], tmp / "p"


def simulated_rows(raw: Path, corpora: list[Path], count: int, tmp: Path, echo) -> list[Row]:
    from devtools.simulate import edition_day, simulate, write_edition
    folder = tmp / "simulated"
    evolver = simulate(corpora, count, folder)
    floor, _ = naive_floor([folder])
    full = timed_run(raw, [folder], tmp / "ps", tmp / "rs")
    echo(f"simulated run by stage (s): {full['stages']}; {full['records']:,} records")
    size, biggest = folder_mb(tmp / "ps")
    echo(f"simulated processed/ biggest files (MB): {[(n, round(s, 1)) for n, s in biggest]}")
    evolver.step()  # one more edition, as the next quarter brings
    newest = write_edition(folder, count, evolver.text(edition_day(count)))
    added = timed_run(raw, [folder], tmp / "ps", tmp / "rs")
    echo(f"add-one-edition run by stage (s): {added['stages']}")
    pair = pair_seconds(folder / f"edition-{count - 1:03d}.txt", newest)
    mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    return [Row(f"(g0) simulated: naive floor ({count} files, {mb:.0f} MB)", floor, base=floor),
            Row(f"(g) simulated: full run, cold ({full['editions']} editions)", full["seconds"], base=floor,
                target="<= 15"),
            Row("(g) simulated: peak memory", full["peak_mb"], "MB", target="<= 1500"),
            Row("(h0) simulated: align + diff the newest pair alone", pair, base=pair),
            Row("(h) simulated: add one edition to the processed archive", added["seconds"], base=pair,
                target="<= 2"),
            Row("(i) simulated: processed/ size, all formats", size, "MB", target="<= 300"),
            Row("(i) simulated: reports/ size", folder_mb(tmp / "rs")[0], "MB")]


COLD_TRIES = 3


def cold_against_difflib(a: Path, b: Path, rules: tuple[list[Rule], list[Rule]], first: float,
                         tmp: Path) -> tuple[float, float]:
    """The difflib method's best seconds (`first`: alignment_bench's try) and a cold `compare`'s (a fresh
    process, each try into its own empty --processed), best of COLD_TRIES each, taken in turn: one
    try of each, minutes apart, was a draw of what else the machine was running at the time."""
    body = [[r for r in side if r.kind in BODY] for side in rules]
    difflib_s, cold = first, float("inf")
    for attempt in range(COLD_TRIES):
        if attempt:
            start = time.perf_counter()
            baseline_align(*body)
            difflib_s = min(difflib_s, time.perf_counter() - start)
        cold = min(cold, latency(["compare", str(a), str(b), "--processed", str(tmp / f"compare-{attempt}")],
                                 repeat=1))
    return difflib_s, cold


def command_rows(corpora: list[Path], processed: Path, tmp: Path, echo) -> list[Row]:
    """compare of two files (cold, then again) against the difflib method; --help; history."""
    from devtools.simulate import dated_editions
    docs = {d.edition: d.source.path for d in dated_editions(corpora)}
    if not docs:
        return []
    a, b = (docs.get("2009-05-01"), docs.get("2009-07-11")) if "2009-07-11" in docs else sorted(docs.values())[-2:]
    old, new = file_rules(a), file_rules(b)
    chains = alignment_bench(old, new)
    for row in chains:
        echo(f"    {row['method']:<52} {row['seconds']:>7.2f} s, {row['matched']} matched, "
             f"July 2009 chains right {row['correct']}/{len(CHAINS_2009)}")
    difflib_s, cold = cold_against_difflib(a, b, (old, new), chains[1]["seconds"], tmp)
    warm = latency(["compare", str(a), str(b), "--processed", str(tmp / f"compare-{COLD_TRIES - 1}")])
    rule = "205.1a" if "2026-01-16" in docs else "100.1"
    return [Row(f"(e0) difflib method on {a.name} -> {b.name}", difflib_s, base=difflib_s),
            Row("(e) compare of the two files, cold (x faster)", difflib_s / cold, "x", target=">= 4"),
            Row("(e) compare of the two files, again (x faster)", difflib_s / warm, "x", target=">= 15"),
            Row("(j) --help", latency(["--help"]), target="<= 0.5"),
            Row(f"(k) history {rule} on the archive", latency(["history", rule, "--processed", str(processed)]),
                target="<= 0.5")] + identify_rows(docs, processed, tmp)


def run(raw: Path, corpora: list[Path], simulate_count: int, formats: list[Path], echo) -> list[Row]:
    """Every measure, printed as one table (each target with its ratio), then the detail."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="crdiff-bench-") as tmp:
        tmp = Path(tmp)
        rows, processed = archive_rows(raw, corpora, tmp, echo)
        if simulate_count:
            rows += simulated_rows(raw, corpora, simulate_count, tmp, echo)
        rows += command_rows(corpora, processed, tmp, echo)
        echo(f"\n{'measure':<62} {'value':>10} {'ratio':>8} {'target':>8}  verdict")
        for r in rows:
            ratio = f"{r.ratio:.1f}x" if r.ratio is not None and r.base != r.value else ""
            echo(f"{r.measure:<62} {r.value:>8.2f} {r.unit:<2}{ratio:>8} {r.target:>8}  {r.met}")
    if formats:
        echo(f"\n{'file (cost per format)':<20} {'format':>6} {'bytes':>9} {'chars':>9} {'read s':>7} {'clean s':>7}")
        for row in format_costs(list(corpora) + list(formats)):
            echo(f"{row['file']:<20} {row['format']:>6} {row['bytes']:>9} {row['chars']:>9} "
                 f"{row['read']:>7.3f} {row['clean']:>7.3f}")
    return rows
