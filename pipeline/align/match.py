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

This module is the entry point (`align`); the steps are modules of their own: body.py (exact.py,
fuzzy.py), headings.py, glossary.py, and scoring.py, which holds every threshold of the alignment.

Memory is bounded: a step larger than any real one (DENSE_CELLS; made-up or hostile editions of
tens of thousands of reworded rules) scores only candidate pairs, those that share rare words, a
number or a neighbour's move, so its cost follows the number of rules and not its square; what
would still need a matrix over MAX_DENSE_CELLS stops with AlignmentTooLarge, a clear error.
"""
from __future__ import annotations

from pipeline.align.body import _align_body, _resemblances
from pipeline.align.exact import _group
from pipeline.align.glossary import _across, _align_glossary, _from_glossary, _glossary_merges, _renamed_by_definition
from pipeline.align.headings import _align_headings
from pipeline.align.scoring import AlignmentTooLarge, score_form
from pipeline.records import Match, Rule

__all__ = ["AlignmentTooLarge", "align", "score_form"]  # what other stages call


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
            if whole:  # a term folded into another ("Suspended" into "Suspend" in July 2009)
                extra = _glossary_merges(old, new, o, n, found)
                found, extra = _renamed_by_definition(old, new, found, extra)
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
    return matches + (_from_glossary(old, new, matches) + _across(old, new, matches) if whole else [])
