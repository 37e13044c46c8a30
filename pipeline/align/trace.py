"""Sentence tracing: where did the text of a rule go, and where did a new rule's text come from?

Alignment pairs rules one to one. What it cannot see is a rule cut in pieces (212.9d became
306.5, 306.5a-c, 306.9 and 306.10), two rules joined (212.6a and 212.6b became 305.1), or a
sentence moved from one rule to another. Tracing looks only at text that one-to-one matching
left unexplained: every sentence of an unmatched rule, and the sentences a matched rule lost
(or gained) on the way. Each such sentence is weighted by how rare its words are in its
edition, so boilerplate ("The active player gets priority.", "See rule 704.") weighs next to
nothing, and a new rule written on the model of an old one that still exists unchanged has no
unexplained old text to come from: it is added, not split.
"""
from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat

from rapidfuzz import fuzz

from pipeline.ingest.clean import compare_form
from pipeline.records import Rule
from pipeline.align.scoring import (ABSORBED, BOILERPLATE, COMMON_SENTENCES, CONTAINED, CUT_BACK, CUT_SHARE, FLOW_EXACT,
                                    GAINED, HELD_WORDS, KEPT_WORDS, LOOK_ALIKE, MIN_FLOW, MIN_PIECE_WORDS, PLACED,
                                    PLACED_BACK, RARE_IN, RAREST, REWORDED, REWORDED_BACK, SAME_SENTENCE,
                                    SENTENCE_CANDIDATES, SHARE, SHORT_SENTENCE, SHORT_WORDS, VERBATIM, WHOLE)

WORD = re.compile(r"[a-z][a-z'’-]+")
# Ordinals name a place in a sequence ("Third, the active player gets priority."), not a subject: a
# step inserted before renumbers them, and the place is weighed as structure.
ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()
STOP = frozenset("the a an of to and or in on is are be it its that this with for as by any each if may "
                 "can can't from has have was were which who their they them his her he she one rule see "
                 "rules player players".split() + ORDINALS)


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence of one rule, in scoring form, with its weight in its edition."""

    rule: int  # index into the edition's record list
    text: str
    words: frozenset[str]
    weight: float
    rare: frozenset[str] = frozenset()  # words found in very few rules of the edition: names, mostly
    part: str = "text"  # "lead" (the rule's first sentence or clause: its head), "text", or "example"


SENTENCE_END = re.compile(r"(?<=[.!?])[\"”)]*\s+(?=[\"“(]?[A-Z0-9])|\n+")


def sentences(r: Rule, form) -> list[str]:
    """The rule's sentences (not its examples), in scoring form. Records made without spaCy (tests,
    other tools) are split at sentence ends."""
    return list(_sentences(r.sentences, r.compare, form))


@lru_cache(maxsize=1 << 17)
def _sentences(parts: tuple[str, ...], compare: str, form) -> tuple[str, ...]:
    """Cached by the record's words: most rules recur unchanged in every edition and every pair."""
    parts = parts or SENTENCE_END.split(compare)
    return tuple(s for s in (form(compare_form(p)) for p in parts) if s.strip())


def units(rules: list[Rule], idx, form) -> dict[int, list[Unit]]:
    """Every sentence of every rule, weighted by the rarity of its words in the edition; a sentence
    printed word for word in several rules (boilerplate) shares its weight among them. The result is
    shared (read it, never change it): each edition is the new side of one pair and the old side of
    the next, so its units are made once, by what they are made of."""
    return _units(tuple((i, rules[i].sentences, rules[i].compare, rules[i].examples) for i in idx), form)


CLAUSE = re.compile(r"(?<=[;:])\s+|\s+(?=\((?:\d{1,2}[a-z]?|[a-h])\)\s)")  # "...; they can also", ": (1) Effects"


def clauses(sentence: str) -> list[str]:
    """A long sentence's clauses (at semicolons, colons and enumerations "(1)", "(a)"): a rule cut in
    pieces is often cut there (217.1c's seven exceptions became 400.7a-g). Each clause of five words
    or more stands alone; a shorter one stays joined to the clause before it."""
    out, start = [], 0
    cuts = [m for m in CLAUSE.finditer(sentence)
            if sentence.count("(", 0, m.start()) == sentence.count(")", 0, m.start())]  # not inside parentheses
    pieces = []
    for m in cuts:
        pieces.append(sentence[start:m.start()])
        start = m.end()
    pieces.append(sentence[start:])
    for piece in pieces:
        if out and len(piece.split()) < MIN_PIECE_WORDS:
            out[-1] += " " + piece
        elif piece.strip():
            out.append(piece)
    return out or [sentence]


@lru_cache(maxsize=8)  # a pair's body and glossary, old and new, and the glossary passes' sets: none made twice
def _units(content: tuple, form) -> dict[int, list[Unit]]:
    texts, parts_of = {}, {}
    for i, sentence_parts, compare, examples in content:
        texts[i], parts_of[i] = _rule_units(sentence_parts, compare, examples, form)
    df = _document_frequency(texts)
    idf = _idf(df, len(texts))
    rare = {w for w, c in df.items() if c <= min(RARE_IN, len(texts) / 100)}
    copies = Counter(s for parts in texts.values() for s in set(parts))
    made = {}  # sentence -> its Unit fields: boilerplate recurs, its weight is summed once
    for s in copies:
        w = content_words(s)
        made[s] = (w, weight(w, idf) / copies[s], w & rare)
    return {i: [Unit(i, s, *made[s], part) for s, part in zip(parts, parts_of[i])] for i, parts in texts.items()}


@lru_cache(maxsize=1 << 16)
def _rule_units(sentence_parts: tuple[str, ...], compare: str, examples: tuple[str, ...], form) -> tuple[tuple, tuple]:
    """A rule's sentences cut into clauses, then its examples, and the part each is: cached by the
    record's words, as most rules recur unchanged in every edition."""
    said = [c for s in _sentences(sentence_parts, compare, form) for c in clauses(s)]
    shown = [e for e in (form(compare_form(e)) for e in examples) if e.strip()]
    return tuple(said + shown), ("lead",) * bool(said) + ("text",) * (len(said) - 1) + ("example",) * len(shown)


@lru_cache(maxsize=1 << 16)
def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in WORD.findall(text) if w not in STOP and len(w) > 2)


@lru_cache(maxsize=1 << 17)
def sorted_words(words: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(words))


@lru_cache(maxsize=1 << 17)
def _rule_content_words(parts: tuple[str, ...]) -> frozenset[str]:
    """The content words of a rule's sentences, cached: most rules recur from pair to pair."""
    return frozenset().union(*map(content_words, parts))


def _document_frequency(texts: dict[int, list[str]]) -> Counter:
    """In how many rules each word is."""
    df = Counter()
    for parts in texts.values():
        df.update(_rule_content_words(tuple(parts)))
    return df




def _idf(df: Counter, rules: int) -> dict[str, float]:
    n = max(rules, 1)
    full = math.log((n + 1) / (max(1.0, n / 20) + 0.5))
    return {w: min(1.0, math.log((n + 1) / (c + 0.5)) / full) for w, c in df.items()}


def weight(words: frozenset[str], idf: dict[str, float]) -> float:
    """About one per word, less for common words: the amount of a rule's own text."""
    ordered = sorted_words(words)  # sorted: float sums must not follow hash order
    return sum(map(idf.get, ordered, repeat(0.0, len(ordered))))


def likeness(a: Unit, b: Unit, inside: bool = False) -> float:
    """How surely `a` and `b` are the same sentence (perhaps reworded) or one is a piece of the
    other: a score over 100 when alike, 0 when not. With `inside`, only `a` may be the piece
    (a sentence kept whole inside a longer one is kept)."""
    short = min(len(a.words), len(b.words))
    if short == 0:
        return 0.0
    if (a.rare - b.words) and (b.rare - a.words):
        return 0.0  # the same pattern about two different things: "Decayed represents..." / "Hideaway represents..."
    return _text_likeness(a.text, b.text, short, inside)


@lru_cache(maxsize=1 << 18)
def _text_likeness(a: str, b: str, short: int, inside: bool) -> float:
    """likeness by the texts alone. Cached: boilerplate sentences recur in many rules, and a pair
    traced twice (after a look-alike lost its match) compares the same sentences again."""
    # Each score asked only whether it reaches its threshold (score_cutoff: 0 below it, and most pairs
    # compared are not alike, so rapidfuzz stops early).
    ratio = fuzz.ratio(a, b, score_cutoff=SHORT_SENTENCE if short < SHORT_WORDS else SAME_SENTENCE)
    if ratio:
        return 100.0 + ratio
    if short < MIN_PIECE_WORDS - 1 or (inside and len(a) > len(b)):
        return 0.0
    partial = fuzz.partial_ratio(a, b, score_cutoff=CONTAINED if short >= MIN_PIECE_WORDS else VERBATIM)
    if partial:  # shorter pieces: word for word
        return partial
    # A reworded piece inside a longer sentence: nearly all of the shorter one's words are there.
    return fuzz.token_set_ratio(a, b, score_cutoff=CONTAINED) if short >= SHORT_WORDS else 0.0


def alike(a: Unit, b: Unit, inside: bool = False) -> bool:
    return likeness(a, b, inside) > 0


def unexplained(mine: list[Unit], theirs: list[Unit]) -> list[Unit]:
    """My sentences that have no counterpart among theirs (what a matched rule lost or gained). A whole
    sentence is the counterpart of one sentence: of two of mine alike only to the same one of theirs (two
    sentences on one template, "... could cast a sorcery" and "... could cast an instant", of which the
    rule kept one), the less alike has none (403.5 of May 2009: its instant sentence went to 602.5e)."""
    same = {t.text: m for m, t in enumerate(theirs)}
    none, whole, taken = set(), [], set()
    for k, u in enumerate(mine):
        if u.weight <= 0:
            continue
        if u.text in same:  # kept word for word (most sentences): its counterpart is taken
            taken.add(same[u.text])
            continue
        scores = [likeness(u, t, inside=True) for t in theirs]
        if not any(scores):
            none.add(k)
        elif all(x == 0 or x > 100 for x in scores):  # alike as whole sentences only, never as a piece
            whole += [(-x, k, m) for m, x in enumerate(scores) if x]
    placed = set()
    for _, k, m in sorted(whole):
        if k not in placed and m not in taken:
            placed.add(k)
            taken.add(m)
    none |= {k for _, k, _ in whole} - placed
    return [u for k, u in enumerate(mine) if k in none]


def _word_index(units_of: list[Unit], most: int | None = None) -> dict[str, list[int]]:
    """word -> the sentences (positions in `units_of`) that have it; with `most`, only the words that
    at most that many sentences have."""
    index = defaultdict(list)
    for k, u in enumerate(units_of):
        for w in u.words:
            index[w].append(k)
    if most is None:
        return index
    return {w: found for w, found in index.items() if len(found) <= most}


def flows(old_units: list[Unit], new_units: list[Unit], home=lambda i, j: False) -> "Flows":
    """(old rule, new rule) -> weight of the text that went from one to the other. Each new
    sentence came from its best old counterpart; an old sentence went to its best new counterpart,
    unless it was cut in pieces (302.4a and 302.4b are both pieces of one sentence of 212.3d).
    So a new rule that copies a sentence's pattern (a keyword written on the model of another)
    does not take it from the rule that really got it. Candidates come from an index of rare
    words, so the cost follows the unexplained text, not the edition (past FLOW_EXACT, words most
    sentences use find none)."""
    large = len(old_units) * len(new_units) > FLOW_EXACT
    index = _word_index(old_units, COMMON_SENTENCES if large else None)
    sizes = [len(u.words) for u in old_units]
    best_of_new = {}
    for m, b in enumerate(new_units):
        if b.weight <= 0:
            continue
        shared = Counter(chain.from_iterable(index[w] for w in b.words if w in index))
        if large:  # found by their less common words, counted by all of them
            shared = {k: len(old_units[k].words & b.words) for k in shared}
        best = (0.0, -1)
        # Best covered first: a short old sentence wholly inside b beats a long one sharing more words.
        # Under half covered is never a candidate: those are left out before ranking, not after.
        cover = {k: c for k, count in shared.items() if (c := count / min(sizes[k], len(b.words))) >= 0.5}
        for k in heapq.nsmallest(SENTENCE_CANDIDATES, cover, key=lambda k: (-cover[k], -shared[k], k)):
            best = max(best, (likeness(old_units[k], b), -k))
        if best[0] > 0:
            best_of_new[m] = (-best[1], best[0])
    best_of_old: dict[int, tuple] = {}  # old sentence -> (score, at home, new sentence) it went to whole
    for m, (k, score) in sorted(best_of_new.items()):
        key = (score, home(old_units[k].rule, new_units[m].rule))
        if not _piece_of(new_units[m], old_units[k], score) and key > best_of_old.get(k, (0.0, False, -1))[:2]:
            best_of_old[k] = (*key, m)
    out: dict[tuple[int, int], float] = defaultdict(float)
    text: dict[tuple[int, int], float] = defaultdict(float)  # without examples: what decides a successor
    leads = set()  # (old, new) where the old rule's first sentence went: its head
    for m, (k, score) in sorted(best_of_new.items()):
        a, b = old_units[k], new_units[m]
        if _piece_of(b, a, score) or best_of_old[k][2] == m:  # a whole sentence goes to one place only
            out[(a.rule, b.rule)] += min(a.weight, b.weight)
            if a.part != "example" and b.part != "example":
                text[(a.rule, b.rule)] += min(a.weight, b.weight)
            if a.part == "lead" and (score > 100 or 2 * len(b.text) >= len(a.text)):  # the head, not a scrap of it
                leads.add((a.rule, b.rule))
    return Flows(dict(out), dict(text), leads)


@dataclass(frozen=True, slots=True)
class Flows:
    """(old rule, new rule) -> weight of the text that went from one to the other: all of it (examples
    too: a piece or a merge may be made of an example), the rules' text alone (which decides a
    successor), and the pairs where the old rule's first sentence went."""

    all: dict
    text: dict
    leads: set


def _piece_of(b: Unit, a: Unit, score: float) -> bool:
    """`b` is a part of the longer `a` (not the same sentence)."""
    return score <= 100 and len(b.text) < len(a.text)


@dataclass(frozen=True, slots=True)
class Traced:
    """What tracing found: continuations (old, new, share), split pieces and merges (old, new, share)."""

    continued: list[tuple[int, int, float]]
    splits: list[tuple[int, int, float]]
    merges: list[tuple[int, int, float]]
    better: dict = None  # old -> (a split piece holding more of its text than its match, share)


def trace(old: list[Rule], new: list[Rule], o: list[int], n: list[int], primary: dict[int, int],
          exact: set[int], form, home=lambda i, j: False, sentences_of: tuple | None = None) -> Traced:
    """`primary` maps old -> new for the one-to-one matches; `exact` holds the old rules whose text
    came through word for word (nothing lost, nothing gained); `home(i, j)` says whether new rule j
    sits where old rule i's neighbours went (it settles ties between identical pieces);
    `sentences_of` is (units(old), units(new)) when the caller has them already."""
    uo, un = sentences_of or (units(old, o, form), units(new, n, form))  # the same for every call on a pair
    back = {j: i for i, j in primary.items()}
    pool_old, pool_new = [], []
    for i in o:
        j = primary.get(i)
        pool_old += uo[i] if j is None else ([] if i in exact else unexplained(uo[i], un[j]))
    for j in n:
        i = back.get(j)
        pool_new += un[j] if i is None else ([] if i in exact else unexplained(un[j], uo[i]))
    own_old = {i: sum(u.weight for u in uo[i]) or 1.0 for i in o}
    own_new = {j: sum(u.weight for u in un[j]) or 1.0 for j in n}
    found = flows(pool_old, pool_new, home)
    flow = {k: f for k, f in found.all.items()
            if f >= MIN_FLOW or (f >= WHOLE * min(own_new[k[1]], own_old[k[0]]) and f >= MIN_FLOW / 2)}
    text = {k: found.text.get(k, 0.0) for k in flow}
    said_old = {i: sum(u.weight for u in uo[i] if u.part != "example") or 1.0 for i in o}
    said_new = {j: sum(u.weight for u in un[j] if u.part != "example") or 1.0 for j in n}
    traced = _decide(flow, text, found.leads, dict(primary), (own_old, own_new), (said_old, said_new), home)
    lost = defaultdict(float)
    for u in pool_old:
        if u.part != "example":
            lost[u.rule] += u.weight
    kept = {i: said_old[i] - lost[i] for i in primary if i not in exact}
    better = {}  # a look-alike took the match on stock wording; the real successor got the text
    for i, j, _ in traced.splits:
        if i in kept and text[(i, j)] > kept[i] + LOOK_ALIKE * said_old[i]:
            if text[(i, j)] > better.get(i, (None, 0.0))[1]:
                better[i] = (j, _pct(text[(i, j)], said_old[i]))
    return Traced(traced.continued, traced.splits, traced.merges, better)


def _decide(flow, text, leads, primary, own, said, home) -> Traced:
    """A rule with no successor continues into the piece that received its first sentence (its head),
    else the one that received most of its text (examples aside); other pieces are splits; a rule
    that ended inside a surviving rule was merged into it. `own` and `said`: each rule's weight, old
    and new, with and without its examples."""
    own_old, own_new = own
    said_old, said_new = said
    back = {j: i for i, j in primary.items()}
    said_by = defaultdict(float)
    for (i, _), f in text.items():
        said_by[i] += f
    # What decides a successor: the text, or the examples of a rule none of whose text went anywhere
    # (a rule rewritten at its number keeps its example word for word: 903.5c of 2013).
    decisive = {k: (text[k], said_old[k[0]], said_new[k[1]]) if said_by[k[0]] else (f, own_old[k[0]], own_new[k[1]])
                for k, f in flow.items()}
    best_of = {}  # old rule -> the new rule that received its head, else most of its text (at home, of equals)
    for (i, j), (f, _, _) in sorted(decisive.items()):
        key = ((i, j) in leads and f > 0, round(f, 3), home(i, j))
        if key > best_of.get(i, (False, 0.0, False, None))[:3]:
            best_of[i] = (*key, j)
    continued = []
    # The old rule that lives most wholly in a new rule continues in it (a short rule kept whole
    # beats a long one that gave it a sentence); then the larger flow.
    for (i, j), (f, whole_old, whole_new) in sorted(decisive.items(), key=lambda x: (-round(x[1][0] / x[1][1], 2),
                                                                                    -x[1][0], x[0])):
        if i in primary or j in back or best_of[i][3] != j:
            continue
        if f >= SHARE * whole_new or f >= SHARE * whole_old:
            continued.append((i, j, _pct(f, whole_old)))
            primary[i], back[j] = j, i
    splits, merges = [], []
    for (i, j), f in sorted(flow.items()):
        if primary.get(i) == j:
            continue
        if back.get(j) is None and f >= SHARE * own_new[j]:
            splits.append((i, j, _pct(f, own_new[j])))  # a new rule made (mostly) of this old rule's text
        elif i not in primary and j in back and f >= SHARE * own_old[i]:
            merges.append((i, j, _pct(f, own_old[i])))  # an ended rule's text lives on in this one
    return Traced(continued, splits, merges)


def _pct(part: float, whole: float) -> float:
    return round(min(100.0, 100.0 * part / whole), 1)


def reworded(old: list[Rule], new: list[Rule], ended: list[int], n: list[int], sentences_of: tuple,
             continuing: dict[int, int | None], home=lambda i, j: False,
             placed=lambda i, j: False) -> tuple[list, list]:
    """(continued, merges) for rules that ended with nothing traced: each (old, new, share).
    `continuing` maps each new rule that continues an old one (or is a split piece: None) to it. A
    new rule no old rule continues takes the ended rule whose words it holds, when it also consists
    mostly of them, or is a cut-down of it made of nothing else (less of both when it sits where
    the ended rule sat: its number, or next to where its neighbour went); a rule that continues
    another takes it as merged when it holds nearly all of it and got those words from it, not
    from its own predecessor (stock wording both rules had). Words of boilerplate sentences do not
    count, and two rules naming different things (rare words each side lacks) are never paired."""
    uo, un = sentences_of
    old_words, old_idf, old_rare = rule_words(uo)
    new_words, new_idf, new_rare = rule_words(un)
    index = defaultdict(set)
    for j in n:
        for w in new_words.get(j, ()):
            index[w].add(j)
    least = _least(uo)
    proposals, size = [], {}
    for i in ended:
        mine = old_words.get(i)
        own = _sum(mine, old_idf) if mine else 0.0
        if own < least:
            continue
        for j in sorted(set().union(*(index.get(w, ()) for w in _needed(mine, old_idf, least)))):
            theirs = new_words[j]
            if (old_rare.get(i, frozenset()) - theirs) and (new_rare.get(j, frozenset()) - mine):
                continue
            shared = mine & theirs
            held = _sum(shared, old_idf)
            if held < least:
                continue
            if j not in size:
                size[j] = _sum(theirs, new_idf) or 1.0
            back = _sum(shared, new_idf) / size[j]
            proposals.append((-round(held / own, 3), j in continuing, not home(i, j), -round(back, 3), i, j))
    continued, done, taken = [], set(), set()
    for share, merge, _, minus_back, i, j in sorted(proposals):
        if merge or i in done or j in taken:
            continue
        strong = -share >= REWORDED and -minus_back >= REWORDED_BACK
        cut = -share >= CUT_SHARE and -minus_back >= CUT_BACK  # "Horsemanship is an evasion ability [that ...]"
        if strong or cut or (-share >= PLACED and -minus_back >= PLACED_BACK and placed(i, j)):
            continued.append((i, j, _pct(-share, 1.0)))
            done.add(i)
            taken.add(j)
    # A rule that just took an ended rule can take another as merged (107.13, the sun symbol, into
    # 711.1a), on the same terms as any rule that continues another.
    continuing = continuing | {j: i for i, j, _ in continued}
    merges = []
    for i, j, share in _absorbed(old_words, old_idf, new_words, [p[4:] for p in sorted(proposals)], continuing):
        if i not in done:
            merges.append((i, j, share))
            done.add(i)
    return continued, merges


def survivors(uo: dict[int, list[Unit]], un: dict[int, list[Unit]], ended: list[int],
              continuing: dict[int, int]) -> list[tuple[int, int, float]]:
    """(old, new, share) for each ended rule whose own sentences live on, word for word or reworded, in
    one rule that continues another (`continuing`: new -> old): SHARE of its text at least and MIN_FLOW
    (about three words of the edition), and that rule got from it, not from its own predecessor, a
    sentence, some of its words (GAINED) or one of its rarest (712.10 of 2020 into 712.16, which gained
    "melded": a template sentence the two old rules shared is no evidence by itself). Less than SHARE
    will do when a sentence of it is new there and KEPT_WORDS of its words are in that rule: its other
    sentences reworded (400.2 of May 2009 into 608.1, "Text itself is never an effect"). All of the new
    rule's text is searched, what its predecessor said too. A sentence's weight is its words' rarity,
    shared among the rules that print it, so boilerplate weighs nothing; two rules naming what the
    other lacks are never paired."""
    targets = [v for j in sorted(continuing) for v in un.get(j, ()) if v.weight > 0]
    index = _word_index(targets, COMMON_SENTENCES)
    old_words, old_idf, old_rare = rule_words(uo)
    new_words, _, new_rare = rule_words(un)
    least = _least(uo)
    out = []
    for i in ended:
        held, fresh = defaultdict(float), set()  # fresh: rules where a sentence of it is new text
        for u in uo.get(i, ()):
            there = _found_in(u, targets, index) if u.weight > 0 else []
            for j in {v.rule for v in there}:
                held[j] += u.weight
            fresh |= {v.rule for v in there if unexplained([v], uo.get(continuing[v.rule], []))}
        own = sum(u.weight for u in uo.get(i, ())) or 1.0
        mine = old_words.get(i, frozenset())
        names = frozenset(_needed(mine, old_idf, least))
        fits = []
        for j, f in held.items():
            theirs = new_words.get(j, frozenset())
            gained = (mine & theirs) - old_words.get(continuing[j], frozenset())  # not from its predecessor
            gave = j in fresh or gained & names or _sum(gained, old_idf) >= GAINED * _sum(mine, old_idf)
            apart = (old_rare.get(i, frozenset()) - theirs) and (new_rare.get(j, frozenset()) - mine)
            kept = _sum(mine & theirs, old_idf) >= KEPT_WORDS * _sum(mine, old_idf)
            sole = len(held) == 1  # nothing else of it is found anywhere: where its text went, it went
            if (f >= SHARE * own or (j in fresh and (kept or sole))) and f >= MIN_FLOW and gave and not apart:
                fits.append((round(f, 3), -j))
        if fits:
            f, j = max(fits)
            out.append((i, -j, _pct(f, own)))
    return out


def _found_in(u: Unit, targets: list[Unit], index: dict[str, list[int]]) -> list[Unit]:
    """The sentences of `targets` that are `u`, perhaps reworded: candidates found by their less common
    words and ranked by all the words they share."""
    found = set(chain.from_iterable(index.get(w, ()) for w in u.words))
    shared = {k: len(u.words & targets[k].words) for k in found}
    cover = [k for k in found if shared[k] >= 0.5 * min(len(u.words), len(targets[k].words))]
    return [targets[k] for k in heapq.nsmallest(SENTENCE_CANDIDATES, cover, key=lambda k: (-shared[k], k))
            if alike(u, targets[k])]


def _least(units_of: dict[int, list[Unit]]) -> float:
    """The weight of words two rules must share to be evidence of anything: HELD_WORDS of the edition's
    rarest words (12 in a full edition)."""
    return HELD_WORDS * math.log((len(units_of) + 1) / 1.5)


def _needed(words: frozenset[str], idf: dict[str, float], least: float) -> list[str]:
    """The rarest of `words` (RAREST at most) a rule must have one of to hold `least` of their weight:
    the fewest such that the others together weigh less. Words most rules have (of no weight alone)
    then find no candidates, which `least` would turn away one by one."""
    rarest = sorted(words, key=lambda w: (-idf.get(w, 0.0), w))
    for count in range(1, min(RAREST, len(rarest))):
        if _sum(rarest[count:], idf) < least:
            return rarest[:count]
    return rarest[:RAREST]


def _absorbed(old_words, old_idf, new_words, pairs, continuing):
    """(old, new, share) for each ended rule nearly all of whose words a continuing rule holds and
    got from it, not from its own predecessor."""
    for i, j in pairs:
        if j not in continuing:
            continue
        mine = old_words[i]
        own = _sum(mine, old_idf)
        shared = mine & new_words[j]
        before = old_words.get(continuing[j], frozenset())  # what the predecessor said is not evidence
        held = _sum(shared, old_idf)
        if held >= ABSORBED * own and _sum(shared - before, old_idf) >= GAINED * own:
            yield i, j, _pct(held, own)


def _sum(words: Iterable[str], idf: dict[str, float]) -> float:
    """The weight of some words: fsum is exact whatever the (hash) order, and needs no sort."""
    return math.fsum(idf.get(w, 0.0) for w in words)


_RULE_WORDS: dict[int, tuple] = {}  # id(units dict) -> (that dict, its rule_words), the last few


def rule_words(units_of: dict[int, list[Unit]]) -> tuple[dict, dict, dict]:
    """Per rule: the words of its own sentences (not boilerplate printed in three rules or more),
    each word's weight in the edition (log inverse document frequency, uncapped: the rare words
    that name things must outweigh the rest), and the rule's rare words. Kept with the (shared,
    unchanging) units they come from: an edition is on both sides of two pairs."""
    held = _RULE_WORDS.get(id(units_of))
    if held is not None and held[0] is units_of:  # held, so its id cannot have been reused
        return held[1]
    if len(_RULE_WORDS) >= 4:
        del _RULE_WORDS[next(iter(_RULE_WORDS))]
    made = _make_rule_words(units_of)
    _RULE_WORDS[id(units_of)] = (units_of, made)
    return made


def _make_rule_words(units_of: dict[int, list[Unit]]) -> tuple[dict, dict, dict]:
    copies = Counter(u.text for parts in units_of.values() for u in {u.text: u for u in parts}.values())
    words = {i: frozenset().union(*(u.words for u in parts if copies[u.text] < BOILERPLATE and u.part != "example"))
             for i, parts in units_of.items()}
    df = Counter(w for ws in words.values() for w in ws)
    n = len(words)
    idf = {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}
    rare = {i: frozenset().union(*(u.rare for u in parts if u.part != "example")) for i, parts in units_of.items()}
    return words, idf, rare
