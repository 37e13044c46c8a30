"""Benchmarks that print figures measured in the same run (never timed unit tests)."""
from __future__ import annotations

import difflib
import time

from pipeline.align import align
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
