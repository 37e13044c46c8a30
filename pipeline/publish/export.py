"""Records -> pandas -> processed/: CSV (RFC 4180, UTF-8, CRLF; list fields as JSON), Parquet and
the SQLite database. Column order, types and keys come from pipeline/schema.py. No JSON Lines: the
Parquet twin serves typed readers, and a third copy of every text tripled the folder's size."""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import asdict
from operator import attrgetter
from pathlib import Path

import pandas as pd

from pipeline.ingest.clean import compare_form
from pipeline.errors import PipelineError
from pipeline.ingest.lockfile import fetched_url
from pipeline.records import CleanDoc, Edition, Rejection, Rule, edition_status, rule_key
from pipeline.publish import parquet, unchanged
from pipeline.publish.database import Database
from pipeline.schema import BY_NAME, WORDING
from pipeline.atomic import write_atomic_with

LAYOUT = {"line breaks", "blank lines", "indentation and trailing spaces"}  # counted, not logged line by line


def frame(table: str, rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=BY_NAME[table].names)


def rule_chunks(rules: list[Rule], history: object | None = None):
    """The rules table in the chunks it is written in (CHUNK rows), each made when the last one is written:
    the whole frame of 313,000 rules (110 simulated editions) took 270 MB at once."""
    offsets: dict[tuple, list] = {}
    for i in range(0, len(rules), CHUNK):
        yield rule_rows(rules[i:i + CHUNK], history, offsets)


def rule_rows(rules: list[Rule], history: object | None = None, offsets: dict | None = None) -> pd.DataFrame:
    """The rules table, column by column. `compare` is not stored (the loader derives it from the
    text: it must be derivable) and sentences are offsets into the text, not a second copy of it.
    Most rules repeat an earlier edition's wording: offsets are found once per wording (in `offsets`,
    shared by the chunks of one table)."""
    lineage = history.lineage if history else {}
    last_changed = history.last_changed if history else {}
    offsets = {} if offsets is None else offsets
    sentences = []
    for r in rules:
        base = r.text or r.title
        if r.compare != compare_form(base):
            raise PipelineError(f"rule {r.rule_id} ({r.edition}): its comparison form is not compare_form(text): "
                                "it would be lost in export")
        known = offsets.get((base, r.sentences))
        if known is None:
            known = offsets[base, r.sentences] = sentence_offsets(base, r.sentences)
        sentences.append(known)
    keys = [rule_key(r) for r in rules]
    data = {c: list(map(attrgetter(c), rules)) for c in BY_NAME["rules"].names
            if c not in ("lineage_id", "last_changed", "sentences", "citations", "rule_flags")}
    data.update(lineage_id=[lineage.get(k, "") for k in keys], last_changed=[last_changed.get(k, "") for k in keys],
                sentences=sentences, citations=[[asdict(c) for c in r.citations] for r in rules],
                rule_flags=[list(r.flags) for r in rules])  # not "flags": that would hide pandas' DataFrame.flags
    return pd.DataFrame(data, columns=BY_NAME["rules"].names)


def sentence_offsets(base: str, sentences: tuple[str, ...]) -> list:
    """Each sentence as [start, end] into `base`, searched in order; one that is not a piece of
    `base` (spaCy cut a citation tag in two) stays a string, so nothing is lost."""
    out: list = []
    at = 0
    for sentence in sentences:
        start = base.find(sentence, at) if sentence else -1
        if start < 0:
            out.append(sentence)
        else:
            at = start + len(sentence)
            out.append([start, at])
    return out


def sentences_of(base: str, offsets) -> tuple[str, ...]:
    """The inverse of `sentence_offsets`."""
    return tuple(s if isinstance(s, str) else base[s[0]:s[1]] for s in offsets)


def change_rows(history, rules: list[Rule] | None = None) -> pd.DataFrame:
    """Every change; with `rules` (the published table), all but the plain unchanged ones, which the
    rules table already says (pipeline/publish/unchanged.py)."""
    return change_frame(stored_changes(history, rules))


def stored_changes(history, rules: list[Rule] | None = None, since: str = "") -> list:
    """The change records the table holds, in its order: with `rules`, the plain unchanged ones left out;
    with `since`, only the steps into that edition and the later ones (`rules` need hold only theirs:
    adding an edition filters its step's changes, not the 310,000 of 110 simulated editions)."""
    changes = [c for c in history.changes if c.to_edition >= since] if since else history.changes
    if rules is not None:
        examples = {(r.edition, lineage): len(r.examples) for r in rules
                    if (lineage := history.lineage.get(rule_key(r))) is not None}
        changes = [c for c in changes if not unchanged.plain(c, examples.get((c.to_edition, c.lineage_id), -1))]
    return sorted(changes, key=unchanged.order)


def change_frame(changes: list) -> pd.DataFrame:
    data = {k: list(map(attrgetter(k), changes)) for k in BY_NAME["changes"].names}
    for column in ("ops", "title_ops", "substitutions"):  # most are empty: no list built for them
        data[column] = [[list(op) for op in ops] if ops else [] for ops in data[column]]
    data["example_ops"] = [[[list(op) for op in ops] for ops in each] if each else [] for each in data["example_ops"]]
    return pd.DataFrame(data, columns=BY_NAME["changes"].names)


def lineage_rows(rules: list[Rule], history, eds: list[Edition]) -> pd.DataFrame:
    versions: dict[str, list[Rule]] = {}
    for r in rules:
        lineage = history.lineage.get(rule_key(r))
        if lineage:
            versions.setdefault(lineage, []).append(r)
    complete = sorted(e.edition for e in eds if e.complete)
    latest = complete[-1] if complete else ""
    ends = {c.lineage_id: c for c in history.changes if c.change in ("removed", "merged")}
    modifications = Counter(c.lineage_id for c in history.changes if c.change == "modified")
    rows = []
    for lineage in sorted(versions):
        rs = sorted(versions[lineage], key=lambda r: r.edition)
        last = rs[-1]
        end = ends.get(lineage)
        status = ("alive" if last.edition == latest else end.change if end else "unknown") if latest else "unknown"
        rows.append({"lineage_id": lineage, "kind": last.kind, "first_edition": rs[0].edition,
                     "last_edition": last.edition, "editions": len(rs),
                     "current_rule_id": last.rule_id, "status": status,
                     "ended": end.to_edition if end and status != "alive" else "",
                     "last_changed": history.last_changed[rule_key(last)], "modifications": modifications[lineage]})
    return frame("lineages", rows)


def reference_rows(rules: list[Rule]) -> pd.DataFrame:
    kinds: dict[tuple[str, str], str] = {}
    for r in rules:
        if r.kind not in ("glossary", "commentary"):
            kinds.setdefault((r.edition, r.rule_id), r.kind)
    rows = [{"edition": r.edition, "rule_id": r.rule_id, "kind": r.kind, "occurrence": r.occurrence,
             "target": t, "target_exists": (r.edition, t) in kinds, "target_kind": kinds.get((r.edition, t), "")}
            for r in rules for t in r.references]
    return frame("references", rows)


def terminology_rows(history) -> pd.DataFrame:
    counts = Counter((c.from_edition, c.to_edition, old, new) for c in history.changes
                     for old, new in c.substitutions)
    rows = [{"from_edition": a, "to_edition": b, "old": old, "new": new, "count": n}
            for (a, b, old, new), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[1], kv[0]))]
    return frame("terminology", rows)


def edition_rows(eds: list[Edition], rules: list[Rule]) -> pd.DataFrame:
    examples: dict[str, int] = {}
    for r in rules:
        if r.kind not in ("glossary", "commentary"):
            examples[r.edition] = examples.get(r.edition, 0) + len(r.examples)
    from pipeline import registry
    rows = []
    for e in eds:
        c = e.counts
        entry = registry.of(e.edition)
        rows.append({"edition": e.edition, "date": e.edition, "edition_end": e.edition_end,
                     "set_code": entry.set_code if entry else "", "set_name": entry.set_name if entry else "",
                     "status": edition_status(e), "observes": e.observes, "sources": list(e.sources),
                     "records": sum(c.values()), "parts": c.get("part", 0), "chapters": c.get("chapter", 0),
                     "sections": c.get("section", 0), "rules": c.get("rule", 0), "subrules": c.get("subrule", 0),
                     "rulings": c.get("ruling", 0), "glossary": c.get("glossary", 0),
                     "commentary": c.get("commentary", 0), "examples": examples.get(e.edition, 0),
                     "conflicts": e.conflicts})
    return frame("editions", rows)


def glossary_rows(rules: list[Rule], history: object | None = None) -> pd.DataFrame:
    rows = [{"edition": r.edition, "term": r.title, "occurrence": r.occurrence, "definition": r.text,
             "examples": r.examples, "references": r.references,
             "lineage_id": history.lineage.get(rule_key(r), "") if history else "", "source": r.source,
             "line_start": r.line_start, "line_end": r.line_end}
            for r in rules if r.kind == "glossary"]
    return frame("glossary", rows)


def source_rows(docs: list[CleanDoc], rejections: list[Rejection], records: dict[str, int]) -> pd.DataFrame:
    rows = []
    for d in docs:
        s = d.source
        by_reason = d.discarded_by_reason()
        rows.append({"source_id": s.source_id, "path": _shown(s.path), "format": s.format, "kind": s.kind,
                     "edition": d.edition or "", "edition_end": s.edition_end or "", "encoding": s.encoding,
                     "sha256": s.sha256, "bytes": s.n_bytes, "chars_total": d.chars_total,
                     "chars_kept": d.chars_kept, "chars_discarded": sum(by_reason.values()),
                     "discarded_by_reason": by_reason, "paragraphs": len(d.paragraphs),
                     "records": records.get(s.source_id, 0), "wrapped": d.wrapped, "complete": d.complete,
                     "warnings": list(d.warnings), "rejection": "", "url": s.url})
    for r in rejections:
        rows.append({"source_id": r.source_id or r.path.stem, "path": _shown(r.path), "format": "", "kind": "",
                     "edition": "", "edition_end": "", "encoding": "", "sha256": r.sha256, "bytes": r.n_bytes,
                     "chars_total": 0, "chars_kept": 0, "chars_discarded": 0, "discarded_by_reason": {},
                     "paragraphs": 0, "records": 0, "wrapped": False, "complete": False, "warnings": [],
                     "rejection": r.reason, "url": fetched_url(r.path)})
    return frame("sources", rows).sort_values(["source_id", "path"], kind="stable").reset_index(drop=True)


def _shown(path: Path) -> str:
    """The file under the name of the folder it was found in (raw/000_....txt, cr-archive/2003-10-01.txt):
    the same whatever the working directory, so outputs stay byte-identical."""
    shown = f"{path.parent.name}/{path.name}" if path.parent.name else path.name
    return os.fsencode(shown).decode("utf-8", "replace")  # a name that is not UTF-8: bytes shown as U+FFFD


def discard_rows(docs: list[CleanDoc]) -> pd.DataFrame:
    rows = [{"source_id": d.source.source_id, "line": x.line, "reason": x.reason, "chars": x.size, "text": x.text}
            for d in docs for x in d.discards if x.reason not in LAYOUT]
    return frame("discards", rows)


def renumbering_rows(history) -> pd.DataFrame:
    return frame("renumberings", history.renumberings)


def observation_rows(history) -> pd.DataFrame:
    return frame("observations", history.observations)


def citation_rows(rules: list[Rule], history, eds: list[Edition]) -> pd.DataFrame:
    """Every citation tag, with what the computed history says about it: for a [CompRules date]
    tag, whether the date falls in the window where the rule's wording last changed; for a
    [CR 204.1a] tag, which rule that is in the cited edition and in the latest one."""
    complete = sorted(e.edition for e in eds if e.complete)
    latest_number: dict[str, str] = {}  # lineage -> its number in the latest edition that has it
    first_seen: dict[str, str] = {}
    for k, lineage in sorted(history.lineage.items()):  # keys sort by edition first
        latest_number[lineage] = k[2]
        first_seen.setdefault(lineage, k[0])
    cited = history.cited
    rows = []
    for r in rules:
        for n, c in enumerate(r.citations, 1):
            row = {"edition": r.edition, "source": r.source, "rule_id": r.rule_id, "n": n, "part": c.part,
                   "cited_by": c.source, "value": c.value, "text": c.text, "lineage_id": "", "linked_by": "",
                   "last_changed": "", "agrees": "", "rule_in_cited_edition": "", "rule_in_latest_edition": ""}
            if c.source == "CR":
                lineage, how = cited.get((r.edition, r.rule_id, c.value), ("", ""))
                row.update(lineage_id=lineage, linked_by=how,
                           rule_in_cited_edition=c.value if how == "number" else "",
                           rule_in_latest_edition=latest_number.get(lineage, ""))
            elif re.fullmatch(r"\d{4}-\d\d-\d\d", c.value):
                key = rule_key(r)
                lineage, changed = history.lineage.get(key, ""), history.last_changed.get(key, "")
                row.update(lineage_id=lineage, linked_by="tagged rule", last_changed=changed,
                           rule_in_latest_edition=latest_number.get(lineage, ""))
                if c.source == "CompRules" and changed:
                    row["agrees"] = _agrees(c.value, changed, first_seen.get(lineage, ""), complete)
            rows.append(row)
    return frame("citations", rows)


def _agrees(tag: str, changed: str, first: str, complete: list[str]) -> str:
    """"yes" when the tag's date lies after the complete edition before `changed` and no later than
    `changed`; "unknown" when the rule's wording goes back to its first edition in the corpus and
    the tag is older than that (the corpus cannot tell); "no" otherwise."""
    before = [e for e in complete if e < changed]
    if changed == first and tag <= changed:
        return "unknown" if tag < changed else "yes"
    low = before[-1] if before else ""
    return "yes" if low < tag <= changed else "no"


# Compact JSON (no spaces after , and :): a tenth of the list columns' bytes; tuples encode as lists
TO_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
EMPTY = {"array": "[]", "object": "{}"}


class Texts:
    """Each distinct wording (text, examples and sentences, as JSON text) once, under its text_id: a
    hash, so the same wording has the same key in every run and edition. The CSV and database rows
    of rules and glossary name their wording by it."""

    def __init__(self, definition: dict[tuple[str, str], str] | None = None):
        self.key_of: dict[tuple[str, str, str], str] = {}
        self.wording: dict[str, tuple[str, str, str]] = {}
        # (text, examples) -> the key of the first rule with them: a glossary entry's wording. Given when
        # only a tail of the rules is flattened (pipeline/publish/grow.py): the earlier rules' keys come first.
        self.definition: dict[tuple[str, str], str] = dict(definition or {})

    def keys(self, name: str, flat: pd.DataFrame) -> list[str]:
        """The keys of a flattened chunk's wordings (a glossary entry's: of the rule it is, whose
        text and examples are its definition and examples)."""
        if name == "glossary":
            return [self.definition.get(w) or self.key((*w, "[]")) for w in zip(flat["definition"], flat["examples"])]
        return [self.key(w) for w in zip(flat["text"], flat["examples"], flat["sentences"])]

    def key(self, wording: tuple[str, str, str]) -> str:
        key = self.key_of.get(wording)
        if key is None:
            key = self.key_of[wording] = hashlib.sha256(TO_JSON(wording).encode("utf-8")).hexdigest()[:16]
            if self.wording.setdefault(key, wording) != wording:
                raise PipelineError(f"two wordings share the text_id {key}: {wording[0][:60]!r}, "
                                    f"{self.wording[key][0][:60]!r}")
            self.definition.setdefault(wording[:2], key)
        return key

    def frame(self) -> pd.DataFrame:
        rows = [{"text_id": k, "text": self.wording[k][0], "examples": json.loads(self.wording[k][1]),
                 "sentences": json.loads(self.wording[k][2])} for k in sorted(self.wording)]
        return frame("texts", rows)


def encoded(values, empty: str) -> list[str]:
    """Each value as compact JSON: an empty one without the encoder, and one list object shared by
    many rows (rule_rows' sentence offsets, once per wording) encoded once. Keyed by id: the values
    stay alive meanwhile, so no id is reused."""
    done: dict[int, str] = {}
    out = []
    for v in values:
        if not len(v):
            out.append(empty)
        else:
            text = done.get(id(v))
            if text is None:
                text = done[id(v)] = TO_JSON(v)
            out.append(text)
    return out


def flatten(chunk: pd.DataFrame, name: str, texts: Texts | None = None) -> pd.DataFrame:
    """List and object fields as JSON text, with `texts` the wording by its key: the CSV's (and the
    database's) form of a table."""
    flat = chunk.copy()
    for column in (c for c in BY_NAME[name].columns if c.type in ("array", "object")):
        flat[column.name] = encoded(flat[column.name], EMPTY[column.type])
    if texts is not None and name in WORDING:
        moved = WORDING[name]
        flat[moved[0]] = texts.keys(name, flat)
        flat = flat.drop(columns=list(moved[1:])).rename(columns={moved[0]: "text_id"})
    return flat


CHUNK = parquet.BATCH  # rows converted and written at a time: memory stays flat however big the run


def write_table(data: pd.DataFrame, folder: Path, name: str, db: Database | None = None, file: str | None = None,
                formats: tuple[str, ...] = ("csv", "parquet"), texts: Texts | None = None) -> None:
    """name.csv (list and object fields as JSON strings; with `texts`, a text by its key) and
    name.parquet (typed, the text in place), streamed in chunks; with `db`, the CSV's rows also go
    into the SQLite database."""
    table = BY_NAME[name]
    assert list(data.columns) == table.names, f"{name}: columns drift from pipeline/schema.py"
    chunks = [data.iloc[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [data]

    def csv(f):
        for n, chunk in enumerate(chunks):
            flat = flatten(chunk, name, texts)
            flat.to_csv(f, index=False, header=n == 0, lineterminator="\r\n")
            if db is not None:  # the database stores lists as the same JSON text
                db.add(name, flat)

    file = file or name
    if "parquet" in formats:
        parquet.write(folder, name, chunks, file)
    if "csv" in formats:
        write_atomic_with(folder / f"{file}.csv", csv)
