"""The page model of a lineage (lineage/*.html): its versions with their redlines, runs of unchanged
versions collapsed, how it ended, the commentary citing it, its splits and merges; and its entry in the
search index.

A lineage that goes on unchanged into the latest edition ends its page with an open run, "unchanged since E in
every later edition of these reports" (`open_tail`): the page is made of the versions up to E only, so its key
and bytes stay the same when a new edition simply continues it, and it is not rendered again. app.js lists the
editions since E from editions.js; without script the page says no more than what stays true.
"""
from __future__ import annotations


import pandas as pd

from pipeline.align.diff import observed_note
from pipeline.report import editionpages as reader
from pipeline.report import redline
from pipeline.report.links import lineage_file
from pipeline.report.pairpages import segments


def _lineage_inputs(rules: list[dict], changes: pd.DataFrame, citations: pd.DataFrame, current: str = "",
                    now=lambda lineage, edition: "", observations: pd.DataFrame | None = None,
                    standing: set[str] = frozenset()):
    """Everything a lineage's page shows, one lineage at a time: its records by edition, the change that
    reached each (or, for a copy's record, what it shows of the edition it observes), how it ended, the
    commentary citing it, its splits and merges, its current number."""
    worth = changes[(changes.change != "unchanged") | changes.renumbered.astype(bool)]  # the rest reads "unchanged"
    by_step = {(c["lineage_id"], c["to_edition"]): c for c in worth.to_dict(orient="records")}
    for o in ([] if observations is None else observations.to_dict(orient="records")):
        by_step[(o["lineage_id"], o["edition"])] = {"change": "observed", "note": observed_note(o), "renumbered": False}
    ends = {}
    for c in changes[changes.change.isin(["removed", "merged"])].to_dict(orient="records"):
        ends.setdefault(c["lineage_id"], c)
    notes: dict[str, list[dict]] = {}
    commentary = {(r["edition"], r["rule_id"]): r for r in rules if r["kind"] == "commentary"}
    for c in citations.to_dict(orient="records"):
        if c["lineage_id"] and c["cited_by"] == "CR":
            note = commentary.get((c["edition"], c["rule_id"]))
            if note and all(n["rule_id"] != note["rule_id"] for n in notes.get(c["lineage_id"], [])):
                notes.setdefault(c["lineage_id"], []).append({**note, "cited": c["value"], "linked_by": c["linked_by"],
                                                               "now": now(c["lineage_id"], c["edition"])})
    groups: dict[str, list[dict]] = {}
    for r in rules:
        if r["lineage_id"]:
            groups.setdefault(r["lineage_id"], []).append(r)
    relations = _relations(rules, changes)
    for lineage in sorted(groups):
        records = sorted(groups[lineage], key=lambda r: r["edition"])
        last = records[-1]
        yield {"id": lineage, "records": records, "steps": [by_step.get((lineage, r["edition"])) for r in records],
               "copies": [r["edition"] in standing for r in records],
               "end": ends.get(lineage), "notes": notes.get(lineage, []), "relations": relations.get(lineage, []),
               "current": (last["rule_id"] if last["edition"] == current
                           and last["kind"] not in ("glossary", "commentary") else "")}


def open_tail(inputs: dict, complete: list[str]) -> dict:
    """The inputs without their last run of plain unchanged versions, when that run is in every complete
    edition after the version before it, and in no other edition (else, a copy, a fragment or a gap: the page
    lists the run in full, as before); `since` is the edition of the last version kept ("" when the page is not
    open). A lineage changed in the latest edition is open too, with nothing cut: the next edition that simply
    continues it leaves its page as it is."""
    records, steps, copies = inputs["records"], inputs["steps"], inputs["copies"]
    k = len(records)
    while k > 1 and steps[k - 1] is None and not copies[k - 1]:
        k -= 1
    last = records[k - 1]["edition"]
    shown = not copies[k - 1] and (steps[k - 1] or {}).get("change") != "observed" and last in complete
    if not shown or [r["edition"] for r in records[k:]] != complete[complete.index(last) + 1:]:
        k = len(records)
        last = ""
    # a version that comes in the complete edition right after the one before it: a run of them is listed by
    # its ends, and app.js lists the editions between (what a later edition adds does not change this)
    after = {a: b for a, b in zip(complete, complete[1:])}
    follows = [i > 0 and after.get(records[i - 1]["edition"]) == records[i]["edition"] for i in range(k)]
    return {**inputs, "records": records[:k], "steps": steps[:k], "copies": copies[:k], "since": last,
            "follows": follows}


def _lineage(inputs: dict) -> dict:
    """A lineage's page: its versions with their redlines, runs of unchanged versions collapsed."""
    versions, previous = [], None
    for r, step, copy, after in zip(inputs["records"], inputs["steps"], inputs["copies"], inputs["follows"]):
        change = step["change"] if step else ("first" if previous is None else "unchanged")
        # a copy's text, shown whole; the next version is compared with the last official one
        observed = change == "observed"
        if previous is None or observed:
            parts = redline.parts(r, r, {}, segments)
        else:  # an unchanged version is one line of a run, without its text (_collapse)
            parts = redline.parts(previous, r, step, segments) if step else []
        since = None if observed else previous
        versions.append({**r, "change": change, "note": step["note"] if step else "",
                         "renumbered": bool(step) and bool(step["renumbered"]),
                         "parts": parts, "from_edition": since["edition"] if since is not None else "",
                         "from_rule_id": since["rule_id"] if since is not None else "",
                         "anchor": reader.anchor(r["rule_id"], r["kind"]), "examples": r["examples"],
                         "citations": r["citations"], "flags": r["rule_flags"],
                         "source_ids": r["source"].split(";"), "unofficial": copy, "follows": after})
        if not observed:
            previous = r
    return {"id": inputs["id"], "versions": versions, "end": inputs["end"], "rows": _collapse(versions),
            "since": inputs["since"],
            "current": inputs["current"], "numbers": list(dict.fromkeys(v["rule_id"] for v in versions)),
            "kind": versions[-1]["kind"], "notes": inputs["notes"], "relations": inputs["relations"]}


def _collapse(versions: list[dict]) -> list[dict]:
    """Runs of unchanged versions (same words, same number) become one line each; a run in consecutive
    complete editions is listed by its ends (`whole`: app.js fills in the editions between)."""
    rows: list[dict] = []
    for v in versions:
        if v["change"] == "unchanged" and not v["renumbered"]:
            if rows and "run" in rows[-1]:
                rows[-1]["run"].append(v)
                rows[-1]["whole"] = rows[-1]["whole"] and v["follows"]
            else:
                rows.append({"run": [v], "whole": True})
        else:
            rows.append({"version": v})
    return rows


def _relations(rules: list[dict], changes: pd.DataFrame) -> dict[str, list[dict]]:
    """Splits and merges seen from each lineage involved: where a rule came from, which pieces were
    cut from it, which ended rules it took in. Each entry links to the other lineage."""
    lineage_of = {(r["edition"], r["rule_id"]): r["lineage_id"] for r in rules if r["kind"] != "commentary"}
    out: dict[str, list[dict]] = {}
    moved = changes[changes.change.isin(["split", "merged"])].to_dict(orient="records")
    for c in moved:
        old = lineage_of.get((c["from_edition"], c["old_rule_id"]), "")
        new = lineage_of.get((c["to_edition"], c["new_rule_id"]), "")
        if c["change"] == "split":
            out.setdefault(c["lineage_id"], []).append(
                _relation("split from", c["old_rule_id"], c["from_edition"], old))
            out.setdefault(old, []).append(_relation("piece split off into", c["new_rule_id"], c["to_edition"], new))
        else:
            out.setdefault(new, []).append(_relation("took in", c["old_rule_id"], c["from_edition"], old))
    return out


def _relation(how: str, rule_id: str, edition: str, lineage: str) -> dict:
    return {"how": how, "rule_id": rule_id, "edition": edition, "href": lineage_file(lineage) if lineage else ""}


def _index_entry(lineage_id: str, records: list[dict]) -> list:
    last = records[-1]
    return [lineage_file(lineage_id), "\t".join(dict.fromkeys(r["rule_id"] for r in records)), last["kind"],
            records[0]["edition"], last["edition"], last["text"] or last["title"]]
