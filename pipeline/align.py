"""Alignment: match every rule of one edition to its counterpart in another.

Cheapest first: same number and words; same words under a new number; then similarity
(rapidfuzz) with structural evidence (same parent after a chapter's move, neighbours that
moved the same way, the same number), assigned optimally (Hungarian algorithm, scipy) rather
than first-come greedy. Headings are matched afterwards, by where their rules went.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz, process
from scipy.optimize import linear_sum_assignment

from pipeline.patterns import NUMBER_IN_TEXT, TERMINOLOGY
from pipeline.records import Match, Rule

HEADINGS = ("part", "chapter", "section")
MIN_RATIO = 50  # below this the words are too different to be the same rule
ACCEPT = 62  # total score (words + evidence) needed to match
REVIEW = 80  # matches under this, or with a close runner-up, are marked for review
CLOSE_RUNNER_UP = 3
SPLIT_MERGE = 90  # partial similarity for a piece of one rule found inside another
BONUS_SAME_ID, BONUS_PARENT, BONUS_NEIGHBOUR = 5, 10, 5
_TERMS = dict(TERMINOLOGY)
_TERM_RE = re.compile(r"\b(?:" + "|".join(re.escape(old) for old, _ in TERMINOLOGY) + r")\b")


@lru_cache(maxsize=1 << 16)
def score_form(compare: str) -> str:
    """Lower case, rule numbers masked, wholesale terminology changes folded: for scoring only."""
    text = NUMBER_IN_TEXT.sub("#", compare.lower())
    return _TERM_RE.sub(lambda m: _TERMS[m.group()], text)


def _text(r: Rule) -> str:
    return r.compare + "".join(" " + e for e in r.examples) if r.kind not in HEADINGS else r.compare


def align(old: list[Rule], new: list[Rule], force: set[tuple[str, str]] = frozenset(),
          forbid: set[tuple[str, str]] = frozenset()) -> list[Match]:
    """Every old and every new record appears in exactly one Match (or a split/merge extra)."""
    matches: list[Match] = []
    for group in ("body", "headings", "glossary"):
        o = [i for i, r in enumerate(old) if _group(r) == group]
        n = [j for j, r in enumerate(new) if _group(r) == group]
        if group == "headings":
            found = _align_headings(old, new, o, n, matches, force, forbid)
        elif group == "glossary":
            found = _align_glossary(old, new, o, n)
        else:
            found = _align_body(old, new, o, n, force, forbid)
        matches += found
        matched_old = {m.old for m in found}
        matched_new = {m.new for m in found}
        matches += [Match(i, None, 0.0, "unmatched") for i in o if i not in matched_old]
        matches += [Match(None, j, 0.0, "unmatched") for j in n if j not in matched_new]
    return matches + _splits_and_merges(old, new, matches)


def _group(r: Rule) -> str:
    if r.kind in HEADINGS:
        return "headings"
    return "glossary" if r.kind == "glossary" else ("commentary" if r.kind == "commentary" else "body")


def _exact(old, new, o, n, text) -> tuple[list[Match], list[int], list[int]]:
    """Same number and words, then same words under another number (pairing repeats in order)."""
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
    still_o = []
    for i in rest_o:
        candidates = by_text.get(text(old[i]))
        if candidates:
            found.append(Match(i, candidates.pop(0), 100.0, "moved"))
        else:
            still_o.append(i)
    used_new |= {m.new for m in found}
    return found, still_o, [j for j in n if j not in used_new]


def _align_body(old, new, o, n, force, forbid) -> list[Match]:
    found, forced_o, forced_n = _forced(old, new, o, n, force)
    o = [i for i in o if i not in forced_o]
    n = [j for j in n if j not in forced_n]
    exact, o, n = _exact(old, new, o, n, _text)
    found += exact
    folded, o, n = _exact(old, new, o, n, lambda r: score_form(_text(r)))  # "his or her" -> "their"
    found += [Match(m.old, m.new, 100.0, "fuzzy") for m in folded]
    if not o or not n:
        return found
    a = [score_form(_text(old[i])) for i in o]
    b = [score_form(_text(new[j])) for j in n]
    ratio = process.cdist(a, b, scorer=fuzz.ratio, dtype=np.float32, workers=-1, score_cutoff=MIN_RATIO)
    same_id = np.array([[old[i].rule_id == new[j].rule_id for j in n] for i in o], dtype=np.float32) \
        if len(o) * len(n) <= 4_000_000 else np.zeros_like(ratio)
    banned = _banned(old, new, o, n, forbid)
    fuzzy: list[Match] = []
    for _ in range(2):  # round two knows where round one sent each parent and neighbour
        anchors = found + [m for m in fuzzy if m.score >= 85]
        bonus = BONUS_SAME_ID * same_id + _parent_bonus(old, new, o, n, anchors) \
            + _neighbour_bonus(old, new, o, n, anchors)
        total = np.where(ratio >= MIN_RATIO, np.minimum(ratio + bonus, 100.0), 0.0)
        total[banned] = -1.0
        fuzzy = _assign(o, n, ratio, total)
    return found + fuzzy


def _assign(o, n, ratio, total) -> list[Match]:
    rows, cols = linear_sum_assignment(total, maximize=True)
    out = []
    for r, c in zip(rows, cols):
        score = float(total[r, c])
        if score < ACCEPT or ratio[r, c] < MIN_RATIO:
            continue
        row = np.delete(total[r], c)
        col = np.delete(total[:, c], r)
        runner_up = max(row.max(initial=0.0), col.max(initial=0.0))
        review = score < REVIEW or score - runner_up < CLOSE_RUNNER_UP
        out.append(Match(o[r], n[c], round(score, 1), "fuzzy", review))
    return out


def _parent_bonus(old, new, o, n, anchors) -> np.ndarray:
    """Where did the other rules of this rule's parent go? A candidate under that parent gains."""
    went = defaultdict(Counter)
    for m in anchors:
        went[old[m.old].parent][new[m.new].parent] += 1
    bonus = np.zeros((len(o), len(n)), dtype=np.float32)
    new_parent = [new[j].parent for j in n]
    for r, i in enumerate(o):
        counts = went.get(old[i].parent)
        if not counts:
            continue
        total = sum(counts.values())
        share = np.array([counts.get(p, 0) / total for p in new_parent], dtype=np.float32)
        bonus[r] = BONUS_PARENT * share
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


def _descendants(rules: list[Rule], idx: list[int], heading: Rule) -> list[int]:
    rid = heading.rule_id
    if heading.kind == "part":
        return [i for i in idx if rules[i].rule_id[:1] == rid and len(rules[i].rule_id.split(".")[0]) == 3]
    if heading.kind == "chapter":
        return [i for i in idx if rules[i].rule_id.split(".")[0] == rid]
    return [i for i in idx if rules[i].parent == rid]


def _compatible(a: Rule, b: Rule) -> bool:
    """Parts match parts; chapters and sections match each other (212.2 "Artifacts" became 301)."""
    return (a.kind == "part") == (b.kind == "part")


def _align_headings(old, new, o, n, body: list[Match], force, forbid) -> list[Match]:
    """A heading goes where its rules went; its title settles the rest. A heading whose rules went
    to a heading already taken was merged into it; a chapter that dissolved follows its first section."""
    found, forced_o, forced_n = _forced(old, new, o, n, force)
    o = [i for i in o if i not in forced_o]
    exact, o, free_n = _exact(old, new, o, [j for j in n if j not in forced_n], lambda r: (r.kind, r.compare))
    found += exact
    if not o or not n:
        return found
    went = {m.old: m.new for m in body if m.old is not None and m.new is not None}
    body_old = sorted(went)
    new_home = defaultdict(set)  # new body index -> columns of the new headings that contain it
    new_body = sorted(went.values())
    for c, j in enumerate(n):
        for k in _descendants(new, new_body, new[j]):
            new_home[k].add(c)
    titles = process.cdist([score_form(old[i].compare) for i in o], [score_form(new[j].compare) for j in n],
                           scorer=fuzz.ratio, dtype=np.float32, workers=-1)
    votes = np.zeros_like(titles)
    has_kids = np.zeros(len(o), dtype=bool)
    for r, i in enumerate(o):
        kids = _descendants(old, body_old, old[i])
        has_kids[r] = bool(kids)
        for k in kids:
            for c in new_home.get(went[k], ()):
                votes[r, c] += 1 / len(kids)
    compatible = np.array([[_compatible(old[i], new[j]) for j in n] for i in o], dtype=bool)
    same_kind = np.array([[old[i].kind == new[j].kind for j in n] for i in o], dtype=np.float32)
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


def _align_glossary(old, new, o, n) -> list[Match]:
    """Terms match by name; a renamed term matches when its definition is word for word the same."""
    by_term = {new[j].rule_id.lower(): j for j in n}
    found, rest = [], []
    for i in o:
        j = by_term.pop(old[i].rule_id.lower(), None)
        if j is None:
            rest.append(i)
        else:
            found.append(Match(i, j, 100.0 if old[i].compare == new[j].compare else
                               round(fuzz.ratio(old[i].compare, new[j].compare), 1), "same"))
    by_text = {new[j].compare: j for j in by_term.values() if new[j].compare}
    for i in rest:
        j = by_text.pop(old[i].compare, None)
        if j is not None:
            found.append(Match(i, j, 100.0, "moved"))
    return found


def _splits_and_merges(old, new, matches: list[Match]) -> list[Match]:
    """An added rule whose words sit inside an old rule that lives on elsewhere is a split from
    it; a removed rule whose words sit inside a surviving new rule was merged into it."""
    pairs = [(m.old, m.new) for m in matches if m.old is not None and m.new is not None]
    body_old = [i for i, _ in pairs if _group(old[i]) == "body"]
    body_new = [j for _, j in pairs if _group(new[j]) == "body"]
    added = [m.new for m in matches if m.old is None and _group(new[m.new]) == "body"]
    removed = [m.old for m in matches if m.new is None and _group(old[m.old]) == "body"]
    extra = [Match(i, j, score, "split", True) for j, i, score in _contained(new, added, old, body_old)]
    extra += [Match(i, j, score, "merge", True) for i, j, score in _contained(old, removed, new, body_new)]
    return extra


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text) if len(w) > 3}


def _contained(pieces_from, pieces, wholes_from, wholes) -> list[tuple[int, int, float]]:
    """(piece, whole, score) where the piece's words are (nearly) all inside a longer whole.
    An inverted index finds the few candidates; rapidfuzz's partial_ratio confirms them."""
    index = defaultdict(set)
    forms = {k: score_form(wholes_from[k].compare) for k in wholes}
    for k, form in forms.items():
        for w in _words(form):
            index[w].add(k)
    out = []
    for p in pieces:
        piece = score_form(pieces_from[p].compare)
        words = _words(piece)
        if len(piece) <= 40 or len(words) < 4:
            continue
        overlap = Counter(k for w in words for k in index.get(w, ()))
        best = None
        for k, shared in overlap.most_common(5):
            if shared < 0.9 * len(words) or len(piece) >= 0.9 * len(forms[k]):
                continue
            score = fuzz.partial_ratio(piece, forms[k])
            if score >= SPLIT_MERGE and (best is None or score > best[1]):
                best = (k, score)
        if best:
            out.append((p, best[0], round(best[1], 1)))
    return out
