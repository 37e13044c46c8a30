"""How alignment scores: every named threshold of the alignment (match, trace, lineage), the form a
text is scored in, the evidence bonuses, and the steep one-to-one assignment.

The thresholds live here and only here: a ratio (0-100) is rapidfuzz's similarity of two texts in
score_form; a share (0-1) is the part of a rule's own words, each weighed by its rarity in the
edition, found in another. The values were set by hand on the archive's real steps: after changing
one, check the history against the hand-checked one (`python -m devtools accuracy`, docs/accuracy.md).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
from scipy import sparse
from pipeline.align.assignment import linear_sum_assignment  # not scipy.optimize: 0.07-0.15 s to import

from pipeline.errors import PipelineError
from pipeline.patterns import NUMBER_IN_TEXT, TERMINOLOGY
from pipeline.records import Match, Rule

# --- One-to-one matching of rules (body.py, fuzzy.py). A pair is acceptable on its words alone;
# evidence of place only ranks acceptable pairs, so a rule is never matched to its neighbour's text.
MIN_RATIO = 60  # the words alone must be this alike: evidence ranks candidates, it cannot make a match
ACCEPT = 62  # total score (words + evidence) needed to match: MIN_RATIO and a little evidence, or the words alone
STEEP = 4.0  # assignment weight 2 ** ((score - 100) / STEEP): a 100 outweighs any number of 70s
REVIEW = 80  # matches under this, or with a close runner-up, are marked for review
CLOSE_RUNNER_UP = 3  # ... a runner-up this close (in score points): the choice between them is a coin toss
# Evidence of place, added to the score of a candidate: the same number (weakest: numbers shift),
# under the parent its siblings went to (strongest: a chapter moved whole), next to where a neighbour went.
BONUS_SAME_ID, BONUS_PARENT, BONUS_NEIGHBOUR = 5, 10, 5
NEAR_COPY = 90  # a text this like another rule's ("Third, the active player gets priority." beside "Fourth, ...")
PIECE_SAME_ID = 80  # how surely a partial record's words sit inside the whole record of its number
REWRITTEN = 45  # the words of a rule rewritten in place, under its number, between its neighbours

# Bounds on what alignment holds at once. Real steps are far below them (the archive's largest fuzzy
# step: 508 x 957 rules); made-up or hostile editions of tens of thousands of reworded rules are not.
DENSE_CELLS = 2_000_000  # old x new rules scored as full matrices up to this; above, candidate pairs only
MAX_DENSE_CELLS = 16_000_000  # the largest full matrix made at all (~0.5 GB at the most); beyond, AlignmentTooLarge
BLOCK_CELLS = 4_000_000  # products of word vectors are made this many cells (rows x columns) at a time
RARE_DF = 100  # a word in at most this many texts of a step finds candidates: commoner words name nothing
CANDIDATES = 10  # per rule, the rules of the other edition sharing most of its rare words are scored
SECTION_PAIRS = 10_000  # ended x added rules of one section weighed at most (real: 72 at the most)

# --- Rules rewritten past their characters (body.py), found by the shares of their own words.
GAP_SHARE = 0.25  # of each rule's own words (by rarity) found in the other: a rule rewritten in its place
HUNK = 3  # ... between two neighbours that went to neighbours with at most this many rules between, either side
PLACED_SHARE = 0.4  # of the smaller rule's own words (by rarity) a rewrite at the same place keeps
REST_WORDS = 0.6  # of an added rule's words in what the old rule before it lost: the rest of that rule
LEAD_KEEPS = 0.6  # of each first sentence's own words (by rarity) the other holds: the same opening, reworded
RESEMBLES = 70  # an added rule this like an old one was probably written on its model (noted, not matched)
RESEMBLE_CANDIDATES = 10  # per added rule, the old rules sharing most of its words compared for that
FROM_GLOSSARY = 0.5  # of an added rule's own text (by weight) found in what one glossary entry lost

# --- Headings (headings.py).
SAME_TITLE = 90  # title ratio of a chapter that became a part of that title (217 "Zones" -> 4 in July 2009)

# --- Glossary terms (glossary.py): by name, then by definition.
GLOSSARY_RENAMED = 85  # a renamed term keeps its definition
GLOSSARY_DEFINITION = 70  # ... or most of it
NAME_DEFINITION = 50  # a reworded name keeps some of its definition's words (token set ratio) ...
NAME_SAME_STEMS = 30  # ... fewer when only its endings changed (Ending the Turn -> End the Turn)

# --- Sentence tracing (trace.py): where the text of a rule went, sentence by sentence.
SAME_SENTENCE = 75  # ratio for a reworded sentence (long sentences; short ones need SHORT_SENTENCE)
SHORT_SENTENCE = 88  # ... a sentence of fewer than SHORT_WORDS words: one word changed is a large part of it
SHORT_WORDS = 8
CONTAINED = 90  # partial ratio for a piece of a sentence found inside a longer one
MIN_PIECE_WORDS = 5  # ... a piece at least this long: a shorter one is found inside too many sentences
VERBATIM = 97  # a piece one word shorter than MIN_PIECE_WORDS counts only when it is there word for word
RARE_IN = 3  # a word in at most this many rules (and 1% of them) names something: a keyword, a card type
SENTENCE_CANDIDATES = 6  # per sentence, the old (or new) sentences sharing the most rare words
# Tracing looks up every word an unexplained sentence shares with the others. Real steps leave at most a
# few thousand sentences unexplained (the archive's most: 797 old x 1,360 new); made-up or hostile
# editions of thousands of reworded rules leave all of them, and the words every sentence uses would
# make that quadratic.
FLOW_EXACT = 4_000_000  # old x new unexplained sentences searched through all their words up to this ...
COMMON_SENTENCES = 50  # ... above, a word in more old sentences than this finds no candidates (it names nothing)
MIN_FLOW = 3.0  # about three words of a rule's own text: less is not evidence of anything ...
WHOLE = 0.8  # ... unless it is (nearly) all of a short rule, old or new (and not boilerplate: half of that at least)
LOOK_ALIKE = 0.1  # a split piece holding this much more of a rule's text than its match is its successor
SHARE = 0.3  # part of a rule's own text that must have gone (or come) for a split or merge to count
# Rules rewritten so far that neither their characters nor their sentences match (101.4 -> 103.4 in
# July 2009, 711.4 -> 712.8 in 2025), and text absorbed into another rule under new wording
# (203.1d -> 202.1b), still keep their words: what names things, weighed by rarity.
REWORDED = 0.75  # share of an ended rule's own words (by rarity) found in one new rule ...
REWORDED_BACK = 0.5  # ... and of that new rule's words found in it, for the new rule to continue it
CUT_SHARE, CUT_BACK = 0.25, 0.9  # ... or a new rule made of nothing else: a cut-down of it
PLACED, PLACED_BACK = 0.6, 0.15  # ... or a new rule where the ended rule sat (its number, its neighbours)
ABSORBED = 0.8  # share of an ended rule's words found in a rule that continues another: merged into it ...
KEPT_WORDS = 0.6  # ... or, with a sentence of it new there (alike), this share of its words (by rarity)
GAINED = 0.1  # ... when this share of them was not in that rule's own predecessor already
HELD_WORDS = 1.5  # the two share the weight of one and a half of the edition's rarest words at least
RAREST = 5  # candidates share one of the ended rule's rarest words
BOILERPLATE = 3  # a sentence printed in this many rules says nothing of which rule it is

# --- Lineages (lineage.py).
QUOTE_MATCH = 85  # how closely commentary must quote a rule to be linked to it by its words

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
    from scipy.sparse.csgraph import connected_components  # here: 0.08 s to import, for large steps only
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


def _banned(old, new, o, n, forbid) -> np.ndarray:
    banned = np.zeros((len(o), len(n)), dtype=bool)
    if forbid:
        rows = {old[i].rule_id: r for r, i in enumerate(o)}
        cols = {new[j].rule_id: c for c, j in enumerate(n)}
        for a, b in forbid:
            if a in rows and b in cols:
                banned[rows[a], cols[b]] = True
    return banned
