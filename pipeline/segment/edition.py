"""Editions: the records of every source of one edition merged into one record per rule."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from operator import attrgetter

from pipeline.ingest.clean import compare_form
from pipeline.records import CleanDoc, Edition, Rule  # noqa: F401 (Edition: imported from here too)
from pipeline.segment.rules import rule_order

DAMAGE = re.compile(r"(?<=\w)\?(?=\w)|\s\?\s|--|(?<=\w)_\W|<(?:https?://|www\.)")
FORMAT_ORDER = {"docx": 0, "doc": 1, "rtf": 2, "official": 3, "pdf": 4}


def merge(rules: list[Rule], docs: list[CleanDoc]) -> list[Rule]:
    """One record per (edition, kind, number, occurrence); sources listed; differences flagged."""
    complete = {d.source.source_id for d in docs if d.complete}
    by_id = {d.source.source_id: d for d in docs}
    ranks: dict[str, tuple] = {}  # worked out only for sources that share a record with another

    def rank(source: str) -> tuple:
        if source not in ranks:
            ranks[source] = cleanliness(by_id[source]) if source in by_id else ()
        return ranks[source]
    first: dict[tuple, Rule] = {}
    groups: dict[tuple, list[Rule]] = {}  # only the records another source also has (a list per record was 40 MB)
    for r in rules:  # a glossary term is the same term in curly or straight quotes
        key = (r.edition, r.kind, compare_form(r.rule_id) if r.kind == "glossary" else r.rule_id, r.occurrence)
        if key in first:
            groups.setdefault(key, [first[key]]).append(r)
        else:
            first[key] = r
    merged = []
    for key, r in first.items():
        group = groups.get(key)
        if group is None:
            merged.append(r)
            continue
        group.sort(key=lambda r: (r.source not in complete, "partial" in r.flags, "truncated" in r.flags,
                                  rank(r.source), r.source))
        primary = group[0]
        flags = [f for f in primary.flags]
        variants = []
        for other in group[1:]:
            if not _agrees(other, primary):
                variants.append(f"{other.source}: {other.text or other.title}"
                                + "".join(f"\nExample: {e}" for e in other.examples))
        if variants:
            flags.append("conflict")
        for flag in ("duplicate",):
            if any(flag in r.flags for r in group) and flag not in flags:
                flags.append(flag)
        # the record's text and lines are the first source's; the others follow in name order
        others = sorted({s for r in group[1:] for s in r.source.split(";")} - {primary.source})
        sources = ";".join([primary.source] + others)
        merged.append(replace(primary, source=sources, flags=tuple(flags), variants=tuple(variants)))
    return sorted(merged, key=rule_order)


def cleanliness(doc: CleanDoc) -> tuple[int, int]:
    """Lower is cleaner: characters the file lost or spelled in ASCII ("who?ve", "--", "Oracle_",
    "<http://...>"), then the format (a PDF's paragraph breaks are guessed from the layout)."""
    return len(DAMAGE.findall(doc.content)), FORMAT_ORDER.get(doc.source.format, 2)


def _agrees(other: Rule, primary: Rule) -> bool:
    """Same words (comparison form). A partial or truncated copy only has to agree on what it has."""
    ours = [compare_form(e) for e in other.examples]
    theirs = [compare_form(e) for e in primary.examples]
    if "partial" in other.flags or "truncated" in other.flags:
        return other.compare in primary.compare and all(e in theirs for e in ours)
    return other.compare == primary.compare and ours == theirs


def editions(rules: list[Rule], docs: list[CleanDoc]) -> list[Edition]:
    out = []
    by_edition: dict[str, list[CleanDoc]] = {}
    for d in docs:
        by_edition.setdefault(d.edition or "", []).append(d)
    counts: dict[str, Counter] = {}
    for (edition, kind), n in Counter(map(attrgetter("edition", "kind"), rules)).items():
        counts.setdefault(edition, Counter())[kind] = n
    conflicts = Counter(r.edition for r in rules if "conflict" in r.flags)
    for edition in sorted(by_edition):
        group = by_edition[edition]
        # An official text pins the date; a range only stands when fragments are all there is.
        ends = [] if any(d.complete for d in group) else sorted({d.source.edition_end for d in group
                                                                 if d.source.edition_end})
        out.append(Edition(edition, ends[0] if ends else "", tuple(sorted(d.source.source_id for d in group)),
                           any(d.complete for d in group), dict(sorted(counts.get(edition, Counter()).items())),
                           conflicts[edition],
                           not any(d.complete for d in group) and any(d.source.format == "official" for d in group)))
    return observing(out)


def observing(eds: list[Edition]) -> list[Edition]:
    """A copy (rulings page, foreign site, wiki, Markdown export: any source that is not an official
    edition) is evidence about the official edition in force on its date, not an edition of its own:
    with one in the run it observes that edition (it makes no step of the history). A copy older than
    every official edition of the run, or of unknown date, still stands in for its edition."""
    complete = sorted(e.edition for e in eds if e.complete)
    out = []
    for e in eds:
        if not e.complete and not e.truncated and e.edition:
            in_force = [c for c in complete if c <= e.edition]
            e = replace(e, observes=in_force[-1] if in_force else "")
        out.append(e)
    return out
