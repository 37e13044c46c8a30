"""What every group of records (body, headings, glossary) shares: which group a record is in, which
records are only pieces, pairs a person forced, and the cheap first step: same number and words, then
the same words under another number (but not template wording that many rules share)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.records import HEADINGS, Match, Rule
from pipeline.align.scoring import BLOCK_CELLS, MAX_DENSE_CELLS, NEAR_COPY, RARE_DF
from pipeline.align.similarity import word_vectors, _best_by_words


ONE_TO_ONE = ("same", "moved", "fuzzy", "override", "traced", "renamed")


def _group(r: Rule) -> str:
    if r.kind in HEADINGS:
        return "headings"
    return "glossary" if r.kind == "glossary" else ("commentary" if r.kind == "commentary" else "body")


def _exact(old, new, o, n, text, near=None) -> tuple[list[Match], list[int], list[int]]:
    """Same number and words, then same words under another number (pairing repeats in order).
    `near(texts)`: those of the moving texts that are not told apart by their words (`_near_copies`),
    left to the scored match, where the rule's place counts."""
    found = []
    new_by_key = {(new[j].rule_id, new[j].occurrence): j for j in n}
    used_new = set()
    rest_o = []
    for i in o:
        j = new_by_key.get((old[i].rule_id, old[i].occurrence))
        if j is not None and j not in used_new and text(old[i]) == text(new[j]):
            found.append(Match(i, j, 100.0, "same"))
            used_new.add(j)
        else:
            rest_o.append(i)
    by_text = defaultdict(list)
    for j in n:
        if j not in used_new:
            by_text[text(new[j])].append(j)
    unsure = near(sorted({text(old[i]) for i in rest_o if text(old[i]) in by_text})) if near else set()
    still_o = []
    for i in rest_o:
        candidates = None if text(old[i]) in unsure else by_text.get(text(old[i]))
        if candidates:
            found.append(Match(i, candidates.pop(0), 100.0, "moved"))
        else:
            still_o.append(i)
    used_new |= {m.new for m in found}
    return found, still_o, [j for j in n if j not in used_new]


def _near(old, new, o, n, text):
    """near(texts): the texts that have a near copy, not the same, among the rules of either edition:
    template wording a rule shares with its siblings. Found word for word at another number, such a
    rule may have moved, or a sibling may have taken its words (509.4 "Fourth, the active player gets
    priority" of 2020 is not 505.6 of 2025, the main phase's "Third, ..." renumbered)."""
    def near(texts: list[str]) -> set[str]:
        if not texts:
            return set()
        pool = sorted({text(old[i]) for i in o} | {text(new[j]) for j in n})
        if len(texts) * len(pool) > MAX_DENSE_CELLS:  # larger than any real step: the likeliest only
            return _near_sparse(texts, pool)
        out = set()
        step = max(1, BLOCK_CELLS // len(pool))
        for start in range(0, len(texts), step):
            block = texts[start:start + step]
            out |= {t for t, count in zip(block, _near_counts(block, pool)) if count > 1}  # itself, and another
        return out
    return near


COUNTED = 32  # characters whose counts rule pairs out (the commonest of the texts compared)
FEW_CELLS = 100_000  # pairs compared all: counting the pool's characters would cost more


def _near_counts(texts: list[str], pool: list[str]) -> np.ndarray:
    """For each text, how many texts of `pool` are at least NEAR_COPY alike (fuzz.ratio, as
    process.cdist with that cutoff finds them), comparing only the pairs whose counts of the commonest
    characters allow it: each insertion or deletion changes one count by one, so the counts' differences
    bound the ratio from above. Nearly every pair is ruled out so (comparing them all was 0.3-0.5 s of a
    cold `compare` of the July 2009 pair)."""
    if len(texts) * len(pool) <= FEW_CELLS:
        close = process.cdist(texts, pool, scorer=fuzz.ratio, score_cutoff=NEAR_COPY, dtype=np.uint8, workers=-1)
        return np.count_nonzero(close, axis=1)
    codes = [np.frombuffer(t.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) for t in texts + pool]
    found, freq = np.unique(np.concatenate(codes + [np.zeros(0, dtype=np.uint32)]), return_counts=True)
    alphabet = np.sort(found[np.argsort(-freq, kind="stable")[:COUNTED]])
    counts = np.zeros((len(codes), len(alphabet)), dtype=np.int32)
    for k, c in enumerate(codes):
        at = np.minimum(np.searchsorted(alphabet, c), max(len(alphabet) - 1, 0))
        counted = alphabet[at] == c if len(alphabet) else np.zeros(len(c), dtype=bool)
        counts[k] = np.bincount(at[counted], minlength=len(alphabet))
    lengths = np.array([len(c) for c in codes], dtype=np.float64)
    total = lengths[:len(texts), None] + lengths[None, len(texts):]
    bound = 100 * (1 - _cityblock(counts[:len(texts)], counts[len(texts):]) / np.maximum(total, 1))
    rows, cols = np.nonzero(bound >= NEAR_COPY - 1)  # a point of margin for rounding
    close = process.cpdist([texts[r] for r in rows], [pool[c] for c in cols], scorer=fuzz.ratio,
                           score_cutoff=NEAR_COPY, dtype=np.uint8, workers=-1) if len(rows) else np.zeros(0)
    return np.bincount(rows[close > 0], minlength=len(texts))


def _cityblock(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """scipy's cdist(a, b, "cityblock") of rows of counts (whole numbers: the same sums in any order), a
    column at a time in place: importing scipy.spatial for it was 0.06-0.07 s of CPU at every cold `compare`."""
    out = np.zeros((len(a), len(b)), dtype=np.int32)
    step = np.empty_like(out)
    for k in range(a.shape[1]):
        np.subtract(a[:, k, None], b[None, :, k], out=step)
        out += np.abs(step, out=step)
    return out.astype(np.float64)


def _near_sparse(texts: list[str], pool: list[str]) -> set[str]:
    """`near` for steps too large to compare every pair (made-up or hostile editions): each text is
    compared with the CANDIDATES texts sharing most of its rare words only (a near copy shares them all)."""
    vectors_a, vectors_b, df = word_vectors(texts, pool)
    rare = np.flatnonzero(df <= RARE_DF)
    rows, cols = _best_by_words(vectors_a[:, rare].tocsr(), vectors_b[:, rare].tocsr())
    keep = np.array([texts[r] != pool[c] for r, c in zip(rows, cols)], dtype=bool)
    rows, cols = rows[keep], cols[keep]
    if not len(rows):
        return set()
    close = process.cpdist([texts[r] for r in rows], [pool[c] for c in cols], scorer=fuzz.ratio,
                           score_cutoff=NEAR_COPY, dtype=np.uint8, workers=-1)
    return {texts[r] for r, score in zip(rows, close) if score}


def _is_piece(r: Rule) -> bool:
    return not r.compare or "partial" in r.flags or "truncated" in r.flags


def _forced(old, new, o, n, force) -> tuple[list[Match], set[int], set[int]]:
    if not force:
        return [], set(), set()
    old_ids = {old[i].rule_id: i for i in o}
    new_ids = {new[j].rule_id: j for j in n}
    found = [Match(old_ids[a], new_ids[b], 100.0, "override") for a, b in sorted(force)
             if a in old_ids and b in new_ids]
    return found, {m.old for m in found}, {m.new for m in found}
