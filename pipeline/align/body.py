"""The body rules of two editions, in order: exact steps, the scored match (fuzzy.py), pieces, sentence
tracing (trace.py) for splits and merges, then rules rewritten past their characters, found by their
place and their rare words; resemblances of added rules on top."""
from __future__ import annotations

from collections import Counter, defaultdict

from rapidfuzz import fuzz

from pipeline.records import HEADINGS, Match
from pipeline.align.trace import alike, reworded, rule_words, survivors, trace, unexplained, units
from pipeline.align.scoring import (GAP_SHARE, HUNK, LEAD_KEEPS, MIN_PIECE_WORDS, PIECE_SAME_ID, PLACED_SHARE,
                                    RESEMBLE_CANDIDATES, RESEMBLES, REST_WORDS, REWRITTEN, SECTION_PAIRS, score_form,
                                    _full, _text)
from pipeline.align.similarity import _best, _word_rows
from pipeline.align.exact import _exact, _forced, _is_piece, _near
from pipeline.align.fuzzy import _fuzzy, _home, _identity, _title_words


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
    rewritten = _rewritten(old, new, o, n, found, forbid)
    extra = _twins(rewritten, extra, both)
    involved = {m.old for m in extra} | {m.new for m in extra}
    found += [m for m in rewritten if m.old not in involved and m.new not in involved]
    if not whole:
        return found, extra
    more, merged = _reworded(old, new, o, n, found, extra, both, home, allowed)
    found, extra = found + more, extra + merged
    found += _placed(old, new, o, n, found, extra, both, allowed)
    found += _in_section(old, new, o, n, found, extra, both, allowed)
    found += _gaps(old, new, o, n, found, extra, both, allowed)
    found, extra = _at_home(old, new, n, found, extra, both, allowed)
    found, extra = _heads_continue(old, new, found, extra, both)
    extra += _rest_follows(old, new, n, found, extra, both, allowed)
    extra += _children_went(old, new, o, found, extra, both, allowed)
    return found, extra + _survived(old, o, found, extra, both, allowed)


def _children_went(old, new, o, found, extra, both, allowed) -> list[Match]:
    """A rule that ended while all its subrules went under one rule that continues another was merged into it,
    when that rule holds PLACED_SHARE of its words by rarity (700.8 of 2020, "Some cards refer to cards with a
    name originally printed in a particular set", and its lists 700.8a-c, which became 206.3a-c under 206.3
    of 2025)."""
    went = {m.old: m.new for m in found}
    pieces = {m.old for m in extra}
    ended = {old[i].rule_id: i for i in o if i not in went and i not in pieces
             and old[i].kind == "rule" and not _is_piece(old[i])}
    if not ended:
        return []
    under = defaultdict(set)
    for i in o:
        if old[i].parent in ended:
            under[old[i].parent].add(new[went[i]].parent if i in went else None)
    continuing = {new[j].rule_id: j for j in went.values()}
    (old_words, old_idf, _), (new_words, _, _) = map(rule_words, both)
    out = []
    for rule_id, i in sorted(ended.items()):
        parents = under.get(rule_id, set())
        k = continuing.get(next(iter(parents))) if len(parents) == 1 else None
        mine = old_words.get(i, frozenset())
        if k is None or new[k].kind not in ("rule", "subrule") or not allowed(i, k) or not mine:
            continue
        share = _share(mine & new_words.get(k, frozenset()), mine, old_idf)
        if share >= PLACED_SHARE:
            out.append(Match(i, k, round(100 * share, 1), "merge", True))
    return out


def _at_home(old, new, n, found, extra, both, allowed) -> tuple[list[Match], list[Match]]:
    """A rule matched away from its place continues at its place instead when the rule added there
    (its number, or its letter under the parent its parent became) keeps every sentence of it, or,
    the match away being scored, as many of its own words (LEAD_KEEPS at least): the place is the
    evidence the words could not give (714.3a of 2025 kept its sentence and gained read ahead's, a
    look-alike of read ahead's own 702.155b; champion's 502.72b of May 2009 stayed, reworded, while
    407.2g listed it among linked abilities). The rule away is a piece if it has a sentence of it
    (419.3 "replacement or prevention effects" -> 613.3, replacement, and 614.3, prevention). Of a rule
    cut in pieces, the piece at its place that opens with its first sentence is its head and continues
    it (212.4e of 2006 kept "An Aura spell requires a target ..."; 212.4j took the rest, reworded). A rule
    scored away from the section its section became continues in its one piece there that keeps LEAD_KEEPS of
    its words and more than the rule away (711.5 of 2020 -> 712.9 of 2025, not convert's new 701.28c)."""
    uo, un = both
    came = {m.new for m in found} | {m.new for m in extra}
    free = {new[j].rule_id: j for j in n if j not in came and new[j].kind in ("rule", "subrule")
            and not _is_piece(new[j])}
    pieces = {(m.old, new[m.new].rule_id): m for m in extra if m.method == "split"}
    if not free and not pieces:
        return found, extra
    parent_went = _parent_map(old, new, found)
    mine_of = lambda i: [u for u in uo.get(i, ()) if u.weight > 0]  # noqa: E731  its sentences that weigh
    (old_words, old_idf, _), (new_words, new_idf, _) = map(rule_words, both)

    def keeps(i: int, j: int) -> float:
        return _each_keeps(old_words.get(i, frozenset()), new_words.get(j, frozenset()), old_idf, new_idf)

    def opens(i: int, j: int) -> bool:  # new rule j opens with old rule i's first sentence
        lead, first = _lead(uo.get(i)), _lead(un.get(j))
        return bool(lead and first and alike(lead, first))
    moves = []
    for m in found:
        r = old[m.old]
        if m.method not in ("moved", "fuzzy", "traced") or r.kind not in ("rule", "subrule") or \
                new[m.new].rule_id == r.rule_id:
            continue
        places = _places(r, parent_went)
        if new[m.new].rule_id in places:
            continue
        k = next((free[p] for p in places if p in free), None)
        mine = mine_of(m.old)
        if k is not None and mine and allowed(m.old, k) and (not unexplained(mine, un.get(k, [])) or (
                m.method != "moved" and keeps(m.old, k) >= max(LEAD_KEEPS, keeps(m.old, m.new)))):
            moves.append((m, k))
            del free[new[k].rule_id]
            continue
        head = next((pieces[(m.old, p)] for p in places if (m.old, p) in pieces), None)
        if head is not None and m.method != "moved" and opens(m.old, head.new) and not opens(m.old, m.new):
            moves.append((m, head.new))
            extra = [x for x in extra if x is not head]
            continue
        home = parent_went.get(r.parent)
        near = [x for (i, _), x in sorted(pieces.items()) if i == m.old and new[x.new].parent == home
                and new[m.new].parent != home and keeps(i, x.new) >= max(LEAD_KEEPS, keeps(i, m.new))]
        if len(near) == 1 and m.method == "fuzzy":
            moves.append((m, near[0].new))
            extra = [x for x in extra if x is not near[0]]
    if not moves:
        return found, extra
    moved = {id(m) for m, _ in moves}
    found = [m for m in found if id(m) not in moved]
    for m, k in moves:
        found.append(Match(m.old, k, round(fuzz.ratio(score_form(_text(old[m.old])), score_form(_text(new[k]))), 1),
                           "traced", True))
        if len(unexplained(mine_of(m.old), un.get(m.new, []))) < len(mine_of(m.old)):  # a copy, not a look-alike
            extra.append(Match(m.old, m.new, m.score, "split", True))
    return found, extra


def _survived(old, o, found, extra, both, allowed) -> list[Match]:
    """A rule that ended with its sentences living on in a rule that continues another was merged into
    it (712.10 of 2020, its meld cards now among the double-faced permanents of 712.16)."""
    went = {m.old for m in found} | {m.old for m in extra}
    ended = [i for i in o if i not in went and not _is_piece(old[i])]
    merged = survivors(*both, ended, {m.new: m.old for m in found})
    return [Match(i, j, share, "merge", share < 60) for i, j, share in merged if allowed(i, j)]


def _rest_follows(old, new, n, found, extra, both, allowed) -> list[Match]:
    """An added rule right after the rules an old rule went to (its successor, or a piece of it, is the
    added rule's previous sibling) that says what that old rule said and they do not is the rest of it, a
    split piece, however stock its wording: 304.1 of May 2009, the draw step, went to 504.1 "First, the
    active player draws a card" and 504.2 "Second, ... go on the stack"; 504.3 "Third, the active player
    gets priority" is its last sentence, "Then the active player gets priority ...". The place is the
    evidence stock wording cannot give; the words must still be the old rule's: REST_WORDS of the added
    rule's words and of a sentence the old rule lost are the same (counted, not weighed: stock words weigh
    nothing), and neither names what the other lacks."""
    uo, un = both
    came = {m.new for m in found} | {m.new for m in extra}
    source, went = {}, defaultdict(list)
    for m in found + [m for m in extra if m.method == "split"]:
        source.setdefault(m.new, m.old)  # the rule it continues before one it is a piece of
        went[m.old].append(m.new)
    out, previous = [], {}
    for j in n:
        r = new[j]
        before, previous[r.parent] = previous.get(r.parent), j
        i = source.get(before)
        if j in came or i is None or {r.kind, old[i].kind} - {"rule", "subrule"} or _is_piece(r) \
                or not allowed(i, j):
            continue
        if _names_another(uo.get(i, ()), un.get(j, ())):
            continue  # the same pattern about another thing (Investigate's Clue, then the Blood token)
        kept = [u for k in went[i] for u in un.get(k, ())]
        theirs = _said(un.get(j, ()))[0]
        for u in uo.get(i, ()):
            if u.part == "example" or any(alike(u, t, inside=True) for t in kept):
                continue
            shared, most = len(u.words & theirs), max(len(u.words), len(theirs))
            if shared >= MIN_PIECE_WORDS - 1 and shared >= REST_WORDS * most:
                out.append(Match(i, j, round(100 * shared / most, 1), "split", True))
                break
    return out


def _heads_continue(old, new, found, extra, both) -> tuple[list[Match], list[Match]]:
    """A rule merged into a rule that opens with its first sentence, of its own number or under the
    parent its parent became, continues into it; the rule that was taken to continue it, whose first
    sentence is not there, is the one merged (300.2 of July 2009 -> 300.2 of 2011, which absorbed
    301.5's artifact creatures; phasing 502.15a -> 702.23a). The first sentence may be reworded past
    what `alike` accepts of a short sentence when the two keep LEAD_KEEPS of each other's own words
    and the other rule's first sentence does not (711.4 -> 712.8 of 2025, "transforming or modal"
    inserted, while meld's 712.3 only ends it). Only a scored pair is undone: a word-for-word or
    forced match stands."""
    uo, un = both
    primary = {m.new: m for m in found}
    parent_went = _parent_map(old, new, found)
    (old_words, old_idf, _), (new_words, new_idf, _) = map(rule_words, both)
    swaps = {}
    for m in extra:
        p = primary.get(m.new)
        if m.method != "merge" or p is None or p.method not in ("fuzzy", "traced") \
                or not (old[m.old].rule_id == new[m.new].rule_id
                        or parent_went.get(old[m.old].parent) == new[m.new].parent):
            continue
        head, mine, theirs = _lead(un.get(m.new)), _lead(uo.get(m.old)), _lead(uo.get(p.old))
        if not head or not mine:
            continue
        if (alike(mine, head) and not (theirs and alike(theirs, head))) or \
                _each_keeps(mine.words, head.words, old_idf, new_idf) >= LEAD_KEEPS > \
                (_each_keeps(theirs.words, head.words, old_idf, new_idf) if theirs else 0.0):
            swaps[m.new] = (m, p)
    if not swaps:
        return found, extra
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


def _in_section(old, new, o, n, found, extra, both, allowed) -> list[Match]:
    """A rule rewritten inside its section: an ended rule and an added rule under the parent its
    parent became (where most of its siblings went), each keeping GAP_SHARE of the other's own words
    (508.4 -> 508.5 of 2011, moved after the rule that followed it and reworded). A subrule whose rule
    ended is weighed under the parent its rule's parent became: it may have taken its rule's place
    (506.3a -> 506.3 of 2007, the subgame's deck size). Pairs are taken best first, each rule once."""
    went = {m.old for m in found} | {m.old for m in extra}
    came = {m.new for m in found} | {m.new for m in extra}
    parent_went = _parent_map(old, new, found)
    ended, added = defaultdict(list), defaultdict(list)
    ended_ids = {old[i].rule_id: i for i in o if i not in went}
    for i in o:
        if i in went or _is_piece(old[i]) or old[i].kind not in ("rule", "subrule"):
            continue
        parent = old[i].parent
        if parent not in parent_went and parent in ended_ids:  # its rule ended too: it may have taken its place
            parent = old[ended_ids[parent]].parent
        if parent in parent_went:
            ended[parent_went[parent]].append(i)
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


def _gaps(old, new, o, n, found, extra, both, allowed) -> list[Match]:
    """Rules rewritten between the same two neighbours: the rules before and after a run of ended rules
    went to two rules with a few added rules between them (110.5a -> 111.2 of 2020, a token's owner,
    under 110.5 -> 111.1; 901.7a of 2013, a plane turned face down, beside the new 901.8). The place says
    they are the same rules, as the lines of a diff's hunk between two unchanged lines; their words need
    only confirm it (a fair share of each rule's own words is in the other: a rule replaced by one on
    another subject keeps too few). In a hunk, a rule at its place (its number) is taken first, then the
    pairs that keep most. It runs after the section's pass, whose rare words say more than a place."""
    went = {m.old: m.new for m in found}
    came = set(went.values()) | {m.new for m in extra}
    ended = {m.old for m in extra}
    at = {j: q for q, j in enumerate(n)}
    (old_words, old_idf, _), (new_words, new_idf, _) = map(rule_words, both)
    body = lambda r: r.kind in ("rule", "subrule") and not _is_piece(r)  # noqa: E731
    parent_went = _parent_map(old, new, found)
    out = []
    p = 1
    while p < len(o) - 1:
        if o[p] in went or o[p - 1] not in went:
            p += 1
            continue
        q = p
        while q < len(o) and o[q] not in went:
            q += 1
        if q == len(o):
            break
        before, after = at[went[o[p - 1]]], at[went[o[q]]]
        olds = [i for i in o[p:q] if i not in ended and body(old[i])]
        news = [j for j in n[before + 1:after] if j not in came and body(new[j])] if after > before else []
        run, p = q - p, q
        if not olds or not news or run > HUNK or after - before - 1 > HUNK:
            continue
        keeps = sorted((new[j].rule_id not in _places(old[i], parent_went), -_each_keeps(
            old_words.get(i, frozenset()), new_words.get(j, frozenset()), old_idf, new_idf), i, j)
            for i in olds for j in news if allowed(i, j))
        done, taken = set(), set()
        for _, k, i, j in keeps:
            if -k >= GAP_SHARE and i not in done and j not in taken:
                done.add(i)
                taken.add(j)
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
        candidates = _places(r, parent_went)
        j = next((added[c] for c in candidates if c in added), None)
        if j is None or not allowed(i, j) or not alike(i, j) or \
                not _same_subject(uo.get(i, ()), un.get(j, ()), titles.get(new[j].parent, frozenset())):
            continue
        out.append(Match(i, j, round(fuzz.ratio(score_form(_text(r)), score_form(_text(new[j]))), 1), "traced", True))
        del added[new[j].rule_id]
    return out


def _places(r, parent_went: dict[str, str]) -> list[str]:
    """Where a rule would be at its place in the new edition: its number, or its letter under the
    parent its parent became (502.63a under 502.63, which became 702.2: 702.2a)."""
    target = parent_went.get(r.parent)
    return [r.rule_id] + ([target + r.rule_id[len(r.parent):]] if target and r.rule_id.startswith(r.parent) else [])


def _each_keeps(a: frozenset[str], b: frozenset[str], idf_a, idf_b) -> float:
    """How much of each rule's own words (by rarity) the other holds: the smaller of the two shares."""
    return min(_share(a & b, a, idf_a), _share(a & b, b, idf_b))


def _share(shared, words, idf) -> float:
    total = sum(idf.get(w, 0.0) for w in sorted(words))
    return sum(idf.get(w, 0.0) for w in sorted(shared)) / total if total else 0.0


def _parent_map(old, new, found) -> dict[str, str]:
    """old parent -> the new parent most of its matched rules went under; a parent none of whose
    rules matched goes to the new heading of the same title, when there is exactly one."""
    out, most = {}, {}  # each old parent's commonest new parent, the first seen on a tie
    for (p, q), count in Counter((old[m.old].parent, new[m.new].parent) for m in found).items():
        if count > most.get(p, 0):
            out[p], most[p] = q, count
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


def _said(units_of) -> tuple[frozenset[str], frozenset[str]]:
    """The words and the rare words of a rule's text (its sentences, not its examples)."""
    said = [u for u in units_of if u.part != "example"]
    return frozenset().union(*(u.words for u in said)), frozenset().union(*(u.rare for u in said))


def _names_another(a, b) -> bool:
    """Two rules' sentences (Units) each name something the other lacks (a rare word): two rules on the
    same pattern (Investigate's Clue and the Blood token), not one."""
    (words_a, rare_a), (words_b, rare_b) = _said(a), _said(b)
    return bool(rare_a - words_b) and bool(rare_b - words_a)


def _same_subject(a, b, subject: frozenset[str]) -> bool:
    """Two rules' sentences (Units) speak of the same thing: they share a word of the section's title
    or a word rare in the edition, and neither names something the other lacks."""
    (words_a, rare_a), (words_b, rare_b) = _said(a), _said(b)
    if (rare_a - words_b) and (rare_b - words_a):
        return False  # each names something the other does not: two rules
    return bool(words_a & words_b & (subject | rare_a | rare_b))


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


def _twins(rewritten, extra, both) -> list[Match]:
    """A rule rewritten at its number is not a piece of another old rule that said the same sentences
    (2013 printed the vanguard life modifier as both 211.1 and 311.7, and 2020 reworded both): what
    two rules both said is evidence for neither, and the number decides."""
    uo, un = both
    at = {m.new: m.old for m in rewritten}

    def twin(x: Match) -> bool:
        i = at.get(x.new)
        if x.method != "split" or i is None or i == x.old:
            return False
        given = [u for u in uo.get(x.old, ()) if any(alike(u, t, inside=True) for t in un.get(x.new, ()))]
        return bool(given) and not unexplained(given, uo.get(i, []))
    return [x for x in extra if not twin(x)]


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
