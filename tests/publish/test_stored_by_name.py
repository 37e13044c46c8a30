"""Records are stored and restored by field name: every field of every stored record survives the
round trip, so a field added to a record and forgotten by a store fails here. Each record is filled
with a value that is not its default for every field, whatever fields it has."""
from __future__ import annotations

import json
from dataclasses import MISSING, fields
from pathlib import Path
from typing import get_args

import pytest

from pipeline.align import lineage
from pipeline.ingest import stored as cleaned
from pipeline.publish import stagefiles
from pipeline.records import (Change, CleanDoc, Discard, Ingested, Kind, Match, Method, Paragraph, Rejection,
                              RuleChange, SourceDoc)

OPS = (("replace", 0, 1, 0, 1, "a", "b"),)
BY_NAME = {"ops": OPS, "title_ops": OPS, "example_ops": (OPS, ()), "substitutions": (("play", "cast"),)}
BY_TYPE = {"str": "s", "str | None": "s", "int": 7, "int | None": 7, "float": 42.5, "bool": True, "Path": Path("/x/y"),
           "tuple[str, ...]": ("a", "b"), "Kind": get_args(Kind)[-1],
           "Change": get_args(Change)[-1], "Method": get_args(Method)[-1]}


def filled(cls, **given):
    """`cls` with every field not `given` set to a value unlike its default (its name, for text)."""
    values = {}
    for f in fields(cls):
        if f.name in given:
            continue
        if f.name in BY_NAME:
            values[f.name] = BY_NAME[f.name]
        elif f.type in ("str", "str | None"):
            values[f.name] = f"{f.name}-value"
        elif f.type in BY_TYPE:
            values[f.name] = BY_TYPE[f.type]
        else:
            pytest.fail(f"{cls.__name__}.{f.name}: no sample value for type {f.type}: add one here")
        assert values[f.name] != f.default or f.default is MISSING, f"{cls.__name__}.{f.name}: sample is the default"
    return cls(**values, **given)


def test_ingest_stage_file_keeps_every_field(tmp_path, monkeypatch):
    doc = filled(CleanDoc, source=filled(SourceDoc), paragraphs=(filled(Paragraph),), discards=(filled(Discard),))
    ingested = Ingested(docs=[doc], rejections=[filled(Rejection)])
    stagefiles.save_ingested(tmp_path, ingested)
    monkeypatch.setattr(stagefiles.publish, "verify", lambda *a, **k: "")  # no run.json: not a published run
    assert stagefiles.load_ingested(tmp_path) == ingested


@pytest.mark.parametrize("data", [b"%PDF-1.4 a container: its text is kept", b"text-value\n  second line"])
def test_cleaned_sources_cache_keeps_every_field(tmp_path, data):
    # A text file's text is decoded again from its bytes, a paragraph that is its lines stripped and joined
    # is made again from them: the others are kept whole.
    source = filled(SourceDoc, text=data.decode())
    doc = filled(CleanDoc, source=source, paragraphs=(filled(Paragraph), Paragraph("text-value second line", 1, 2)),
                 discards=(filled(Discard),))
    first = cleaned.CleanedFiles(tmp_path / "c.sqlite")
    first.put("k", doc, data)
    first.close()
    assert cleaned.CleanedFiles(tmp_path / "c.sqlite").get("k", source.path, data) == doc


def test_pairs_cache_keeps_every_field():
    change, match = filled(RuleChange), filled(Match, old=1, new=2)
    stored = json.loads(json.dumps([[lineage._by_name(match)], [lineage._by_name(change)]]))
    assert set(stored[1][0]) == {f.name for f in fields(RuleChange)}  # by name, not by position
    old, new = [None] * 2, [None] * 3
    matches, diffs = lineage._decode_pair(stored, old, new)
    assert matches == [match] and diffs == {(1, 2, match.method): change}
