"""The scored one-to-one match of body rules left after the exact steps: characters and rare words
decide whether a pair is acceptable, evidence of place (scoring.py's bonuses) ranks the acceptable ones,
the steep assignment picks; boilerplate and template rules of other subjects are kept apart. Steps too
large for full matrices score candidate pairs only (_fuzzy_sparse)."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.records import Match, Rule
from pipeline.align.trace import ORDINALS, content_words, sentences
from pipeline.align.scoring import (ACCEPT, BONUS_SAME_ID, DENSE_CELLS, MIN_RATIO, RARE_DF, score_form, _assign,
                                    _assign_sparse, _banned, _neighbour_bonus, _pair_neighbour_bonus,
                                    _pair_parent_bonus, _parent_bonus, _text)
from pipeline.align.similarity import word_similarity, word_vectors, _best_by_words, _pair_words


def _home(old, new, found):
    """home(i, j): new rule j is in the chapter where most of old rule i's chapter went."""
    went = defaultdict(Counter)
    for m in found:
        went[old[m.old].rule_id[:3]][new[m.new].rule_id[:3]] += 1
    target = {chapter: counts.most_common(1)[0][0] for chapter, counts in went.items()}

    def home(i: int, j: int) -> bool:
        return target.get(old[i].rule_id[:3]) == new[j].rule_id[:3]
    home.target = target
    return home


def _away_from_home(old, new, o, n, anchors, stock) -> np.ndarray:
    """A rule that is all boilerplate ("Third, the active player gets priority.") has nothing of its
    own to be recognised by: it can only be matched in the chapter where its chapter went."""
    away = np.zeros((len(o), len(n)), dtype=bool)
    rows = [r for r, i in enumerate(o) if i in stock]
    if rows:
        home = _home(old, new, anchors)
        chapters = np.array([new[j].rule_id[:3] for j in n])
        for r in rows:
            target = home.target.get(old[o[r]].rule_id[:3])
            if target is not None:
                away[r] = chapters != target
    return away


def _identity(old, new, o, n):
    """A rule's scoring form without its boilerplate: a sentence printed in two or more rules of
    an edition ("Third, the active player gets priority.") says nothing about which rule it is."""
    parts = ({("old", i): sentences(old[i], score_form) for i in o}
             | {("new", j): sentences(new[j], score_form) for j in n})
    copies = {side: Counter(_template(s) for (k, _), ss in parts.items() if k == side for s in set(ss))
              for side in ("old", "new")}

    def form(side: str, k: int, r: Rule) -> str:
        kept = [s for s in parts[(side, k)] if copies[side][_template(s)] < 2]
        return " ".join(kept) if kept and r.compare else score_form(_text(r))
    form.stock = {i for i in o if not [s for s in parts[("old", i)] if copies["old"][_template(s)] < 2]}
    return form


ORDINAL = re.compile(r"\b(?:" + "|".join(ORDINALS) + r")\b")


@lru_cache(maxsize=1 << 17)
def _template(sentence: str) -> str:
    """A sentence with its ordinals blanked: "third, the active player gets priority." is the same
    template as "fourth, ...", printed in every step of the turn."""
    return ORDINAL.sub("#", sentence)


def _fuzzy(old, new, o, n, anchors, forbid, form) -> list[Match]:
    a = [form("old", i, old[i]) for i in o]
    b = [form("new", j, new[j]) for j in n]
    if len(o) * len(n) > DENSE_CELLS:
        return _fuzzy_sparse(old, new, o, n, anchors, forbid, form.stock, (a, b))
    # Characters in order (rapidfuzz) say whether a pair is acceptable; averaged with the words that
    # name things (rare words weigh most) they rank the candidates: the legend rule reworded is the
    # legend rule, not the planeswalker rule that sat at its number.
    chars = process.cdist(a, b, scorer=fuzz.ratio, dtype=np.float32, workers=-1)
    ranked = (chars + word_similarity(a, b)) / 2
    ratio = np.maximum(chars, ranked)
    same_id = _same_ids([old[i].rule_id for i in o], [new[j].rule_id for j in n])
    banned = _banned(old, new, o, n, forbid) | _away_from_home(old, new, o, n, anchors, form.stock) \
        | _other_subjects(old, new, o, n)
    fuzzy: list[Match] = []
    for _ in range(2):  # round two knows where round one sent each parent and neighbour
        known = anchors + [m for m in fuzzy if m.score >= 85]
        bonus = BONUS_SAME_ID * same_id + _parent_bonus(old, new, o, n, known) \
            + _neighbour_bonus(old, new, o, n, known)
        eligible = (ratio >= MIN_RATIO) & (ratio + bonus >= ACCEPT) & ~banned
        fuzzy = _assign(o, n, np.where(eligible, np.minimum(ranked + bonus, 100.0), 0.0), eligible)
    return fuzzy


def _same_ids(a: list[str], b: list[str]) -> np.ndarray:
    """1.0 where a[r] == b[c], else 0.0: the numbers as integers compared by numpy (a Python comparison
    per cell was 0.06-0.1 s of the July 2009 pair)."""
    codes: dict[str, int] = {}
    ca = np.array([codes.setdefault(x, len(codes)) for x in a], dtype=np.int64)
    cb = np.array([codes.setdefault(x, len(codes)) for x in b], dtype=np.int64)
    return (ca[:, None] == cb[None, :]).astype(np.float32)


def _fuzzy_sparse(old, new, o, n, anchors, forbid, stock, texts) -> list[Match]:
    """`_fuzzy` for steps too large for full matrices: the same scores, evidence and assignment, for
    candidate pairs only (`_candidate_pairs`), so memory and time follow the number of rules, not its
    square. A reworded rule that kept none of its rare words, its number or its place is not found."""
    a, b = texts
    vectors_a, vectors_b, df = word_vectors(a, b)
    rows, cols = _candidate_pairs(old, new, o, n, anchors, (vectors_a, vectors_b, df))
    chars = process.cpdist([a[r] for r in rows], [b[c] for c in cols], scorer=fuzz.ratio, dtype=np.float32,
                           workers=-1) if len(rows) else np.zeros(0, dtype=np.float32)
    ranked = (chars + _pair_words(vectors_a, vectors_b, rows, cols)) / 2
    ratio = np.maximum(chars, ranked)
    keep = ratio >= MIN_RATIO  # the rest can never be acceptable, whatever the evidence
    rows, cols, ranked, ratio = rows[keep], cols[keep], ranked[keep], ratio[keep]
    same_id = np.array([old[o[r]].rule_id == new[n[c]].rule_id for r, c in zip(rows, cols)], dtype=np.float32)
    banned = _pair_banned(old, new, o, n, anchors, forbid, stock, (rows, cols))
    fuzzy: list[Match] = []
    for _ in range(2):  # round two knows where round one sent each parent and neighbour
        known = anchors + [m for m in fuzzy if m.score >= 85]
        bonus = BONUS_SAME_ID * same_id + _pair_parent_bonus(old, new, o, n, known, (rows, cols)) \
            + _pair_neighbour_bonus(o, n, known, (rows, cols))
        eligible = (ratio >= MIN_RATIO) & (ratio + bonus >= ACCEPT) & ~banned
        total = np.minimum(ranked + bonus, 100.0)
        fuzzy = _assign_sparse((old, new), o, n, (rows[eligible], cols[eligible]), total[eligible])
    return fuzzy


def _candidate_pairs(old, new, o, n, anchors, vectors) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) worth scoring, ordered by row then column: for each rule, the CANDIDATES rules of
    the other edition that share most of its rare words (both ways), the rule of its number, and the
    rules next to where its neighbours went."""
    vectors_a, vectors_b, df = vectors
    rare = np.flatnonzero(df <= RARE_DF)
    rare_a, rare_b = vectors_a[:, rare].tocsr(), vectors_b[:, rare].tocsr()
    best_r, best_c = _best_by_words(rare_a, rare_b)
    back_c, back_r = _best_by_words(rare_b, rare_a)
    placed_r, placed_c = _placed_pairs(old, new, o, n, anchors)
    key = np.unique(np.concatenate([best_r, back_r, placed_r]) * len(n) + np.concatenate([best_c, back_c, placed_c]))
    return key // len(n), key % len(n)


def _placed_pairs(old, new, o, n, anchors) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns): each rule with the rules of its number and the rules next to where its
    neighbours went (the evidence `_fuzzy` adds, when the words alone do not point there)."""
    by_id = defaultdict(list)
    for c, j in enumerate(n):
        by_id[new[j].rule_id].append(c)
    col = {j: c for c, j in enumerate(n)}
    mapped = {m.old: m.new for m in anchors}
    pairs = []
    for r, i in enumerate(o):
        pairs += [(r, c) for c in by_id.get(old[i].rule_id, ())]
        for step in (-1, 1):
            target = mapped.get(i + step)
            if target is not None and (target - step) in col:
                pairs.append((r, col[target - step]))
    found = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return found[:, 0], found[:, 1]


def _pair_banned(old, new, o, n, anchors, forbid, stock, pairs) -> np.ndarray:
    """`_banned`, `_away_from_home` and `_other_subjects` for the pairs (rows, cols) only."""
    home = _home(old, new, anchors).target if stock else {}
    words_o, subject_o = _subjects(old, o)
    words_n, subject_n = _subjects(new, n)
    out = np.zeros(len(pairs[0]), dtype=bool)
    for k, (r, c) in enumerate(zip(*(p.tolist() for p in pairs))):
        a, b = old[o[r]], new[n[c]]
        target = home.get(a.rule_id[:3]) if o[r] in stock else None
        other = bool(subject_o[r]) and bool(subject_n[c]) \
            and not (subject_o[r] & words_n[c]) and not (subject_n[c] & words_o[r])
        out[k] = (a.rule_id, b.rule_id) in forbid or (target is not None and b.rule_id[:3] != target) or other
    return out


def _title_words(rules: list[Rule]) -> dict[str, frozenset[str]]:
    """Heading number -> the content words of its title: what the rules under it are about."""
    return {r.rule_id: content_words(score_form(r.title)) for r in rules if r.title}


def _subjects(rules: list[Rule], idx: list[int]) -> tuple[list[frozenset], list[frozenset]]:
    """Per record: its words, and the words of its section's title it uses (the keyword it belongs to:
    "banding" under 502.10 Banding)."""
    titles = _title_words(rules)
    words = [content_words(score_form(_text(rules[k]))) for k in idx]
    return words, [w & titles.get(rules[k].parent, frozenset()) for w, k in zip(words, idx)]


def _other_subjects(old, new, o, n) -> np.ndarray:
    """Template rules ("Multiple instances of banding are redundant" / "... of intimidate ...") are
    alike in all but their subject: a pair where each names its own section's subject and not the
    other's is two rules, however alike the rest of the words."""
    banned = np.zeros((len(o), len(n)), dtype=bool)
    words_o, subject_o = _subjects(old, o)
    words_n, subject_n = _subjects(new, n)
    cols = [c for c, s in enumerate(subject_n) if s]
    for r, s in enumerate(subject_o):
        if s:
            for c in cols:
                banned[r, c] = not (s & words_n[c]) and not (subject_n[c] & words_o[r])
    return banned
