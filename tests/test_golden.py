"""Golden outputs for the five seeds: every record and every discard, as reviewed.

After an intended change, regenerate with `UPDATE_GOLDEN=1 make test` and review the git diff.
"""
import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from pipeline.publish.export import LAYOUT
from conftest import SEEDS

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_lines(result, source_id):
    doc = next(d for d in result.ingested.docs if d.source.source_id == source_id)
    lines = [{"accounting": {"total": doc.chars_total, "kept": doc.chars_kept, **doc.discarded_by_reason()}}]
    lines += [{"discard": [d.line, d.reason, d.text]} for d in doc.discards if d.reason not in LAYOUT]
    for r in result.rules:
        if source_id in r.source.split(";"):
            record = asdict(r)
            record.pop("pieces")
            lines.append({"record": record})
    return [json.dumps(line, ensure_ascii=False, sort_keys=True) for line in lines]


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_seed_matches_golden(seeds_run, key):
    result, _ = seeds_run
    path = GOLDEN / f"{SEEDS[key]}.jsonl"
    got = golden_lines(result, SEEDS[key])
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text("".join(line + "\n" for line in got), encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with UPDATE_GOLDEN=1 and review it"
    expected = path.read_text(encoding="utf-8").splitlines()
    assert got == expected
