"""Lineages: each rule's identity across editions, minted once and carried through renumberings.

Editions are walked in date order. A complete edition replaces what is known; a fragment (a
copy, a rulings page, one chapter) only speaks for the rules it gives, so rules it lacks are
not "removed" by it.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
from dataclasses import fields, replace

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.align.match import align, score_form
from pipeline.align.scoring import QUOTE_MATCH
from pipeline.align.diff import AGREEMENT, change_between, departures
from pipeline.segment.edition import Edition
from pipeline.align.overrides import Overrides
from pipeline.patterns import SUBRULE_LETTERS as L
from pipeline.cache import Damaged
from pipeline.records import History, Match, Rule, RuleChange, rule_key

PRIMARY = ("same", "moved", "fuzzy", "override", "traced", "renamed")


def mint(r: Rule) -> str:
    """A lineage id names where the rule first appeared: 2003-10-01:212.1b, 2003-10-01:g:Ability."""
    middle = "g:" if r.kind == "glossary" else ""
    suffix = f"#{r.occurrence}" if r.occurrence > 1 else ""
    return f"{r.edition}:{middle}{r.rule_id}{suffix}"


def build(rules: list[Rule], eds: list[Edition], overrides: Overrides = Overrides(),
          cache=None, progress=None) -> History:
    """Walk the editions in date order; `cache` (a pipeline.cache.Cache) keeps each pair's alignment and diffs,
    keyed by the pair's content, so an unchanged pair is never aligned twice."""
    history = History()
    by_edition: dict[str, list[Rule]] = {}
    for r in rules:
        if r.kind != "commentary":
            by_edition.setdefault(r.edition, []).append(r)
    complete = {e.edition: e.complete for e in eds}
    truncated = {e.edition for e in eds if e.truncated}
    observes = {e.edition: e.observes for e in eds if e.observes}
    digests = Digests()  # every record's content digested once, for the keys of all the pairs it is in
    _prefetch(by_edition, complete, observes, truncated, overrides, cache, digests, progress)
    known: list[tuple[str, Rule]] = []  # (lineage, latest record), in document order
    last_changed: dict[str, str] = {}
    previous = None
    last_complete = None
    for edition in (progress or iter)(sorted(by_edition)):
        records = by_edition[edition]
        if edition in observes and known:  # a copy: evidence about the edition in force, no step
            _observe(history, known, records, observes[edition], last_changed, cache, digests)
            continue
        history.chain.append(edition)
        if not known:
            for r in records:
                lineage = mint(r)
                history.lineage[rule_key(r)] = lineage
                last_changed[lineage] = edition
                history.last_changed[rule_key(r)] = edition
            known = [(history.lineage[rule_key(r)], r) for r in records]
            previous = edition
            last_complete = edition if complete.get(edition) else None
            continue
        known = _step(history, known, records, edition, previous, last_complete, complete, last_changed,
                      overrides, cache, edition in truncated, digests)
        previous = edition
        last_complete = edition if complete.get(edition) else last_complete
    return history


def _step(history, known, records, edition, previous, last_complete, complete, last_changed, overrides, cache,
          truncated=False, digests=None):
    """Align what is known with the next edition; record a change row for every rule."""
    old = [r for _, r in known]
    force, forbid = overrides.for_pair(previous, edition)
    if last_complete and last_complete != previous:
        extra_force, extra_forbid = overrides.for_pair(last_complete, edition)
        force, forbid = force | extra_force, forbid | extra_forbid
    matches, diffs = aligned(old, records, force, forbid, cache, digests, complete.get(edition, False))
    lineage_of_new: dict[int, str] = {}
    rows: list[RuleChange] = []
    continued, successors, ended = fates(matches)
    for m in matches:
        if m.method in PRIMARY and m.old is not None and m.new is not None:
            lineage = known[m.old][0]
            lineage_of_new[m.new] = lineage
            change = _change(diffs[(m.old, m.new, m.method)], lineage)
            if change.change == "modified":
                last_changed[lineage] = edition
            rows.append(change)
    pieces: dict[int, list] = {}  # new rule -> the split matches it came from
    models = {m.new: old[m.old] for m in matches if m.method == "resembles"}
    for m in matches:
        if m.method == "merge" and m.old not in continued:
            rows.append(_change(diffs[(m.old, m.new, m.method)], known[m.old][0], "merged"))
        elif m.method == "split" and m.new not in successors:
            pieces.setdefault(m.new, []).append(m)
    for j, r in enumerate(records):
        if j in lineage_of_new:
            continue
        lineage = mint(r)
        lineage_of_new[j] = lineage
        last_changed[lineage] = edition
        for m in pieces.get(j, ()):  # a split records every rule the piece came from
            rows.append(_change(diffs[(m.old, m.new, m.method)], lineage, "split"))
        if j not in pieces:
            # New since the last complete edition; with none before, only first seen in this source.
            model = models.get(j)
            note = f"resembles {model.rule_id} of {model.edition}" if model else ""
            rows.append(_unmatched(from_edition=last_complete or previous, to_edition=edition, lineage_id=lineage,
                                   new_rule_id=r.rule_id, kind=r.kind,
                                   change="added" if last_complete else "first_seen", note=note))
    for j, r in enumerate(records):
        key = rule_key(r)
        history.lineage[key] = lineage_of_new[j]
        history.last_changed[key] = last_changed[lineage_of_new[j]]
    if complete.get(edition, False):
        for i, r in enumerate(old):
            if i not in continued and i not in ended:
                rows.append(_unmatched(from_edition=r.edition, to_edition=edition, lineage_id=known[i][0],
                                       old_rule_id=r.rule_id, kind=r.kind, change="removed"))
        new_known = [(lineage_of_new[j], r) for j, r in enumerate(records)]
    else:  # a fragment: what it does not give is still what the last full edition said
        replaced = {known[i][0] for i in continued | ended}
        new_known = [(lin, r) for lin, r in known if lin not in replaced]
        if truncated:  # an edition that stops early says nothing of what it lacks: the lineage goes on
            rows += [_unmatched(from_edition=r.edition, to_edition=edition, lineage_id=lin, old_rule_id=r.rule_id,
                                kind=r.kind, change="not_covered") for lin, r in new_known]
        new_known += [(lineage_of_new[j], r) for j, r in enumerate(records)]
    history.changes.extend(rows)  # History is frozen: its lists grow in place
    return new_known


def _observe(history, known, records, observed, last_changed, cache, digests):
    """A copy's records join the lineages of the rules they copy (in the edition in force, `known`),
    each with an observation of how it departs from the official text; a record the edition has no
    rule for (a ruling) starts a lineage of its own. Nothing here is a change of the rules."""
    old = [r for _, r in known]
    matches, diffs = aligned(old, records, frozenset(), frozenset(), cache, digests, False)
    copied = {m.new: m for m in matches if m.method in PRIMARY and m.old is not None and m.new is not None}
    for j, r in enumerate(records):
        m = copied.get(j)
        row = {"edition": r.edition, "source": r.source, "kind": r.kind, "rule_id": r.rule_id,
               "occurrence": r.occurrence, "observes": observed, "official_rule_id": "", "lineage_id": "",
               "agreement": "absent", "similarity": 0.0, "differences": f"no such rule in {observed}"}
        if m is None:
            lineage = mint(r)
            last_changed.setdefault(lineage, r.edition)
        else:
            lineage = known[m.old][0]
            change = _change(diffs[(m.old, m.new, m.method)], lineage)
            row.update(official_rule_id=old[m.old].rule_id, agreement=AGREEMENT.get(change.change, "differs"),
                       similarity=change.similarity, differences=departures(old[m.old], r, change))
        row["lineage_id"] = lineage
        history.observations.append(row)
        history.lineage[rule_key(r)] = lineage
        history.last_changed[rule_key(r)] = last_changed[lineage]


def fates(matches) -> tuple[set[int], set[int], set[int]]:
    """What one step's matches make of each rule: (old rules a successor continues, new rules that
    are successors, old rules that ended: merged into a rule, or cut in pieces none of which
    continues them). A continued rule is never also merged or ended. `compare` reads a step so too."""
    primary = [m for m in matches if m.method in PRIMARY and m.old is not None and m.new is not None]
    continued, successors = {m.old for m in primary}, {m.new for m in primary}
    ended = {m.old for m in matches if m.old not in continued
             and (m.method == "merge" or (m.method == "split" and m.new not in successors))}
    return continued, successors, ended


def aligned(old, new, force, forbid, cache, digests=None, whole=True):
    """The pair's matches and {(old, new, method): that pair's RuleChange, lineage not set}, from `cache`
    (a pipeline.cache.Cache, keyed by the pair's content and the code of this module and what it imports)
    when it holds them. The content is each side's digest (`digests`, a Digests shared by all the pairs
    of a walk). `whole`: the new edition is complete (what it lacks has ended)."""
    key = None
    if cache is not None:
        key = _pair_key(cache, digests or Digests(), old, new, force, forbid, whole)
        stored = cache.get(key, lambda v: _decode_pair(v, old, new))
        if stored is not None:
            return stored
    matches, paired, diffs, same = _align_pair(old, new, force, forbid, whole)
    if cache is not None:
        cache.put(key, _stored(matches, diffs, same))
    return matches, {(m.old, m.new, m.method): c for m, c in zip(paired, diffs)}


def _pair_key(cache, digests, old, new, force, forbid, whole) -> str:
    return cache.key(json.dumps([digests.of(old), digests.of(new), sorted(force), sorted(forbid), whole],
                                ensure_ascii=False))


def _align_pair(old, new, force, forbid, whole):
    """The pair's matches, those that pair two records, their changes, and whether each is the plain
    `_unchanged` (same words: made without a diff)."""
    matches = align(old, new, force, forbid, whole)
    paired = [m for m in matches if m.old is not None and m.new is not None]
    same = [_same_words(old[m.old], new[m.new]) for m in paired]
    diffs = [_unchanged(old[m.old], new[m.new], m) if s else change_between(old[m.old], new[m.new], "", m)
             for m, s in zip(paired, same)]
    return matches, paired, diffs, same


def _stored(matches, diffs, same) -> list:
    """A pair as the cache keeps it: a rule that came through unchanged (most) is null, not spelled out."""
    return [[_by_name(m) for m in matches], [None if s else _by_name(c) for c, s in zip(diffs, same)]]


_TODO: list = []  # the pairs a forked worker aligns, by index (set before the fork, so never pickled)


def _prefetch(by_edition, complete, observes, truncated, overrides, cache, digests, progress=None) -> None:
    """Align the pairs of consecutive complete editions that the cache lacks, one per core, in forked
    processes; the walk then finds them in the cache. Such a pair does not depend on the walk (the
    old side is the previous edition's records, as they are), and a cold run's alignment is mostly
    such pairs. Nothing is done with one core, one pair to align, or no fork (the walk aligns them)."""
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cache is None or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return
    todo, previous = [], None
    for edition in sorted(by_edition):
        if edition in observes and previous:
            continue
        if previous and complete.get(previous) and edition not in truncated:
            force, forbid = overrides.for_pair(previous, edition)
            old, new = by_edition[previous], by_edition[edition]
            whole = complete.get(edition, False)
            todo.append((_pair_key(cache, digests, old, new, force, forbid, whole), old, new, force, forbid, whole))
        previous = edition
    held = cache.present([t[0] for t in todo])
    todo = [t for t in todo if t[0] not in held]
    if len(todo) < 2:
        return
    _TODO[:] = todo
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(todo))) as pool:
            for key, value in (progress or iter)(pool.imap_unordered(_prefetched, range(len(todo)))):
                cache.put(key, value)
    finally:
        _TODO.clear()


def _prefetched(k: int) -> tuple[str, list]:
    key, old, new, force, forbid, whole = _TODO[k]
    matches, _, diffs, same = _align_pair(old, new, force, forbid, whole)
    return key, _stored(matches, diffs, same)


class Digests:
    """Content digests of record lists, for the pairs cache's keys. A pair used to be keyed by the JSON of
    every record of both editions, for every pair (most of the align stage when only one pair is new);
    now each distinct content is serialised and hashed once, and each record's digest is kept (by
    identity: the records are held here, so an id is never reused) for every pair it takes part in."""

    def __init__(self):
        self.by_content: dict[tuple, bytes] = {}
        self.by_record: dict[int, tuple[Rule, bytes]] = {}

    def of(self, records: list[Rule]) -> str:
        digest = hashlib.sha256()
        for r in records:
            known = self.by_record.get(id(r))
            if known is None:
                known = self.by_record[id(r)] = (r, self._record(r))
            digest.update(known[1])
        return digest.hexdigest()

    def _record(self, r: Rule) -> bytes:
        content = _content(r)
        found = self.by_content.get(content)
        if found is None:
            text = json.dumps(content, ensure_ascii=False).encode("utf-8", "surrogatepass")
            found = self.by_content[content] = hashlib.sha256(text).digest()
        # the edition apart: the same rule in the next edition is a different record, with the same content
        return r.edition.encode("utf-8", "surrogatepass") + b"\0" + found


def _content(r: Rule) -> tuple:
    """What alignment and diffs read of a record, but its edition."""
    return (r.kind, r.rule_id, r.occurrence, r.parent, r.title, r.text, r.compare, r.examples, r.sentences, r.flags)


# The pairs cache stores records by field name, so a field added, removed or reordered is never
# misread (and the cache key holds this module's code, so entries of older code are not even looked up).
def _by_name(record) -> dict:
    """A record's fields as a dict (asdict without its deep copy: the values are plain or tuples)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


# Fields that hold tuples of operations: 2 = a tuple of flat tuples, 3 = a tuple of those (per example).
_NESTED = {"ops": 2, "title_ops": 2, "example_ops": 3, "substitutions": 2}


def _change(c: RuleChange, lineage: str, change: str = "") -> RuleChange:
    """A pair's RuleChange with its lineage (and change) set."""
    return replace(c, lineage_id=lineage, change=change or c.change)


def _unmatched(old_rule_id: str = "", new_rule_id: str = "", **given) -> RuleChange:
    """The change of a rule with no counterpart (added, first seen, removed, not covered)."""
    return RuleChange(old_rule_id=old_rule_id, new_rule_id=new_rule_id, renumbered=False, similarity=0.0,
                      review=False, method="unmatched", **given)


def _unchanged(a: Rule, b: Rule, m: Match) -> RuleChange:
    """What change_between gives two records of the same words (checked before one is stored as null)."""
    return RuleChange(from_edition=a.edition, to_edition=b.edition, lineage_id="", old_rule_id=a.rule_id,
                      new_rule_id=b.rule_id, kind=b.kind, change="unchanged", renumbered=a.rule_id != b.rule_id,
                      similarity=100.0, review=m.review, method=m.method, score=m.score,
                      example_ops=((),) * len(b.examples))


def _same_words(a: Rule, b: Rule) -> bool:
    """Two records whose diff is `_unchanged` without working it out (most pairs of a step)."""
    return a.text == b.text and a.title == b.title and a.examples == b.examples and a.compare == b.compare and \
        (a.kind != "glossary" or a.rule_id == b.rule_id)


def _decode_change(value: dict) -> RuleChange:
    """A cached RuleChange back, its operations from JSON lists into tuples."""
    for name, depth in _NESTED.items():
        if depth == 2:
            value[name] = tuple(map(tuple, value[name]))
        else:
            value[name] = tuple(tuple(map(tuple, ops)) for ops in value[name])
    return RuleChange(**value)


def _decode_pair(value, old: list[Rule], new: list[Rule]):
    """A cached pair back into matches and changes; indexes outside the pair mean a damaged entry."""
    matches = [Match(**m) for m in value[0]]
    if any(not (m.old is None or 0 <= m.old < len(old)) or not (m.new is None or 0 <= m.new < len(new))
           for m in matches):
        raise Damaged("match index outside the pair")
    paired = [m for m in matches if m.old is not None and m.new is not None]
    if len(paired) != len(value[1]):
        raise Damaged("matches and diffs disagree")
    return matches, {(m.old, m.new, m.method): _unchanged(old[m.old], new[m.new], m) if c is None
                     else _decode_change(c) for m, c in zip(paired, value[1])}


def cascades(changes: list[RuleChange], min_run: int = 3) -> list[dict]:
    """Renumbering runs summarised as ranges: 702.5-702.170 shifted +1 (numbers within a chapter)
    and 704.5k-704.5p shifted +1 letter (subrules within a rule)."""
    runs: dict[tuple, list[tuple[int, RuleChange]]] = {}
    for c in changes:
        if not c.renumbered or c.method not in PRIMARY:
            continue
        a = re.fullmatch(r"(\d{3})\.(\d+)", c.old_rule_id)
        b = re.fullmatch(r"(\d{3})\.(\d+)", c.new_rule_id)
        if a and b and a[1] == b[1]:
            runs.setdefault((c.from_edition, c.to_edition, a[1],
                             int(b[2]) - int(a[2]), "rule"), []).append((int(a[2]), c))
            continue
        a = re.fullmatch(r"(\d{3}\.\d+)([a-z])", c.old_rule_id)
        b = re.fullmatch(r"(\d{3}\.\d+)([a-z])", c.new_rule_id)
        if a and b and a[1] == b[1]:
            if a[2] in L and b[2] in L:
                shift = L.index(b[2]) - L.index(a[2])
                runs.setdefault((c.from_edition, c.to_edition, a[1], shift, "subrule"), []).append((L.index(a[2]), c))
    out = []
    for (start, end, scope, shift, level), items in sorted(runs.items()):
        items.sort(key=lambda x: x[0])
        run = [items[0]]
        for item in items[1:] + [None]:
            if item is not None and item[0] == run[-1][0] + 1:
                run.append(item)
                continue
            if len(run) >= min_run:
                first, last = run[0][1], run[-1][1]
                unit = " letter" if level == "subrule" else ""
                out.append({"from_edition": start, "to_edition": end, "scope": scope, "first_old": first.old_rule_id,
                            "last_old": last.old_rule_id, "first_new": first.new_rule_id, "last_new": last.new_rule_id,
                            "shift": shift, "count": len(run),
                            "summary": f"{first.old_rule_id}–{last.old_rule_id} shifted {shift:+d}{unit}"
                                       f"{'s' if unit and abs(shift) > 1 else ''}"})
            run = [item] if item is not None else []
    return out


def cited_lineages(rules: list[Rule], history: History, cache=None) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(edition, commentary id, cited rule) -> (lineage, how). A [CR 204.1a] tag is resolved by the
    number when that edition's rules are in the run ("number"); otherwise by the words the
    commentary quotes, against the nearest editions that are ("quoted text"); `cache` (the pairs
    cache) keeps what a quote matched, by the quote and the candidates' content."""
    # Only the editions of commentary that cites by number, and those nearest to them, are looked into: the
    # 110 simulated editions have none, the seeds a few (every record of every edition was indexed before).
    citing = [r for r in rules if r.kind == "commentary" and any(c.source == "CR" for c in r.citations)]
    if not citing:
        return {}
    editions = sorted({r.edition for r in rules if r.kind not in ("glossary", "commentary") and r.text})
    wanted = {r.edition for r in citing}
    wanted |= {e for c in wanted for e in [e for e in editions if e <= c][-1:] + [e for e in editions if e > c][:1]}
    numbered = {(k[0], k[2]): v for k, v in history.lineage.items()
                if k[0] in wanted and k[1] not in ("glossary", "commentary")}
    by_edition: dict[str, list[Rule]] = {e: [] for e in editions if e in wanted}
    for r in rules:
        if r.edition in wanted and r.kind not in ("glossary", "commentary") and r.text:
            by_edition[r.edition].append(r)
    editions = [e for e in editions if e in wanted]  # the nearest of a commentary's edition are among them
    forms = {}  # edition -> its rules' scoring forms, made once
    digests = Digests()
    quoted = {}  # commentary record -> the rule its words quote (the same for each of its tags)
    out = {}
    for r in citing:
        for c in r.citations:
            if c.source != "CR":
                continue
            key = (r.edition, r.rule_id, c.value)
            if (r.edition, c.value) in numbered:
                out[key] = (numbered[(r.edition, c.value)], "number")
                continue
            if id(r) not in quoted:
                quoted[id(r)] = _quoted(r, by_edition, editions, forms, cache, digests)
            best = quoted[id(r)]
            if best is not None:
                out[key] = (history.lineage[rule_key(best)], "quoted text")
    return out


def _quoted(r: Rule, by_edition: dict[str, list[Rule]], editions: list[str], forms: dict, cache=None,
            digests=None) -> Rule | None:
    """The rule of the nearest editions (before, then after) that `r` quotes most closely: the first
    of the best, at QUOTE_MATCH or above."""
    near = [e for e in editions if e <= r.edition][-1:] + [e for e in editions if e > r.edition][:1]
    candidates = [x for e in near for x in by_edition[e]]
    if not candidates:
        return None
    quote = score_form(r.compare)
    key = None
    if cache is not None:
        key = cache.key(json.dumps(["quote", quote, (digests or Digests()).of(candidates)], ensure_ascii=False))
        best = cache.get(key, lambda v: _index(v, len(candidates)))
        if best is not None:
            return candidates[best] if best >= 0 else None
    for e in near:
        if e not in forms:
            forms[e] = [score_form(x.compare) for x in by_edition[e]]
    scores = process.cdist([quote], [f for e in near for f in forms[e]], scorer=fuzz.partial_ratio,
                           score_cutoff=QUOTE_MATCH, dtype=np.float64, workers=-1)[0]
    best = int(np.argmax(scores))  # the first of the best, as a scan that keeps only a better one
    best = best if scores[best] > 0 else -1
    if cache is not None:
        cache.put(key, best)
    return candidates[best] if best >= 0 else None


def _index(value, n: int) -> int:
    if not isinstance(value, int) or not -1 <= value < n:
        raise Damaged("quoted rule outside the candidates")
    return value
