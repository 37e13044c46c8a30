"""Lineages: each rule's identity across editions, minted once and carried through renumberings.

Editions are walked in date order. A complete edition replaces what is known; a fragment (a
copy, a rulings page, one chapter) only speaks for the rules it gives, so rules it lacks are
not "removed" by it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from rapidfuzz import fuzz

from pipeline.align import align, score_form
from pipeline.diff import change_between
from pipeline.edition import Edition
from pipeline.overrides import Overrides
from pipeline.patterns import SUBRULE_LETTERS as L
from pipeline.cache import Damaged, tuples
from pipeline.records import Match, Rule, RuleChange, rule_key

PRIMARY = ("same", "moved", "fuzzy", "override", "traced", "renamed")


def mint(r: Rule) -> str:
    """A lineage id names where the rule first appeared: 2003-10-01:212.1b, 2003-10-01:g:Ability."""
    middle = "g:" if r.kind == "glossary" else ""
    suffix = f"#{r.occurrence}" if r.occurrence > 1 else ""
    return f"{r.edition}:{middle}{r.rule_id}{suffix}"


@dataclass
class History:
    changes: list[RuleChange] = field(default_factory=list)
    lineage: dict[tuple, str] = field(default_factory=dict)  # rule_key -> lineage id
    last_changed: dict[tuple, str] = field(default_factory=dict)  # rule_key -> edition of last wording change
    chain: list[str] = field(default_factory=list)  # editions in the order they were walked


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
    known: list[tuple[str, Rule]] = []  # (lineage, latest record), in document order
    last_changed: dict[str, str] = {}
    previous = None
    last_complete = None
    for edition in (progress or iter)(sorted(by_edition)):
        records = by_edition[edition]
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
                      overrides, cache, edition in truncated)
        previous = edition
        last_complete = edition if complete.get(edition) else last_complete
    return history


def _step(history, known, records, edition, previous, last_complete, complete, last_changed, overrides, cache,
          truncated=False):
    """Align what is known with the next edition; record a change row for every rule."""
    old = [r for _, r in known]
    force, forbid = overrides.for_pair(previous, edition)
    if last_complete and last_complete != previous:
        extra_force, extra_forbid = overrides.for_pair(last_complete, edition)
        force, forbid = force | extra_force, forbid | extra_forbid
    matches, diffs = _aligned(old, records, force, forbid, cache)
    lineage_of_new: dict[int, str] = {}
    rows: list[RuleChange] = []
    ended, continued = set(), set()
    for m in matches:
        if m.method in PRIMARY and m.old is not None and m.new is not None:
            lineage = known[m.old][0]
            lineage_of_new[m.new] = lineage
            continued.add(m.old)
            change = replace(diffs[(m.old, m.new, m.method)], lineage_id=lineage)
            if change.change == "modified":
                last_changed[lineage] = edition
            rows.append(change)
    pieces: dict[int, list] = {}  # new rule -> the split matches it came from
    models = {m.new: old[m.old] for m in matches if m.method == "resembles"}
    for m in matches:
        if m.method == "merge" and m.old not in continued:
            ended.add(m.old)
            rows.append(replace(diffs[(m.old, m.new, m.method)], lineage_id=known[m.old][0], change="merged"))
        elif m.method == "split" and m.new not in lineage_of_new:
            pieces.setdefault(m.new, []).append(m)
            if m.old not in continued:
                ended.add(m.old)  # cut in pieces, none of them its successor
    for j, r in enumerate(records):
        if j in lineage_of_new:
            continue
        lineage = mint(r)
        lineage_of_new[j] = lineage
        last_changed[lineage] = edition
        for m in pieces.get(j, ()):  # a split records every rule the piece came from
            rows.append(replace(diffs[(m.old, m.new, m.method)], lineage_id=lineage, change="split"))
        if j not in pieces:
            # New since the last complete edition; with none before, only first seen in this source.
            model = models.get(j)
            note = f"resembles {model.rule_id} of {model.edition}" if model else ""
            rows.append(RuleChange(last_complete or previous, edition, lineage, "", r.rule_id, r.kind,
                                   "added" if last_complete else "first_seen", False, 0.0, False, "unmatched",
                                   note=note))
    for j, r in enumerate(records):
        history.lineage[rule_key(r)] = lineage_of_new[j]
        history.last_changed[rule_key(r)] = last_changed[lineage_of_new[j]]
    if complete.get(edition, False):
        for i, r in enumerate(old):
            if i not in continued and i not in ended:
                rows.append(RuleChange(r.edition, edition, known[i][0], r.rule_id, "", r.kind, "removed",
                                       False, 0.0, False, "unmatched"))
        new_known = [(lineage_of_new[j], r) for j, r in enumerate(records)]
    else:  # a fragment: what it does not give is still what the last full edition said
        replaced = {known[i][0] for i in continued | ended}
        new_known = [(lin, r) for lin, r in known if lin not in replaced]
        if truncated:  # an edition that stops early says nothing of what it lacks: the lineage goes on
            rows += [RuleChange(r.edition, edition, lin, r.rule_id, "", r.kind, "not_covered", False, 0.0, False,
                                "unmatched") for lin, r in new_known]
        new_known += [(lineage_of_new[j], r) for j, r in enumerate(records)]
    history.changes += rows
    return new_known


def _aligned(old, new, force, forbid, cache):
    """The pair's matches and the diff of every matched pair, from `cache` (a pipeline.cache.Cache,
    keyed by the pair's content and the code of this module and what it imports) when it holds them."""
    key = None
    if cache is not None:
        key = cache.key(json.dumps([[_content(r) for r in old], [_content(r) for r in new], sorted(force),
                                    sorted(forbid)], ensure_ascii=False))
        stored = cache.get(key, lambda v: _decode_pair(v, len(old), len(new)))
        if stored is not None:
            return stored
    matches = align(old, new, force, forbid)
    diffs = {(m.old, m.new, m.method): change_between(old[m.old], new[m.new], "", m)
             for m in matches if m.old is not None and m.new is not None}
    if cache is not None:
        cache.put(key, [[_row(m) for m in matches], [_row(c) for c in diffs.values()]])
    return matches, diffs


def _row(record) -> list:
    """A record's fields, as astuple gives them for JSON, without astuple's deep copy of every nested tuple
    (that copy was a third of the cost of caching a pair)."""
    return [getattr(record, f.name) for f in fields(record)]


def _decode_pair(value, n_old: int, n_new: int):
    """A cached pair back into records; indexes outside the pair mean a damaged entry."""
    matches = [Match(*m) for m in tuples(value[0])]
    changes = [RuleChange(*c) for c in tuples(value[1])]
    if any(not (m.old is None or 0 <= m.old < n_old) or not (m.new is None or 0 <= m.new < n_new) for m in matches):
        raise Damaged("match index outside the pair")
    pairs = [(m.old, m.new, m.method) for m in matches if m.old is not None and m.new is not None]
    if len(pairs) != len(changes):
        raise Damaged("matches and diffs disagree")
    return matches, dict(zip(pairs, changes))


def _content(r: Rule) -> tuple:
    return (r.edition, r.kind, r.rule_id, r.occurrence, r.parent, r.title, r.text, r.compare, r.examples, r.sentences)


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
            runs.setdefault((c.from_edition, c.to_edition, a[1], int(b[2]) - int(a[2]), "rule"), []).append((int(a[2]), c))
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


QUOTE_MATCH = 85  # how closely commentary must quote a rule to be linked to it by its words


def cited_lineages(rules: list[Rule], history: History) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(edition, commentary id, cited rule) -> (lineage, how). A [CR 204.1a] tag is resolved by the
    number when that edition's rules are in the run ("number"); otherwise by the words the
    commentary quotes, against the nearest editions that are ("quoted text")."""
    numbered = {(k[0], k[2]): v for k, v in history.lineage.items() if k[1] not in ("glossary", "commentary")}
    by_edition: dict[str, list[Rule]] = {}
    for r in rules:
        if r.kind not in ("glossary", "commentary") and r.text:
            by_edition.setdefault(r.edition, []).append(r)
    editions = sorted(by_edition)
    out = {}
    for r in rules:
        if r.kind != "commentary":
            continue
        for c in r.citations:
            if c.source != "CR":
                continue
            key = (r.edition, r.rule_id, c.value)
            if (r.edition, c.value) in numbered:
                out[key] = (numbered[(r.edition, c.value)], "number")
                continue
            before = [e for e in editions if e <= r.edition][-1:]
            after = [e for e in editions if e > r.edition][:1]
            quote = score_form(r.compare)
            best = (0.0, None)
            for e in before + after:
                for candidate in by_edition[e]:
                    score = fuzz.partial_ratio(quote, score_form(candidate.compare), score_cutoff=QUOTE_MATCH)
                    if score > best[0]:
                        best = (score, candidate)
            if best[1] is not None:
                out[key] = (history.lineage[rule_key(best[1])], "quoted text")
    return out
