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
            close = process.cdist(block, pool, scorer=fuzz.ratio, score_cutoff=NEAR_COPY, dtype=np.uint8, workers=-1)
            out |= {t for t, row in zip(block, close) if np.count_nonzero(row) > 1}  # itself, and another
        return out
    return near


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
