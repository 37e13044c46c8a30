"""The blind measure: a stratified sample of change rows drawn by a seed, a worksheet to judge, and
precision per class with its interval."""
import csv

import pytest

from devtools import audit
from pipeline.errors import PipelineError
from conftest import needs_archive


@needs_archive
def test_a_sample_covers_every_class_and_every_step_it_can(archive_run):
    _, processed = archive_run
    rows = audit.sample(processed, seed=7, per_class=12)
    classes = {r["class"] for r in rows}
    assert {"modified", "cosmetic", "added", "removed", "split", "renumbered"} <= classes
    added = [r for r in rows if r["class"] == "added"]
    assert len(added) == 12 and len({(r["from_edition"], r["to_edition"]) for r in added}) >= 8  # spread, not one step
    assert (all(r["new_text"] and r["new_source"] for r in added)
            and all(r["old_text"] for r in rows if r["class"] == "removed"))
    assert audit.sample(processed, seed=7, per_class=12) == rows  # the seed decides
    assert audit.sample(processed, seed=8, per_class=12) != rows


def test_the_worksheet_scores_precision_with_an_interval(seeds_run, tmp_path):
    _, processed = seeds_run
    rows = audit.sample(processed, seed=1, per_class=3)
    sheet, readable = audit.write(rows, tmp_path, 1)
    assert f"## Row {len(rows)}:" in readable.read_text(encoding="utf-8")
    judged = list(csv.DictReader(sheet.open(encoding="utf-8")))
    for k, r in enumerate(judged):
        r["verdict"] = "wrong" if k == 0 else "right"
    with sheet.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, audit.COLUMNS)
        writer.writeheader()
        writer.writerows(judged)
    table = {t["class"]: t for t in audit.score(sheet)}
    first = table[judged[0]["class"]]
    assert first["right"] == first["judged"] - 1 and 0 < first["low"] < first["precision"] < first["high"] <= 1


def test_a_worksheet_row_without_a_verdict_is_named(tmp_path):
    sheet = tmp_path / "audit.csv"
    sheet.write_text(",".join(audit.COLUMNS) + "\n" + "1,added" + "," * (len(audit.COLUMNS) - 2) + "\n")
    with pytest.raises(PipelineError, match="line 2: verdict must be one of right, wrong, unsure"):
        audit.score(sheet)


@pytest.mark.parametrize("right, n, low, high", [(15, 15, 0.796, 1.0), (0, 10, 0.0, 0.278), (49, 50, 0.895, 0.996)])
def test_wilson_interval(right, n, low, high):
    got = audit.wilson(right, n)
    assert got == pytest.approx((low, high), abs=0.001)
