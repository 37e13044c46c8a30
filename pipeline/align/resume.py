"""The walk of lineages resumed where the last run's stopped, so that adding an edition walks that edition alone.

`lineage.build` walks every edition from the first: adding the 110th simulated edition read 109 pairs back from
the pairs cache, keyed them, decoded them and set their lineages again (about 5 s; the new pair alone 1 s). What
a walk makes of the editions up to E (their changes, their records' lineages and last changes, what copies
observe) depends on those editions only, so it is kept per edition in the cache file, under E's key in the walk
(pipeline/publish/stagefiles.py `step_keys`: the content of every edition up to E, the overrides and the code).
A run then takes the newest complete edition S whose walk up to it is kept, reads that back, and walks S and
what follows with `lineage.build` (S first: its records get lineage ids named after S, which are then renamed to
the kept ones, and a last change in S becomes the kept one). The result is what the whole walk gives; when it
cannot be (no such S, S's own ids would collide) the whole walk is made as before.
"""
from __future__ import annotations

from dataclasses import fields, replace
from itertools import repeat
from pathlib import Path

from pipeline.align import lineage
from pipeline.cache import Cache, Damaged, code_hash, tuples
from pipeline.records import History, RuleChange, rule_key

CHANGE_FIELDS = tuple(f.name for f in fields(RuleChange))
NESTED = ("ops", "title_ops", "example_ops", "substitutions")  # tuples of tuples, lists in JSON


def build(rules, eds, overrides, pairs, steps: dict[str, str], cache_file: Path | None, progress=None,
          warnings: list[str] | None = None) -> History:
    """`lineage.build(rules, eds, overrides, pairs, progress)`, resumed from the walk the cache file keeps.
    `steps`: each edition's key in the walk; `warnings` gets what is said of a damaged cache."""
    kept = Cache(cache_file, "walks", code_hash("pipeline.align.resume", ("rapidfuzz", "scipy")), packed=True)
    try:
        order = sorted(steps)
        shared: dict[str, str] = {}
        found = kept.get_many([steps[e] for e in order], lambda value: _decode(value, shared))
        history = _resumed(rules, eds, overrides, pairs, steps, order, found, progress)
        if history is None:
            history = lineage.build(rules, eds, overrides, pairs, progress=progress)
        kept.put_many([(steps[e], value) for e, value in _split(history, [e for e in order
                                                                          if steps[e] not in found]).items()])
    finally:
        kept.close()
        if warnings is not None:
            warnings += kept.warnings
    return history


def _resumed(rules, eds, overrides, pairs, steps, order, found, progress) -> History | None:
    walked = {r.edition for r in rules if r.kind != "commentary"}
    complete = {e.edition for e in eds if e.complete and not e.truncated and not e.observes}
    prefix = []
    for edition in order:
        if steps[edition] not in found:
            break
        prefix.append(edition)
    starts = [e for e in prefix if e in walked and e in complete and e != min(walked)]
    if not starts:
        return None
    start = starts[-1]
    kept = History()
    for edition in prefix[:prefix.index(start) + 1]:
        _join(kept, found[steps[edition]])
    tail = lineage.build([r for r in rules if r.edition >= start], [e for e in eds if e.edition >= start],
                         overrides, pairs, progress=progress)
    firsts = [rule_key(r) for r in rules if r.edition == start and r.kind != "commentary"]
    if any(k not in kept.lineage or k not in kept.last_changed for k in firsts):
        return None
    rename = {tail.lineage[k]: kept.lineage[k] for k in firsts}
    if len(rename) != len(firsts):  # two of S's records named alike: the renaming would be ambiguous
        return None
    last = {kept.lineage[k]: kept.last_changed[k] for k in firsts}
    kept.chain.extend(tail.chain[1:])
    kept.changes.extend(replace(c, lineage_id=rename[c.lineage_id]) if c.lineage_id in rename else c
                        for c in tail.changes)
    for key, lin in tail.lineage.items():
        if key[0] == start:
            continue
        kept.lineage[key] = rename.get(lin, lin)
        changed = tail.last_changed[key]
        kept.last_changed[key] = last[rename[lin]] if changed == start and lin in rename else changed
    kept.observations.extend({**o, "lineage_id": rename.get(o["lineage_id"], o["lineage_id"])}
                             for o in tail.observations)
    return kept


def _join(history: History, value: dict) -> None:
    """One edition's part of a kept walk added to `history`."""
    history.changes.extend(value["changes"])
    history.lineage.update(zip(value["keys"], value["lineage"]))
    history.last_changed.update((k, v) for k, v in zip(value["keys"], value["last"]) if v)
    history.observations.extend(value["observations"])
    if value["chain"]:
        history.chain.append(value["edition"])


def _split(history: History, editions: list[str]) -> dict[str, dict]:
    """The walk's part of each of `editions`, as the cache keeps it."""
    wanted = set(editions)
    parts = {e: {"edition": e, "changes": [], "keys": [], "lineage": [], "last": [], "observations": [],
                 "chain": e in history.chain} for e in editions}
    for c in history.changes:
        if c.to_edition in wanted:
            parts[c.to_edition]["changes"].append(c)
    for key, lin in history.lineage.items():
        if key[0] in wanted:
            part = parts[key[0]]
            part["keys"].append(key)
            part["lineage"].append(lin)
            part["last"].append(history.last_changed.get(key, ""))
    for o in history.observations:
        if o["edition"] in wanted:
            parts[o["edition"]]["observations"].append(o)
    for part in parts.values():
        changes, part["plain"] = _plain(part)
        part["changes"] = {name: [getattr(c, name) for c in changes] for name in CHANGE_FIELDS}
    return parts


def _continued(frm: str, to: str, lineage: str, key: tuple, examples: int) -> RuleChange:
    """The change of a record that went on word for word under its number (`key`, its record's key)."""
    return RuleChange(frm, to, lineage, key[2], key[2], key[1], "unchanged", False, 100.0, False, "same", 100.0,
                      (), (), _no_ops(examples), (), "")


def _no_ops(examples: int) -> tuple:
    """`example_ops` of a plain change: an empty tuple per example, shared."""
    return EMPTY_OPS[examples] if examples < len(EMPTY_OPS) else ((),) * examples


EMPTY_OPS = tuple(((),) * n for n in range(16))
# The types the cache reads back as a plain change's (numpy's, from the alignment's matrices, are kept as
# the Python values they hold, pipeline/cache.py `_plain`)
KEPT_AS = {bool: ("bool", "bool_"), float: ("float", "float64")}


def _plain(part: dict) -> tuple[list[RuleChange], dict[str, list]]:
    """A part's changes split into those kept in full and the plain ones (most of them: 303,000 of 312,000 in
    110 simulated editions), kept as columns (their record's index in the part, the edition they came from, how
    many examples) and made again from the part's record keys and lineages (`_continued`); `placed`: where the
    changes kept in full go among them. Reading the kept walk back spent most of its time decoding, checking
    and sharing the plain ones' 17 fields. A change is kept short only when what `_continued` makes of it is
    the change, value and type alike."""
    where, twice = {}, set()  # (lineage, kind, number) -> its record; two records alike: changes kept in full
    for j, (key, lin) in enumerate(zip(part["keys"], part["lineage"])):
        if (lin, key[1], key[2]) in where:
            twice.add((lin, key[1], key[2]))
        where[lin, key[1], key[2]] = j
    for alike in twice:
        del where[alike]
    full, placed, plain = [], [], {"record": [], "from": [], "examples": []}
    for at, c in enumerate(part["changes"]):
        j = where.get((c.lineage_id, c.kind, c.new_rule_id)) if c.change == "unchanged" else None
        if j is not None and c == _continued(c.from_edition, c.to_edition, c.lineage_id, part["keys"][j],
                                             len(c.example_ops)) and c.to_edition == part["edition"] \
                and all(type(v).__name__ in KEPT_AS[type(x)] for v, x in ((c.renumbered, False), (c.review, False),
                                                                         (c.similarity, 100.0), (c.score, 100.0))):
            plain["record"].append(j)
            plain["from"].append(c.from_edition)
            plain["examples"].append(len(c.example_ops))
        else:
            full.append(c)
            placed.append(at)
    return full, {**plain, "placed": placed}


def _continuations(value: dict, keys: list, lineage: list, one) -> list[RuleChange]:
    """A kept part's plain changes made again, in whole-column steps (a function call per change took longer
    than decoding them in full had)."""
    plain = value["plain"]
    records, froms, examples = plain["record"], plain["from"], plain["examples"]
    if not (len(records) == len(froms) == len(examples)) or not all(
            type(j) is int and 0 <= j < len(keys) for j in records) or not all(
            type(n) is int and n >= 0 for n in examples) or not all(type(f) is str for f in froms) or \
            not isinstance(value["edition"], str):
        raise Damaged("not an edition's walk")
    numbers = [keys[j][2] for j in records]
    n = len(records)
    return list(map(RuleChange, map(one, froms, froms), repeat(one(value["edition"], value["edition"]), n),
                    [lineage[j] for j in records], numbers, numbers, [keys[j][1] for j in records],
                    repeat("unchanged", n), repeat(False, n), repeat(100.0, n), repeat(False, n), repeat("same", n),
                    repeat(100.0, n), repeat((), n), repeat((), n), map(_no_ops, examples), repeat((), n),
                    repeat("", n)))


TEXTS = ("from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "kind", "change", "method")


def _decode(value: dict, shared: dict[str, str]) -> dict:
    """An edition's part of a kept walk back into records. Every text read from JSON is a new string: those that
    repeat (editions, numbers, lineage ids, kinds) are made one object again through `shared`, as the walk shares
    them with the rules (without it the add-one run's peak memory was 200 MB higher)."""
    columns = value["changes"]
    if set(columns) != set(CHANGE_FIELDS) or len({len(v) for v in columns.values()}) > 1 or \
            len({len(value[n]) for n in ("keys", "lineage", "last")}) != 1:
        raise Damaged("not an edition's walk")
    one = shared.setdefault
    for name in NESTED:
        columns[name] = [tuples(v) if v else () for v in columns[name]]
    for name in TEXTS:
        columns[name] = list(map(one, columns[name], columns[name]))
    full = list(map(RuleChange, *(columns[name] for name in CHANGE_FIELDS)))
    keys = value["keys"] = [(one(e, e), one(k, k), one(n, n), o) for e, k, n, o in value["keys"]]
    lineage = value["lineage"] = list(map(one, value["lineage"], value["lineage"]))
    value["last"] = list(map(one, value["last"], value["last"]))
    if "plain" not in value:
        value["changes"] = full
        return value
    changes = _continuations(value, keys, lineage, one)
    placed = value["plain"]["placed"]
    if len(placed) != len(full) or not all(type(at) is int for at in placed) or \
            placed != sorted(set(placed)) or (placed and not 0 <= placed[0] <= placed[-1] < len(changes) + len(full)):
        raise Damaged("not an edition's walk")
    for at, c in zip(placed, full):  # in order, each where it was among them
        changes.insert(at, c)
    value["changes"] = changes
    return value
