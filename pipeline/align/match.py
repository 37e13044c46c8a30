"""Alignment: match every rule of one edition to its counterpart in another.

Cheapest first: same number and words; same words under a new number; then similarity
(rapidfuzz) of the rule text (examples only break ties: an example that moved or went is a
change of its rule, not another rule), with structural evidence (same parent after a chapter's
move, neighbours that moved the same way, the same number) that can rank candidates but never
make a pair of different texts acceptable. Only acceptable pairs enter the assignment
(Hungarian algorithm, scipy), on scores made steep so that one strong pair is never traded for
two weak ones. Sentence tracing (trace.py) then finds splits and merges in what is left, and
rare words the rules rewritten past their sentences or absorbed under new wording.
Headings are matched afterwards, by where their rules went; glossary terms by name and
definition together.

Memory is bounded: a step larger than any real one (DENSE_CELLS; made-up or hostile editions of
tens of thousands of reworded rules) scores only candidate pairs, those that share rare words, a
number or a neighbour's move, so its cost follows the number of rules and not its square; what
would still need a matrix over MAX_DENSE_CELLS stops with AlignmentTooLarge, a clear error.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace
from functools import lru_cache
from itertools import chain

import numpy as np
from rapidfuzz import fuzz, process
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import connected_components

from pipeline.ingest.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.patterns import NUMBER_IN_TEXT, TERMINOLOGY
from pipeline.records import HEADINGS, Match, Rule
from pipeline.align.trace import (ORDINALS, alike, content_words, reworded, rule_words, sentences, sorted_words, trace,
                            units, unexplained)

ONE_TO_ONE = ("same", "moved", "fuzzy", "override", "traced", "renamed")
MIN_RATIO = 60  # the words alone must be this alike: evidence ranks candidates, it cannot make a match
ACCEPT = 62  # total score (words + evidence) needed to match
STEEP = 4.0  # assignment weight 2 ** ((score - 100) / STEEP): a 100 outweighs any number of 70s
REVIEW = 80  # matches under this, or with a close runner-up, are marked for review
CLOSE_RUNNER_UP = 3
BONUS_SAME_ID, BONUS_PARENT, BONUS_NEIGHBOUR = 5, 10, 5
# Bounds on what alignment holds at once. Real steps are far below them (the archive's largest fuzzy
# step: 508 x 957 rules); made-up or hostile editions of tens of thousands of reworded rules are not.
DENSE_CELLS = 2_000_000  # old x new rules scored as full matrices up to this; above, candidate pairs only
MAX_DENSE_CELLS = 16_000_000  # the largest full matrix made at all (~0.5 GB at the most); beyond, AlignmentTooLarge
BLOCK_CELLS = 4_000_000  # products of word vectors are made this many cells (rows x columns) at a time
RARE_DF = 100  # a word in at most this many texts of a step finds candidates: commoner words name nothing
CANDIDATES = 10  # per rule, the rules of the other edition sharing most of its rare words are scored
_TERMS = dict(TERMINOLOGY)
_TERM_RE = re.compile(r"\b(?:" + "|".join(re.escape(old) for old, _ in TERMINOLOGY) + r")\b")


class AlignmentTooLarge(PipelineError):
    """A step of alignment would need more memory than its bound: too many rules, all alike."""


@lru_cache(maxsize=1 << 16)
def score_form(compare: str) -> str:
    """Lower case, rule numbers masked, wholesale terminology changes folded: for scoring only."""
    text = NUMBER_IN_TEXT.sub("#", compare.lower())
    return _TERM_RE.sub(lambda m: _TERMS[m.group()], text)


def _text(r: Rule) -> str:
    """What identifies a rule: its text. Examples only when there is no text (an example-only record)."""
    return r.compare or " ".join(r.examples)


def _full(r: Rule) -> str:
    return r.compare + "".join(" " + e for e in r.examples)


def align(old: list[Rule], new: list[Rule], force: set[tuple[str, str]] = frozenset(),
          forbid: set[tuple[str, str]] = frozenset(), whole: bool = True) -> list[Match]:
    """Every old and every new record appears in exactly one primary or unmatched Match; split,
    merge and resemblance Matches come on top. `whole`: the new edition is complete, so a rule it
    lacks has ended somewhere (a fragment says nothing of the rules it lacks)."""
    matches: list[Match] = []
    old_groups, new_groups = list(map(_group, old)), list(map(_group, new))
    for group in ("body", "headings", "glossary"):
        o = [i for i, g in enumerate(old_groups) if g == group]
        n = [j for j, g in enumerate(new_groups) if g == group]
        extra = []
        if group == "headings":
            found = _align_headings(old, new, o, n, matches, force, forbid)
        elif group == "glossary":
            found = _align_glossary(old, new, o, n)
        else:
            found, extra = _align_body(old, new, o, n, force, forbid, whole)
        matches += found
        matched_old = {m.old for m in found}
        matched_new = {m.new for m in found}
        ends = {m.old for m in extra if m.method == "split"}  # a rule cut in pieces, none of them its successor
        matches += [Match(i, None, 0.0, "unmatched") for i in o if i not in matched_old and i not in ends]
        added = [j for j in n if j not in matched_new]
        matches += [Match(None, j, 0.0, "unmatched") for j in added]
        matches += extra
        if group == "body":
            pieces = {m.new for m in extra if m.method == "split"}
            matches += _resemblances(old, new, o, [j for j in added if j not in pieces])
    return matches + (_from_glossary(old, new, matches) if whole else [])


FROM_GLOSSARY = 0.5  # of an added rule's own text (by weight) found in what one glossary entry lost


def _from_glossary(old, new, matches) -> list[Match]:
    """Text moved from the glossary into the numbered rules ("Event" -> 700.1 and "Exchange" ->
    701.8a-f in July 2009, the entries cut down to "See rule ..."): an added rule at least half of
    whose text (by weight) is text one glossary entry lost is a split piece of that entry."""
    went = {m.old: m.new for m in matches if m.old is not None and m.new is not None and m.method in ONE_TO_ONE}
    pieces = {m.new for m in matches if m.method in ("split", "resembles")}
    added = [m.new for m in matches if m.old is None and _group(new[m.new]) == "body" and m.new not in pieces
             and new[m.new].kind in ("rule", "subrule") and not _is_piece(new[m.new])]
    terms = [i for i, r in enumerate(old) if r.kind == "glossary"]
    if not added or not terms:
        return []
    before = units(old, terms, score_form)
    after = units(new, sorted({went[i] for i in terms if i in went}), score_form)
    lost = [u for i in terms for u in unexplained(before.get(i, []), after.get(went.get(i), []))]
    index = defaultdict(list)
    for k, u in enumerate(lost):
        for w in u.words:
            index[w].append(k)
    out = []
    for j, mine in units(new, added, score_form).items():
        total, got = sum(u.weight for u in mine), Counter()
        for u in mine:
            near = Counter(k for w in u.words for k in index.get(w, ()))
            source = next((lost[k].rule for k, c in near.most_common() if c >= 2 and alike(u, lost[k])), None)
            if source is not None:
                got[source] += u.weight
        if got and total:
            i, weight_got = max(sorted(got.items()), key=lambda kv: kv[1])
            if weight_got / total >= FROM_GLOSSARY:
                out.append(Match(i, j, round(100 * weight_got / total, 1), "split", weight_got / total < 0.6))
    return out


RESEMBLES = 70  # an added rule this like an old one was probably written on its model
RESEMBLE_CANDIDATES = 10


def _resemblances(old, new, o, added) -> list[Match]:
    """An added rule written on the model of a rule that still exists (Improvise after Convoke) is
    added, not split: the resemblance is noted, nothing more."""
    if not added or not o:
        return []
    a = [score_form(_text(new[j])) for j in added]
    b = [score_form(_text(old[i])) for i in o]
    out = []
    for r, words in _word_rows(a, b):  # sparse and cheap: they pick the few candidates worth comparing
        candidates = _best(words, RESEMBLE_CANDIDATES)
        best = max(((fuzz.ratio(a[r], b[c]), -c) for c in candidates), default=(0.0, 0))
        if best[0] >= RESEMBLES:
            out.append(Match(o[-best[1]], added[r], round(float(best[0]), 1), "resembles"))
    return out


def _word_rows(a: list[str], b: list[str]):
    """(k, the row of word_similarity(a, b) for a[k]) for each text of a, made BLOCK_CELLS at a time."""
    vectors_a, vectors_b, _ = word_vectors(a, b)
    vectors_b = vectors_b.T.tocsr()
    step = max(1, BLOCK_CELLS // len(b))
    for start in range(0, len(a), step):
        yield from enumerate((100 * (vectors_a[start:start + step] @ vectors_b).toarray()).astype(np.float32), start)


def _best(scores: np.ndarray, count: int) -> np.ndarray:
    """The positions of the `count` highest scores, ties to the first: the first `count` of a stable
    sort by descending score (in another order), without sorting them all."""
    if len(scores) <= count:
        return np.arange(len(scores))
    least = np.partition(scores, len(scores) - count)[len(scores) - count]
    above = np.flatnonzero(scores > least)
    return np.concatenate([above, np.flatnonzero(scores == least)[:count - len(above)]])


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


NEAR_COPY = 90  # a text this like another rule's ("Third, the active player gets priority." beside "Fourth, ...")


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


def _align_body(old, new, o, n, force, forbid, whole=True) -> tuple[list[Match], list[Match]]:
    """One-to-one matches, then what sentence tracing adds: (primary matches, split/merge extras)."""
    found, forced_o, forced_n = _forced(old, new, o, n, force)
    rest_o = [i for i in o if i not in forced_o]
    rest_n = [j for j in n if j not in forced_n]
    exact, rest_o, rest_n = _exact(old, new, rest_o, rest_n, _text, _near(old, new, o, n, _text))
    found += exact
    folded_form = lambda r: score_form(_text(r))  # noqa: E731  "his or her" -> "their"
    folded, rest_o, rest_n = _exact(old, new, rest_o, rest_n, folded_form, _near(old, new, o, n, folded_form))
    found += [Match(m.old, m.new, 100.0, "fuzzy") for m in folded]
    if rest_o and rest_n:
        found += _fuzzy(old, new, rest_o, rest_n, found, forbid, _identity(old, new, o, n))
    found += _pieces(old, new, o, n, found, forbid)
    same_text = {m.old for m in exact if old[m.old].compare == new[m.new].compare}
    home = _home(old, new, found)
    both = (units(old, o, score_form), units(new, n, score_form))
    traced = trace(old, new, o, n, {m.old: m.new for m in found}, same_text, score_form, home, both)
    fuzzy = {m.old for m in found if m.method == "fuzzy"}  # forced and word-for-word matches stand
    better = {i: v for i, v in (traced.better or {}).items() if i in fuzzy}
    if better:  # a look-alike won on stock wording (120.1c -> 810.8d): the piece with its text wins
        taken = {j for j, _ in better.values()}
        found = [m for m in found if m.old not in better and m.new not in taken]
        found += [Match(i, j, share, "traced", True) for i, (j, share) in sorted(better.items())]
        traced = trace(old, new, o, n, {m.old: m.new for m in found}, same_text, score_form, home, both)
    allowed = lambda i, j: (old[i].rule_id, new[j].rule_id) not in forbid  # noqa: E731
    found += [Match(i, j, share, "traced", True) for i, j, share in traced.continued if allowed(i, j)]
    extra = [Match(i, j, share, "split", share < 60) for i, j, share in traced.splits if allowed(i, j)]
    extra += [Match(i, j, share, "merge", share < 60) for i, j, share in traced.merges if allowed(i, j)]
    involved = {m.old for m in extra} | {m.new for m in extra}
    found += [m for m in _rewritten(old, new, o, n, found, forbid) if m.old not in involved and m.new not in involved]
    if not whole:
        return found, extra
    more, merged = _reworded(old, new, o, n, found, extra, both, home, allowed)
    found, extra = found + more, extra + merged
    found += _placed(old, new, o, n, found, extra, both, allowed)
    found += _gaps(old, new, o, n, found, extra, both, allowed)
    found += _in_section(old, new, o, n, found, extra, both, allowed)
    return _heads_continue(old, new, found, extra, both)


def _heads_continue(old, new, found, extra, both) -> tuple[list[Match], list[Match]]:
    """A rule merged into a rule that opens with its first sentence, of its own number or under the
    parent its parent became, continues into it; the rule that was taken to continue it, whose first
    sentence is not there, is the one merged (300.2 of July 2009 -> 300.2 of 2011, which absorbed
    301.5's artifact creatures; phasing 502.15a -> 702.23a). Only a scored pair is undone: a
    word-for-word or forced match stands."""
    uo, un = both
    primary = {m.new: m for m in found}
    parent_went = _parent_map(old, new, found)
    swaps = {}
    for m in extra:
        p = primary.get(m.new)
        if m.method != "merge" or p is None or p.method not in ("fuzzy", "traced") \
                or not (old[m.old].rule_id == new[m.new].rule_id
                        or parent_went.get(old[m.old].parent) == new[m.new].parent):
            continue
        head, mine, theirs = _lead(un.get(m.new)), _lead(uo.get(m.old)), _lead(uo.get(p.old))
        if head and mine and alike(mine, head) and not (theirs and alike(theirs, head)):
            swaps[m.new] = (m, p)
    if not swaps:
        return found, extra
    (old_words, old_idf, _), (new_words, _, _) = map(rule_words, both)
    undone = {id(x) for pair in swaps.values() for x in pair}
    found = [m for m in found if id(m) not in undone]
    extra = [m for m in extra if id(m) not in undone]
    for j, (m, p) in sorted(swaps.items()):
        a = old_words.get(p.old, frozenset())
        share = round(100 * _share(a & new_words.get(j, frozenset()), a, old_idf), 1)
        found.append(Match(m.old, j, m.score, "traced", True))
        extra.append(Match(p.old, j, share, "merge", True))
    return found, extra


def _lead(units_of):
    """A rule's first sentence (its head), or None."""
    return next((u for u in units_of or () if u.part == "lead"), None)


SECTION_PAIRS = 10_000  # ended x added rules of one section weighed at most (real: 72 at the most)


def _in_section(old, new, o, n, found, extra, both, allowed) -> list[Match]:
    """A rule rewritten inside its section: an ended rule and an added rule under the parent its
    parent became (where most of its siblings went), each keeping GAP_SHARE of the other's own words
    (508.4 -> 508.5 of 2011, moved after the rule that followed it and reworded). Pairs are taken
    best first, each rule once."""
    went = {m.old for m in found} | {m.old for m in extra}
    came = {m.new for m in found} | {m.new for m in extra}
    parent_went = _parent_map(old, new, found)
    ended, added = defaultdict(list), defaultdict(list)
    for i in o:
        if i not in went and not _is_piece(old[i]) and old[i].kind in ("rule", "subrule") \
                and old[i].parent in parent_went:
            ended[parent_went[old[i].parent]].append(i)
    for j in n:
        if j not in came and not _is_piece(new[j]) and new[j].kind in ("rule", "subrule"):
            added[new[j].parent].append(j)
    (old_words, old_idf, _), (new_words, new_idf, _) = map(rule_words, both)
    out = []
    for parent in sorted(ended):
        if len(ended[parent]) * len(added.get(parent, ())) > SECTION_PAIRS:
            continue  # the section was rewritten, not a rule of it: pairs by shared words say little
        pairs = []
        for i in ended[parent]:
            for j in added.get(parent, ()):
                share = _each_keeps(old_words.get(i, frozenset()), new_words.get(j, frozenset()), old_idf, new_idf)
                if share >= GAP_SHARE and allowed(i, j):
                    pairs.append((-share, i, j))
        taken = set()
        for _, i, j in sorted(pairs):
            if i not in taken and j not in taken:
                taken |= {i, j}
                out.append(Match(i, j, round(fuzz.ratio(score_form(_text(old[i])), score_form(_text(new[j]))), 1),
                                 "traced", True))
    return out


GAP_SHARE = 0.25  # of each rule's own words (by rarity) found in the other: a rule rewritten in its place


def _gaps(old, new, o, n, found, extra, both, allowed) -> list[Match]:
    """A rule rewritten between the same two neighbours: the rules before and after an ended rule
    went to two rules with exactly one added rule between them (110.5a -> 111.2 of 2020, a token's
    owner, under 110.5 -> 111.1). The place says it is the same rule, as a line of a diff between
    two unchanged lines; its words need only confirm it (a fair share of each rule's own words is in
    the other: a rule replaced by one on another subject keeps too few)."""
    went = {m.old: m.new for m in found}
    came = set(went.values()) | {m.new for m in extra}
    ended = {m.old for m in extra}
    at = {j: q for q, j in enumerate(n)}
    (old_words, old_idf, _), (new_words, new_idf, _) = map(rule_words, both)
    out = []
    for p in range(1, len(o) - 1):
        i, before, after = o[p], went.get(o[p - 1]), went.get(o[p + 1])
        if i in went or i in ended or before is None or after is None or at[after] - at[before] != 2:
            continue
        j = n[at[before] + 1]
        if j in came or _is_piece(old[i]) or _is_piece(new[j]) or not allowed(i, j) \
                or {old[i].kind, new[j].kind} - {"rule", "subrule"}:
            continue
        if _each_keeps(old_words.get(i, frozenset()), new_words.get(j, frozenset()), old_idf, new_idf) >= GAP_SHARE:
            out.append(Match(i, j, round(fuzz.ratio(score_form(_text(old[i])), score_form(_text(new[j]))), 1),
                             "traced", True))
    return out


def _placed(old, new, o, n, found, extra, both, allowed) -> list[Match]:
    """A rule rewritten at its place: an ended rule and an added rule at the same position (the same
    number, or the same letter under the rule its parent became: deathtouch 502.63a -> 702.2a) that
    speak of the same thing (a word of their section's title in both, or a word rare in the edition:
    what names the subject; never two rules each naming what the other lacks) are one rule, modified.
    The place is evidence the words alone cannot give; stock wording ("the active player gets
    priority", "subtypes") is not a subject."""
    went = {m.old for m in found} | {m.old for m in extra}
    came = {m.new for m in found} | {m.new for m in extra}
    ended = [i for i in o if i not in went and old[i].kind in ("rule", "subrule") and not _is_piece(old[i])]
    added = {new[j].rule_id: j for j in n if j not in came and new[j].kind in ("rule", "subrule")}
    if not ended or not added:
        return []
    parent_went = _parent_map(old, new, found)
    titles = _title_words(new)
    uo, un = both
    old_words, old_idf, _ = rule_words(uo)
    new_words, new_idf, _ = rule_words(un)

    def alike(i: int, j: int) -> bool:  # the smaller rule's own words (by rarity) are mostly in the other
        a, b = old_words.get(i, frozenset()), new_words.get(j, frozenset())
        shared = a & b
        return max(_share(shared, a, old_idf), _share(shared, b, new_idf)) >= PLACED_SHARE
    out = []
    for i in ended:
        r = old[i]
        target = parent_went.get(r.parent)
        candidates = [r.rule_id] + ([target + r.rule_id[len(r.parent):]]
                                    if target and r.rule_id.startswith(r.parent) else [])
        j = next((added[c] for c in candidates if c in added), None)
        if j is None or not allowed(i, j) or not alike(i, j) or \
                not _same_subject(uo.get(i, ()), un.get(j, ()), titles.get(new[j].parent, frozenset())):
            continue
        out.append(Match(i, j, round(fuzz.ratio(score_form(_text(r)), score_form(_text(new[j]))), 1), "traced", True))
        del added[new[j].rule_id]
    return out


PLACED_SHARE = 0.4  # of the smaller rule's own words (by rarity) a rewrite at the same place keeps


def _each_keeps(a: frozenset[str], b: frozenset[str], idf_a, idf_b) -> float:
    """How much of each rule's own words (by rarity) the other holds: the smaller of the two shares."""
    return min(_share(a & b, a, idf_a), _share(a & b, b, idf_b))


def _share(shared, words, idf) -> float:
    total = sum(idf.get(w, 0.0) for w in sorted(words))
    return sum(idf.get(w, 0.0) for w in sorted(shared)) / total if total else 0.0


def _parent_map(old, new, found) -> dict[str, str]:
    """old parent -> the new parent most of its matched rules went under; a parent none of whose
    rules matched goes to the new heading of the same title, when there is exactly one."""
    went = defaultdict(Counter)
    for m in found:
        went[old[m.old].parent][new[m.new].parent] += 1
    out = {p: c.most_common(1)[0][0] for p, c in went.items()}
    titles = defaultdict(list)
    for r in new:
        if r.kind in HEADINGS or (r.title and not r.text):
            titles[score_form(r.title)].append(r.rule_id)
    for r in old:
        if (r.kind in HEADINGS or (r.title and not r.text)) and r.rule_id not in out:
            same = titles.get(score_form(r.title), [])
            if len(same) == 1:
                out[r.rule_id] = same[0]
    return out


def _same_subject(a, b, subject: frozenset[str]) -> bool:
    """Two rules' sentences (Units) speak of the same thing: they share a word of the section's title
    or a word rare in the edition, and neither names something the other lacks."""
    a, b = ([u for u in x if u.part != "example"] for x in (a, b))  # the rule's text, not its examples
    words_a, words_b = (frozenset().union(*(u.words for u in x)) if x else frozenset() for x in (a, b))
    rare_a, rare_b = (frozenset().union(*(u.rare for u in x)) if x else frozenset() for x in (a, b))
    if (rare_a - words_b) and (rare_b - words_a):
        return False  # each names something the other does not: two rules
    shared = words_a & words_b
    return bool(shared & (subject | rare_a | rare_b))


def _reworded(old, new, o, n, found, extra, both, home, allowed) -> tuple[list[Match], list[Match]]:
    """What is still unexplained after tracing: rules rewritten beyond their characters and
    sentences, or absorbed into another rule under new wording, found by their rare words."""
    went = {m.old for m in found} | {m.old for m in extra}
    ended = [i for i in o if i not in went and not _is_piece(old[i])]
    if not ended:
        return [], []
    continuing = {m.new: None for m in extra if m.method == "split"} | {m.new: m.old for m in found}
    ended = [i for i in ended if old[i].kind in ("rule", "subrule")]  # rulings are not rule text
    free = [j for j in n if not _is_piece(new[j]) and new[j].kind in ("rule", "subrule")]
    went = {m.old: m.new for m in found}

    def placed(i: int, j: int) -> bool:  # at its number, or next to where a neighbour went (201.2c -> 201.2b)
        return old[i].rule_id == new[j].rule_id or went.get(i - 1) == j - 1 or went.get(i + 1) == j + 1
    continued, merges = reworded(old, new, ended, free, both, continuing, home, placed)
    return ([Match(i, j, share, "traced", True) for i, j, share in continued if allowed(i, j)],
            [Match(i, j, share, "merge", True) for i, j, share in merges if allowed(i, j)])


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


def word_similarity(a: list[str], b: list[str]) -> np.ndarray:
    """0-100 cosine similarity of the texts' content words, each weighted by its rarity in them."""
    vectors_a, vectors_b, _ = word_vectors(a, b)
    return (100 * (vectors_a @ vectors_b.T).toarray()).astype(np.float32)


def word_vectors(a: list[str], b: list[str]) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
    """The texts' content words as unit rows weighted by rarity (a's rows, b's rows), and each word's
    count of texts: `word_similarity` is 100 times their products, whole or a block of rows at a time."""
    rows = [sorted_words(content_words(t)) for t in a + b]
    # Columns numbered by first appearance, each text's words in sorted order: the sums below add
    # in that order, so it must not change.
    vocab = {w: k for k, w in enumerate(dict.fromkeys(chain.from_iterable(rows)))}
    cols = np.fromiter(map(vocab.__getitem__, chain.from_iterable(rows)), dtype=np.int64,
                       count=sum(map(len, rows)))
    df = np.bincount(cols, minlength=len(vocab)).astype(np.float32)
    idf = np.log((len(rows) + 1) / (df + 0.5)).astype(np.float32)
    indptr = np.cumsum([0] + [len(r) for r in rows])
    matrix = sparse.csr_matrix((idf[cols], cols, indptr), shape=(len(rows), max(len(vocab), 1)))
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A.ravel()
    matrix = sparse.diags(1 / np.where(norms > 0, norms, 1)) @ matrix
    return matrix[:len(a)], matrix[len(a):], df


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
    same_id = np.array([[old[i].rule_id == new[j].rule_id for j in n] for i in o], dtype=np.float32)
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


def _best_by_words(x: sparse.csr_matrix, y: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(rows of x, rows of y): each row of x with the CANDIDATES rows of y most like it (ties to the
    first), none that shares nothing; the products made BLOCK_CELLS at a time."""
    step = max(1, BLOCK_CELLS // max(1, y.shape[0]))
    y_t = y.T.tocsr()
    found_x, found_y = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for start in range(0, x.shape[0], step):
        product = (x[start:start + step] @ y_t).tocoo()
        order = np.lexsort((product.col, -product.data, product.row))
        row, col = product.row[order].astype(np.int64), product.col[order].astype(np.int64)
        keep = np.arange(len(row)) - np.searchsorted(row, row) < CANDIDATES  # its rank in its row
        found_x.append(row[keep] + start)
        found_y.append(col[keep])
    return np.concatenate(found_x), np.concatenate(found_y)


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


def _pair_words(vectors_a, vectors_b, rows, cols) -> np.ndarray:
    """`word_similarity` of the pairs (rows, cols), ordered by row, only: the same sums in the same order
    (a row's words in turn), a block of rows at a time."""
    out = np.zeros(len(rows), dtype=np.float32)
    step = max(1, BLOCK_CELLS // max(1, vectors_b.shape[0]))
    for start in range(0, vectors_a.shape[0], step):
        lo, hi = np.searchsorted(rows, [start, start + step])
        if lo == hi:
            continue
        wanted = np.unique(cols[lo:hi])
        block = (100 * (vectors_a[start:start + step] @ vectors_b[wanted].T).toarray()).astype(np.float32)
        out[lo:hi] = block[rows[lo:hi] - start, np.searchsorted(wanted, cols[lo:hi])]
    return out


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


def _pair_parent_bonus(old, new, o, n, anchors, pairs) -> np.ndarray:
    """`_parent_bonus` for the pairs (rows, cols) only."""
    went = defaultdict(Counter)
    for m in anchors:
        went[old[m.old].parent][new[m.new].parent] += 1
    totals = {p: sum(counts.values()) for p, counts in went.items()}
    share = [went[p][q] / totals[p] if p in totals else 0.0
             for p, q in ((old[o[r]].parent, new[n[c]].parent) for r, c in zip(*pairs))]
    return BONUS_PARENT * np.array(share, dtype=np.float32)


def _pair_neighbour_bonus(o, n, anchors, pairs) -> np.ndarray:
    """`_neighbour_bonus` for the pairs (rows, cols) only."""
    mapped = {m.old: m.new for m in anchors}
    out = np.zeros(len(pairs[0]), dtype=np.float32)
    for k, (r, c) in enumerate(zip(*pairs)):
        for step in (-1, 1):
            target = mapped.get(o[r] + step)
            if target is not None and target - step == n[c]:
                out[k] += BONUS_NEIGHBOUR
    return out


def _assign_sparse(pair, o, n, pairs, total) -> list[Match]:
    """`_assign` over acceptable pairs (rows, cols) given as lists: each group of rules linked by
    acceptable pairs is assigned on its own (the best assignment of the whole is the best of each
    group, and a runner-up is always in the group), the matches in old order as `_assign` gives them."""
    rows, cols = pairs
    if not len(rows):
        return []
    links = sparse.coo_matrix((np.ones(len(rows)), (rows, len(o) + cols)), shape=(len(o) + len(n),) * 2)
    group = connected_components(links, directed=False)[1][rows]
    order = np.argsort(group, kind="stable")
    out = []
    for members in np.split(order, np.flatnonzero(np.diff(group[order])) + 1):
        if len(members) == 1:  # one acceptable pair, no runner-up: most groups, made without a matrix
            k = members[0]
            score = float(total[k])
            out.append(Match(o[rows[k]], n[cols[k]], round(score, 1), "fuzzy", _review(score, 0.0)))
        else:
            out += _assign_group(pair, o, n, (rows[members], cols[members]), total[members])
    position = {i: r for r, i in enumerate(o)}
    return sorted(out, key=lambda m: position[m.old])


def _assign_group(pair, o, n, pairs, total) -> list[Match]:
    """`_assign` on one group of rules linked by acceptable pairs, as a full matrix of the group."""
    rows, at_row = np.unique(pairs[0], return_inverse=True)
    cols, at_col = np.unique(pairs[1], return_inverse=True)
    _bound(pair, len(rows), len(cols), "rules all alike (one group of candidates)")
    scores = np.zeros((len(rows), len(cols)), dtype=np.float32)
    eligible = np.zeros((len(rows), len(cols)), dtype=bool)
    scores[at_row, at_col] = total
    eligible[at_row, at_col] = True
    return _assign([o[r] for r in rows], [n[c] for c in cols], scores, eligible)


def _bound(pair, rows: int, cols: int, what: str) -> None:
    """Stop with a clear error before a full matrix of rows x cols would outgrow alignment's bound."""
    if rows * cols > MAX_DENSE_CELLS:
        old, new = (records[0].edition if records else "?" for records in pair)
        raise AlignmentTooLarge(f"aligning {old} with {new}: {rows:,} x {cols:,} {what} would need a matrix of "
                                f"{rows * cols:,} cells, over the bound of {MAX_DENSE_CELLS:,}")


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


PIECE_SAME_ID = 80  # how surely a partial record's words sit inside the whole record of its number


def _pieces(old, new, o, n, found, forbid) -> list[Match]:
    """A record that is only a piece of its rule (a copy that starts mid-rule, a file cut short, an
    example with no text before it) is matched by containment in the record of the same number."""
    taken_old, taken_new = {m.old for m in found}, {m.new for m in found}
    rest_o = [i for i in o if i not in taken_old]
    rest_n = [j for j in n if j not in taken_new]
    new_by_id = defaultdict(list)
    for j in rest_n:
        new_by_id[new[j].rule_id].append(j)
    out = []
    for i in rest_o:
        for j in new_by_id.get(old[i].rule_id, ()):
            a, b = old[i], new[j]
            if not (_is_piece(a) or _is_piece(b)) or j in taken_new or (a.rule_id, b.rule_id) in forbid:
                continue
            score = fuzz.partial_ratio(score_form(_full(a)), score_form(_full(b)))
            if score >= PIECE_SAME_ID:
                out.append(Match(i, j, round(score, 1), "fuzzy", True))
                taken_new.add(j)
                break
    return out


REWRITTEN = 45  # the words of a rule rewritten in place, under its number, between its neighbours


def _rewritten(old, new, o, n, found, forbid) -> list[Match]:
    """A rule rewritten under its own number: its words changed too much for the fuzzy match, but
    it keeps an example word for word, or it sits between the same neighbours and its words are
    still somewhat alike (903.5c of 2013 states the color identity rule the other way round)."""
    went = {m.old: m.new for m in found}
    taken = set(went.values())
    new_by_id = {new[j].rule_id: j for j in n if j not in taken and not _is_piece(new[j])}
    out = []
    for i in o:
        j = new_by_id.get(old[i].rule_id)
        if i in went or j is None or (old[i].rule_id, new[j].rule_id) in forbid or _is_piece(old[i]):
            continue
        same_example = bool(set(old[i].examples) & set(new[j].examples))
        in_place = went.get(i - 1) == j - 1 or went.get(i + 1) == j + 1
        score = fuzz.ratio(score_form(_text(old[i])), score_form(_text(new[j])))
        if same_example or (in_place and score >= REWRITTEN):
            out.append(Match(i, j, round(score, 1), "fuzzy", True))
            del new_by_id[new[j].rule_id]
    return out


def _is_piece(r: Rule) -> bool:
    return not r.compare or "partial" in r.flags or "truncated" in r.flags


def _assign(o, n, total, eligible) -> list[Match]:
    """Optimal one-to-one assignment over acceptable pairs only, on steep weights: a pair scoring
    100 is worth more than any number of pairs scoring 70, so it is never traded for them."""
    rows_ok = np.flatnonzero(eligible.any(axis=1))
    cols_ok = np.flatnonzero(eligible.any(axis=0))
    if not len(rows_ok):
        return []
    sub = total[np.ix_(rows_ok, cols_ok)].astype(np.float64)
    ok = eligible[np.ix_(rows_ok, cols_ok)]
    weights = np.where(ok, np.exp2((sub - 100.0) / STEEP), 0.0)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    out = []
    for r, c in zip(rows, cols):
        if not ok[r, c]:
            continue
        score = float(sub[r, c])
        runner_up = max(np.delete(sub[r], c).max(initial=0.0), np.delete(sub[:, c], r).max(initial=0.0))
        out.append(Match(o[rows_ok[r]], n[cols_ok[c]], round(score, 1), "fuzzy", _review(score, runner_up)))
    return out


def _review(score: float, runner_up: float) -> bool:
    return score < REVIEW or score - runner_up < CLOSE_RUNNER_UP


def _parent_bonus(old, new, o, n, anchors) -> np.ndarray:
    """Where did the other rules of this rule's parent go? A candidate under that parent gains."""
    went = defaultdict(Counter)
    for m in anchors:
        went[old[m.old].parent][new[m.new].parent] += 1
    bonus = np.zeros((len(o), len(n)), dtype=np.float32)
    code = {}
    new_parent = np.array([code.setdefault(new[j].parent, len(code)) for j in n], dtype=np.int64)
    rows = {}  # old parent -> its row of bonuses, made once for all its rules
    for r, i in enumerate(o):
        parent = old[i].parent
        if parent not in rows:
            counts = went.get(parent)
            if not counts:
                rows[parent] = None
                continue
            total = sum(counts.values())
            share = np.zeros(len(code), dtype=np.float32)
            for p, c in counts.items():
                if p in code:
                    share[code[p]] = c / total
            rows[parent] = BONUS_PARENT * share[new_parent]
        if rows[parent] is not None:
            bonus[r] = rows[parent]
    return bonus


def _neighbour_bonus(old, new, o, n, anchors) -> np.ndarray:
    """The rule before (or after) this one went to the rule before (or after) the candidate."""
    mapped = {m.old: m.new for m in anchors}
    col = {j: c for c, j in enumerate(n)}
    bonus = np.zeros((len(o), len(n)), dtype=np.float32)
    for r, i in enumerate(o):
        for step in (-1, 1):
            target = mapped.get(i + step)
            if target is not None and (target - step) in col:
                bonus[r, col[target - step]] += BONUS_NEIGHBOUR
    return bonus


def _forced(old, new, o, n, force) -> tuple[list[Match], set[int], set[int]]:
    if not force:
        return [], set(), set()
    old_ids = {old[i].rule_id: i for i in o}
    new_ids = {new[j].rule_id: j for j in n}
    found = [Match(old_ids[a], new_ids[b], 100.0, "override") for a, b in sorted(force)
             if a in old_ids and b in new_ids]
    return found, {m.old for m in found}, {m.new for m in found}


def _banned(old, new, o, n, forbid) -> np.ndarray:
    banned = np.zeros((len(o), len(n)), dtype=bool)
    if forbid:
        rows = {old[i].rule_id: r for r, i in enumerate(o)}
        cols = {new[j].rule_id: c for c, j in enumerate(n)}
        for a, b in forbid:
            if a in rows and b in cols:
                banned[rows[a], cols[b]] = True
    return banned


def _descendants(rules: list[Rule], idx: list[int]):
    """heading -> the records of `idx` under it: a part's chapters' rules, a chapter's rules, a
    section's subrules (an index built once, looked up per heading)."""
    by = defaultdict(list)
    for i in idx:
        rid = rules[i].rule_id
        chapter = rid.split(".")[0]
        if len(chapter) == 3:
            by[("part", rid[:1])].append(i)
            by[("chapter", chapter)].append(i)
        by[("section", rules[i].parent)].append(i)
    return lambda heading: by.get((heading.kind if heading.kind in ("part", "chapter") else "section",
                                   heading.rule_id), [])




def _became_rules(old, new, headings, body, went) -> list[Match]:
    """A section heading that became a rule with text (418.3 "Continuous Effects from Spells or
    Abilities" became 610.2 "A continuous effect may be generated by the resolution of a spell or
    ability."): most of its subrules went under that rule, and no old rule continues in it."""
    continued = {m.new for m in body if m.method in ONE_TO_ONE}
    new_by_id = {r.rule_id: j for j, r in enumerate(new) if _group(r) == "body"}
    kids_of = defaultdict(list)
    for k in went:
        kids_of[old[k].parent].append(k)
    out, used = [], set()
    for i in headings:
        if old[i].kind != "section":
            continue
        kids = kids_of.get(old[i].rule_id, [])
        parents = Counter(new[went[k]].parent for k in kids)
        if not parents:
            continue
        parent, count = parents.most_common(1)[0]
        j = new_by_id.get(parent)
        if j is not None and j not in continued and j not in used and count * 2 > len(kids):
            out.append(Match(i, j, round(100.0 * count / len(kids), 1), "fuzzy", True))
            used.add(j)
    return out


def _align_headings(old, new, o, n, body: list[Match], force, forbid) -> list[Match]:
    """A heading goes where its rules went; its title settles the rest. A heading whose rules went
    to a heading already taken was merged into it; a chapter that dissolved follows its first section."""
    found, forced_o, forced_n = _forced(old, new, o, n, force)
    o = [i for i in o if i not in forced_o]
    went = {m.old: m.new for m in body if m.method in ONE_TO_ONE}
    body_old = sorted(went)
    new_home = defaultdict(set)  # new body index -> the new headings that contain it
    kids_new, kids_old = _descendants(new, sorted(went.values())), _descendants(old, body_old)
    for j in n:
        for k in kids_new(new[j]):
            new_home[k].add(j)
    exact, o, free_n = _exact(old, new, o, [j for j in n if j not in forced_n], lambda r: (r.kind, r.compare))
    for m in exact:  # the same title is not enough when the heading's rules went elsewhere ("Spells")
        kids = kids_old(old[m.old])
        if kids and sum(m.new in new_home.get(went[k], ()) for k in kids) < 0.2 * len(kids):
            o.append(m.old)
            free_n.append(m.new)
        else:
            found.append(m)
    o.sort()
    if not o or not n:
        return found
    _bound((old, new), len(o), len(n), "headings")
    titles = process.cdist([score_form(old[i].compare) for i in o], [score_form(new[j].compare) for j in n],
                           scorer=fuzz.ratio, dtype=np.float32, workers=-1)
    col = {j: c for c, j in enumerate(n)}
    votes = np.zeros_like(titles)
    has_kids = np.zeros(len(o), dtype=bool)
    for r, i in enumerate(o):
        kids = kids_old(old[i])
        has_kids[r] = bool(kids)
        for k in kids:
            for j in new_home.get(went[k], ()):
                votes[r, col[j]] += 1 / len(kids)
    old_kind = np.array([old[i].kind for i in o], dtype=object)
    new_kind = np.array([new[j].kind for j in n], dtype=object)
    compatible = np.equal.outer(old_kind == "part", new_kind == "part")  # parts match parts; chapters and
    # sections match each other (212.2 "Artifacts" became 301)
    same_kind = np.equal.outer(old_kind, new_kind).astype(np.float32)
    total = np.minimum(60 * votes + 0.4 * titles + 10 * same_kind, 100.0)
    free = np.isin(np.array(n), np.array(free_n, dtype=int))
    allowed = compatible & free[None, :] & np.where(has_kids[:, None], votes >= 0.2, titles >= 80)
    total = np.where(allowed, total, 0.0)
    total[_banned(old, new, o, n, forbid)] = -1.0
    rows, cols = linear_sum_assignment(total, maximize=True)
    taken = set()
    for r, c in zip(rows, cols):
        if total[r, c] >= 40:
            found.append(Match(o[r], n[c], round(float(total[r, c]), 1), "fuzzy", bool(total[r, c] < 60)))
            taken.add(r)
    became = _became_rules(old, new, [i for r, i in enumerate(o) if r not in taken], body, went)
    found += became
    taken |= {r for r, i in enumerate(o) if i in {m.old for m in became}}
    merged = {}
    votes = np.where(compatible, votes, 0.0)
    for r in range(len(o)):
        if r not in taken and votes[r].max(initial=0) >= 0.5:
            c = int(votes[r].argmax())
            merged[o[r]] = n[c]
            found.append(Match(o[r], n[c], round(float(60 * votes[r, c] + 0.4 * titles[r, c]), 1), "merge", True))
    placed = {m.old: m.new for m in found}
    for r, i in enumerate(o):
        if r in taken or i in merged or old[i].kind != "chapter":
            continue
        head = next((k for k, h in enumerate(old) if h.rule_id == f"{old[i].rule_id}.1"), None)
        target = placed.get(head)
        if target is not None:
            chapter = new[target].rule_id.split(".")[0]
            home = next((c for c, j in enumerate(n) if new[j].rule_id == chapter and new[j].kind == "chapter"), None)
            if home is not None:
                found.append(Match(i, n[home], round(float(titles[r, home]), 1), "merge", True))
    return found


GLOSSARY_SUFFIX = re.compile(r"\s*\((?:obsolete|informal)\)\s*$")
GLOSSARY_RENAMED = 85  # a renamed term keeps its definition
GLOSSARY_DEFINITION = 70  # ... or most of it


def _align_glossary(old, new, o, n) -> list[Match]:
    """Terms match by name; then a renamed term by its definition ("Tribal" -> "Kindred", though
    the old name lives on as the pointer "Tribal (Obsolete)"); then a term that only became
    "(Obsolete)" or "(Informal)" keeps its lineage; then name and definition together."""
    found = _same_key(old, new, o, n, [], _name, "same")
    for strong in (GLOSSARY_RENAMED, GLOSSARY_DEFINITION):
        rest, free = _unmatched(o, n, found)
        if rest and free:
            _bound((old, new), len(rest), len(free), "glossary terms")
            defs = process.cdist([score_form(old[i].compare) for i in rest], [score_form(new[j].compare) for j in free],
                                 scorer=fuzz.ratio, dtype=np.float32, workers=-1)
            names = process.cdist([term_key(old[i].rule_id) for i in rest], [term_key(new[j].rule_id) for j in free],
                                  scorer=fuzz.ratio, dtype=np.float32, workers=-1)
            total = 0.7 * defs + 0.3 * names
            eligible = (defs >= strong) & (total >= ACCEPT)
            found += [replace(m, method="renamed")
                      for m in _assign(rest, free, np.where(eligible, total, 0.0), eligible)]
        if strong == GLOSSARY_RENAMED:  # "Damage Assignment Order" -> "Damage Assignment Order (Obsolete)"
            found = _same_key(old, new, o, n, found, term_key, "renamed")
            found = _same_key(old, new, o, n, found, _loose_key, "renamed")  # "State Triggers" -> "State Trigger"
    found += _name_extended(old, new, o, n, found)
    return found + _name_reworded(old, new, o, n, found)


def _loose_key(name: str) -> str:
    """Quotes, punctuation and plural endings aside: '"As Though"' is As Though, Turn Markers is Turn Marker."""
    return " ".join(w.rstrip("s") for w in re.findall(r"[a-z0-9]+", term_key(name)))


def _name_extended(old, new, o, n, found) -> list[Match]:
    """A term whose name grew or shrank by whole words ("Unblocked" -> "Unblocked Creature",
    "Respond, Response" -> "Respond"), when that pairing is the only one either side allows."""
    rest, free = _unmatched(o, n, found)
    words_o = {i: _loose_key(old[i].rule_id).split() for i in rest}
    words_n = {j: _loose_key(new[j].rule_id).split() for j in free}
    pairs = [(i, j) for i in rest for j in free if words_o[i] and words_n[j]
             and min(len(words_o[i]), len(words_n[j])) * 2 >= 2 and _prefix(words_o[i], words_n[j])]
    count_o, count_n = Counter(i for i, _ in pairs), Counter(j for _, j in pairs)
    return [Match(i, j, round(fuzz.ratio(old[i].compare, new[j].compare), 1), "renamed", True)
            for i, j in pairs if count_o[i] == 1 and count_n[j] == 1]


NAME_STOP = frozenset("a an the of from to on in into".split())
NAME_DEFINITION = 50  # a reworded name keeps some of its definition's words (token set ratio) ...
NAME_SAME_STEMS = 30  # ... fewer when only its endings changed (Ending the Turn -> End the Turn)


def _stems(name: str) -> frozenset[str]:
    """A name's words, endings aside: Ending/End, Flipping/Flip, Removed/Remove."""
    words = re.findall(r"[a-z]+", term_key(name))
    return frozenset(w for w in (re.sub(r"(?:ing|ed|s|y)$", "", w) for w in words if w not in NAME_STOP) if w)


def _common(a: frozenset[str], b: frozenset[str]) -> int:
    """Words of `a` with a counterpart in `b`, one the start of the other (Control/Controll,
    Depend/Dependenc; not Attack/Attach)."""
    return sum(any(x.startswith(y) or y.startswith(x) for y in b) for x in a)


def _name_reworded(old, new, o, n, found) -> list[Match]:
    """A term whose name was reworded (End of Turn Step -> End Step, Flip a Coin -> Flipping a Coin,
    State-Based Effects -> State-Based Actions): half the words of the two names in common,
    definitions alike in words, and each the other's best such pairing."""
    rest, free = _unmatched(o, n, found)
    stems_n = {j: _stems(new[j].rule_id) for j in free}
    scores = {}
    for i in rest:
        a = _stems(old[i].rule_id)
        for j in free:
            b = stems_n[j]
            common = _common(a, b)
            if a and b and 2 * common >= len(a) + len(b) - common:
                words = fuzz.token_set_ratio(score_form(old[i].compare), score_form(new[j].compare))
                same = common == len(a) == len(b)
                if words >= (NAME_SAME_STEMS if same else NAME_DEFINITION):
                    scores[(i, j)] = (common / (len(a) + len(b) - common), words)
    best_o, best_n = {}, {}
    for (i, j), score in scores.items():
        if score > scores.get((i, best_o.get(i)), (0, 0)):
            best_o[i] = j
        if score > scores.get((best_n.get(j), j), (0, 0)):
            best_n[j] = i
    return [Match(i, j, round(fuzz.ratio(old[i].compare, new[j].compare), 1), "renamed", True)
            for i, j in sorted(best_o.items()) if best_n.get(j) == i]


def _prefix(a: list[str], b: list[str]) -> bool:
    short, long = sorted((a, b), key=len)
    return len(short) < len(long) and long[:len(short)] == short


def _unmatched(o, n, found) -> tuple[list[int], list[int]]:
    taken_old, taken_new = {m.old for m in found}, {m.new for m in found}
    return [i for i in o if i not in taken_old], [j for j in n if j not in taken_new]


def _same_key(old, new, o, n, found, key, method) -> list[Match]:
    rest, free = _unmatched(o, n, found)
    by_key = defaultdict(list)
    for j in free:
        by_key[key(new[j].rule_id)].append(j)
    found = list(found)
    for i in rest:
        same = by_key.get(key(old[i].rule_id))
        if same:
            j = same.pop(0)
            score = 100.0 if old[i].compare == new[j].compare else round(fuzz.ratio(old[i].compare, new[j].compare), 1)
            found.append(Match(i, j, score, method, method != "same" and score < REVIEW))
    return found


_NAME_TERMS = tuple((a, b) for a, b in TERMINOLOGY if not a.startswith("play"))  # "Play" is still a term
_NAME_TERM_RE = re.compile(r"\b(?:" + "|".join(re.escape(a) for a, _ in _NAME_TERMS) + r")\b")


def _name(term: str) -> str:
    """A term's name for matching: case, quotes and wholesale renamings ("Leaves Play") do not count."""
    text = compare_form(term).lower().replace("?", "")
    return _NAME_TERM_RE.sub(lambda m: dict(_NAME_TERMS)[m.group()], text).strip()


def term_key(name: str) -> str:
    """The name without the (Obsolete)/(Informal) tags."""
    return GLOSSARY_SUFFIX.sub("", _name(name)).strip()
