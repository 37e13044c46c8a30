"""Glossary terms match by name and definition together (renamed, reworded, (Obsolete)); and text moved
from a glossary entry into the numbered rules is a split piece of that entry."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.ingest.clean import compare_form
from pipeline.patterns import TERMINOLOGY
from pipeline.records import Match
from pipeline.align.trace import alike, rule_words, survivors, unexplained, units
from pipeline.align.scoring import (ACCEPT, CLOSE_RUNNER_UP, FROM_GLOSSARY, GLOSSARY_DEFINITION, GLOSSARY_RENAMED,
                                    NAME_DEFINITION, NAME_SAME_STEMS, REVIEW, REWORDED, REWORDED_BACK, SHARE, WHOLE,
                                    score_form, _assign, _bound)
from pipeline.align.exact import ONE_TO_ONE, _group, _is_piece


def _from_glossary(old, new, matches) -> list[Match]:
    """Text moved from the glossary into the numbered rules ("Event" -> 700.1 and "Exchange" ->
    701.8a-f in July 2009, the entries cut down to "See rule ..."): an added rule at least half of
    whose text (by weight) is text one glossary entry lost is a split piece of that entry, and so is one with
    SHARE of it, as in the rules, that speaks of the entry's term ("Echo" -> 702.27b); so is one reworded from
    an entry cut down to a pointer, by its words (`_reworded_from`)."""
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
    lost_words = {}  # an entry that lost half of its text (by weight): a pointer now, its words went somewhere
    for i in {u.rule for u in lost}:
        said = [u for u in before.get(i, []) if u.part != "example"]
        gone = sum(u.weight for u in lost if u.rule == i)
        if gone >= 0.5 * sum(u.weight for u in said):
            lost_words[i] = frozenset().union(*(u.words for u in said))
    idf = rule_words(units(new, [j for j, r in enumerate(new) if _group(r) == "body"], score_form))[1] \
        if lost_words else {}
    wholes = {i: sum(idf.get(w, 1.0) for w in sorted(words)) for i, words in lost_words.items()}
    holding = defaultdict(set)  # word -> the entries cut down that had it
    for i, words in lost_words.items():
        for w in words:
            holding[w].add(i)
    gone = set(lost)
    kept = [u for i in terms for u in before.get(i, []) if u not in gone]
    lost_at, kept_at = _indexed(lost), _indexed(kept)
    out = []
    for j, mine in units(new, added, score_form).items():
        found = _held_by(mine, lost, lost_at, SHARE)  # FROM_GLOSSARY of it; SHARE when it speaks of the term
        if found and found[1] < FROM_GLOSSARY and not _speaks_of(new[j], old[found[0]].rule_id):
            found = None
        if found is None:  # a copy of what an entry still says: nearly all of a rule that speaks of its term
            found = _held_by(mine, kept, kept_at, WHOLE)
            if found and not _speaks_of(new[j], old[found[0]].rule_id):
                found = None
        if found:
            i, share = found
            out.append(Match(i, j, round(100 * share, 1), "split", share < 0.6))
            continue
        reworded = _reworded_from(mine, lost_words, wholes, holding, idf) if lost_words else None
        if reworded:
            i, share = reworded
            out.append(Match(i, j, share, "split", True))
    return out


def _indexed(pool) -> dict[str, list[int]]:
    index = defaultdict(list)
    for k, u in enumerate(pool):
        for w in u.words:
            index[w].append(k)
    return index


def _held_by(mine, pool, index, least: float) -> tuple[int, float] | None:
    """(entry, share) when one entry's sentences in `pool` hold `least` of a rule's text (by weight)."""
    total, got = sum(u.weight for u in mine), Counter()
    for u in mine:
        near = Counter(k for w in u.words for k in index.get(w, ()))
        source = next((pool[k].rule for k, c in near.most_common() if c >= 2 and alike(u, pool[k])), None)
        if source is not None:
            got[source] += u.weight
    if got and total:
        i, weight_got = max(sorted(got.items()), key=lambda kv: kv[1])
        if weight_got / total >= least:
            return i, weight_got / total
    return None


def _speaks_of(r, term: str) -> bool:
    """Every word of a term's name is a word of the rule, plural endings aside ("Attack Alone": "attacks
    alone"): a rule on the pattern of an entry's sentence but about another thing (convoke's "can't reduce
    the cost ... to less than 0", affinity's) is not that entry's text."""
    words = {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", score_form(r.compare))}
    return all(w in words for w in _loose_key(term).split())


def _across(old, new, matches) -> list[Match]:
    """Text that lives on across the line between the glossary and the numbered rules: an ended entry
    whose definition a rule that continues another prints (the entry "Tie" and rule 608.5 of July 2009,
    which said the same and went on alone), or an ended rule whose text a continuing entry prints, was
    merged into it (`survivors`: SHARE of its text, by the rarity of its words, boilerplate weighing
    nothing). What the rule's own predecessor said already is no objection across kinds: two copies of
    one text, one in each part of the book, went on as one."""
    went = {m.old: m.new for m in matches if m.old is not None and m.new is not None and m.method in ONE_TO_ONE}
    done = {m.old for m in matches if m.old is not None and m.method != "unmatched"}
    out = []
    for mine, theirs in (("glossary", "body"), ("body", "glossary")):
        ended = [i for i, r in enumerate(old) if _group(r) == mine and i not in done and not _is_piece(r)
                 and r.kind in ("rule", "subrule", "glossary")]
        continuing = {j: i for i, j in went.items() if _group(new[j]) == theirs and not _is_piece(new[j])}
        if not ended or not continuing:
            continue
        uo = units(old, [i for i, r in enumerate(old) if _group(r) == mine], score_form)
        un = units(new, [j for j, r in enumerate(new) if _group(r) == theirs], score_form)
        out += [Match(i, j, share, "merge", share < 60) for i, j, share in survivors(uo, un, ended, continuing)]
    return out


def _reworded_from(mine, lost_words: dict[int, frozenset[str]], wholes: dict[int, float], holding, idf):
    """(term, share) when an added rule's own words (by rarity in the rules) are mostly words of an entry cut
    down to a pointer, REWORDED of them, and REWORDED_BACK of the entry's words are in it: the entry's text moved
    into the rules reworded past sentence likeness ("Pile" -> 700.3b of July 2009, "the objects do not leave
    the zone" -> "objects grouped into piles don't leave the zone"). `wholes` weighs each entry's words,
    `holding` gives the entries that have a word (only those can share any)."""
    words = frozenset().union(*(u.words for u in mine if u.part != "example")) if mine else frozenset()
    size = sum(idf.get(w, 1.0) for w in sorted(words))
    best = None
    for i in sorted(set().union(*(holding.get(w, ()) for w in words))):
        shared = sum(idf.get(w, 1.0) for w in sorted(words & lost_words[i]))
        whole = wholes[i]
        if size and whole and shared / size >= REWORDED and shared / whole >= REWORDED_BACK:
            if best is None or shared / size > best[1] / 100:
                best = (i, round(100 * shared / size, 1))
    return best


def _glossary_merges(old, new, o, n, found) -> list[Match]:
    """A term that ended with its definition living on in another term's entry was merged into it
    (the sentence on what "suspended" means, in the entry "Suspend" of July 2009)."""
    went = {m.old for m in found}
    ended = [i for i in o if i not in went]
    both = (units(old, o, score_form), units(new, n, score_form))
    return [Match(i, j, share, "merge", share < 60)
            for i, j, share in survivors(*both, ended, {m.new: m.old for m in found})]


def _renamed_by_definition(old, new, found, extra) -> tuple[list[Match], list[Match]]:
    """Of two terms that became one under a new name, the one whose definition the new entry keeps
    more of is renamed and the other merged, unless the other's name has more words in common with the
    new name: the letters of two different words are no evidence ("Sorcery Type" is no nearer "Spell
    Type" than "Instant Type", whose example "Instant - Arcane" the entry keeps)."""
    primary = {m.new: m for m in found if m.method == "renamed"}
    swaps = []
    for m in extra:
        p = primary.get(m.new)
        if m.method != "merge" or p is None:
            continue
        name = _stems(new[m.new].rule_id)
        if _common(_stems(old[m.old].rule_id), name) < _common(_stems(old[p.old].rule_id), name):
            continue
        mine, theirs = (fuzz.ratio(score_form(old[i].compare), score_form(new[m.new].compare)) for i in (m.old, p.old))
        if mine > theirs:
            swaps.append((m, p))
    if not swaps:
        return found, extra
    undone = {id(x) for pair in swaps for x in pair}
    found = [m for m in found if id(m) not in undone] + [replace(p, old=m.old) for m, p in swaps]
    extra = [m for m in extra if id(m) not in undone] + [replace(m, old=p.old) for m, p in swaps]
    return found, extra


GLOSSARY_SUFFIX = re.compile(r"\s*\((?:obsolete|informal)\)\s*$")


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
            pointer = _definition_elsewhere(old, new)
            found = _same_key(old, new, o, n, found, term_key, "renamed", pointer)
            found = _same_key(old, new, o, n, found, _loose_key, "renamed", pointer)  # "State Triggers"
            found += _one_of_its_names(old, new, o, n, found)
    found += _name_extended(old, new, o, n, found)
    found += _name_reworded(old, new, o, n, found)
    return found + _defined_by_old_name(old, new, o, n, found)


def _defined_by_old_name(old, new, o, n, found) -> list[Match]:
    """A new term whose definition begins with the name (two words or more) of an ended term, and shares a word
    of it, is that term renamed: a kind of it, named anew ("Game Action" of May 2009 -> "Turn-Based Action",
    "Game actions that happen automatically when certain steps or phases begin ..."), when each is the other's
    only such term. A one-word name begins too many definitions ("Order" / "The order, announced ...")."""
    rest, free = _unmatched(o, n, found)
    said = {j: re.sub(r"^(?:a|an|the) ", "", _loose_key(new[j].compare)) + " " for j in free}
    pairs = []
    for i in rest:
        name, stems = _loose_key(old[i].rule_id), _stems(old[i].rule_id)
        if len(name.split()) < 2:
            continue
        for j in free:
            if said[j].startswith(name + " ") and _common(stems, _stems(new[j].rule_id)):
                pairs.append((i, j))
    olds, news = Counter(i for i, _ in pairs), Counter(j for _, j in pairs)
    return [Match(i, j, round(fuzz.ratio(old[i].compare, new[j].compare), 1), "renamed", True)
            for i, j in pairs if olds[i] == 1 and news[j] == 1]


def _one_of_its_names(old, new, o, n, found) -> list[Match]:
    """A term listed under two names ("Legend, Legendary") that went on under one of them, not as a pointer
    ("Legend (Obsolete)", which a name's words alone would pick), is renamed to it."""
    rest, free = _unmatched(o, n, found)
    by_name = defaultdict(list)
    for j in free:
        if not GLOSSARY_SUFFIX.search(_name(new[j].rule_id)):
            by_name[_loose_key(new[j].rule_id)].append(j)
    out, taken = [], set()
    for i in rest:
        names = [x for x in old[i].rule_id.split(",") if x.strip()]
        hits = {j for x in names for j in by_name.get(_loose_key(x), ())} - taken if len(names) > 1 else set()
        if len(hits) == 1:
            j = hits.pop()
            taken.add(j)
            score = round(fuzz.ratio(old[i].compare, new[j].compare), 1)
            out.append(Match(i, j, score, "renamed", score < REVIEW))
    return out


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


def _stems(name: str) -> frozenset[str]:
    """A name's words, endings aside: Ending/End, Flipping/Flip, Removed/Remove."""
    words = re.findall(r"[a-z]+", term_key(name))
    return frozenset(w for w in (re.sub(r"(?:ing|ed|s|y)$", "", w) for w in words if w not in NAME_STOP) if w)


def _common(a: frozenset[str], b: frozenset[str]) -> int:
    """Words of `a` with a counterpart in `b`, one the start of the other (Control/Controll,
    Depend/Dependenc; not Attack/Attach), each word of `b` the counterpart of one word only ("Enchant
    Enchantment" has one word of "Enchant", not two)."""
    free, count = sorted(b), 0
    for x in sorted(a):
        y = next((y for y in free if x.startswith(y) or y.startswith(x)), None)
        if y is not None:
            free.remove(y)
            count += 1
    return count


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
    tossed = {j for (i, j), (name, words) in scores.items() if i != best_n[j] and  # as near as the best: a coin toss
              name == scores[(best_n[j], j)][0] and words > scores[(best_n[j], j)][1] - CLOSE_RUNNER_UP}
    return [Match(i, j, round(fuzz.ratio(old[i].compare, new[j].compare), 1), "renamed", True)
            for i, j in sorted(best_o.items()) if best_n.get(j) == i and j not in tossed]


def _prefix(a: list[str], b: list[str]) -> bool:
    short, long = sorted((a, b), key=len)
    return len(short) < len(long) and long[:len(short)] == short


def _unmatched(o, n, found) -> tuple[list[int], list[int]]:
    taken_old, taken_new = {m.old for m in found}, {m.new for m in found}
    return [i for i in o if i not in taken_old], [j for j in n if j not in taken_new]


def _same_key(old, new, o, n, found, key, method, veto=None) -> list[Match]:
    rest, free = _unmatched(o, n, found)
    by_key = defaultdict(list)
    for j in free:
        by_key[key(new[j].rule_id)].append(j)
    found = list(found)
    for i in rest:
        same = by_key.get(key(old[i].rule_id))
        if same and not (veto and veto(i, same[0], free)):
            j = same.pop(0)
            score = 100.0 if old[i].compare == new[j].compare else round(fuzz.ratio(old[i].compare, new[j].compare), 1)
            found.append(Match(i, j, score, method, method != "same" and score < REVIEW))
    return found


def _definition_elsewhere(old, new):
    """veto(i, j, free): old term i's definition went to another entry than its pointer j: j is tagged
    "(Obsolete)" or "(Informal)" where i was not, and a free untagged entry named with a word of i's name
    has most of the words of i's definition (GLOSSARY_DEFINITION) and more of its text than j ("Snow-Covered"
    -> "Snow" of 2006 and "In Play" -> "Battlefield" of July 2009, their "(Obsolete)" pointers new)."""
    tagged = lambda name: bool(GLOSSARY_SUFFIX.search(name.lower()))  # noqa: E731

    def veto(i: int, j: int, free: list[int]) -> bool:
        if not tagged(new[j].rule_id) or tagged(old[i].rule_id):
            return False
        name, definition = _stems(old[i].rule_id), score_form(old[i].compare)
        here = fuzz.ratio(definition, score_form(new[j].compare))
        return any(fuzz.ratio(definition, score_form(new[k].compare)) > here
                   and fuzz.token_set_ratio(definition, score_form(new[k].compare)) >= GLOSSARY_DEFINITION
                   for k in free if k != j and not tagged(new[k].rule_id) and _common(name, _stems(new[k].rule_id)))
    return veto


_NAME_TERMS = tuple((a, b) for a, b in TERMINOLOGY if not a.startswith("play"))  # "Play" is still a term
_NAME_TERM_RE = re.compile(r"\b(?:" + "|".join(re.escape(a) for a, _ in _NAME_TERMS) + r")\b")


def _name(term: str) -> str:
    """A term's name for matching: case, quotes and wholesale renamings ("Leaves Play") do not count."""
    text = compare_form(term).lower().replace("?", "")
    return _NAME_TERM_RE.sub(lambda m: dict(_NAME_TERMS)[m.group()], text).strip()


def term_key(name: str) -> str:
    """The name without the (Obsolete)/(Informal) tags."""
    return GLOSSARY_SUFFIX.sub("", _name(name)).strip()
