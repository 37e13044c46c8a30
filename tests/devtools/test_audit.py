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


def _judged(cls, step, verdict, should_be=""):
    a, b = step
    return {"class": cls, "from_edition": a, "to_edition": b, "verdict": verdict, "should_be": should_be}


def test_recall_of_split_pieces_and_merges_is_estimated_from_the_wrong_added_and_removed_rows():
    """A wrong `added` row that should be a split piece is a piece the history missed; each judged row
    stands for the rows of its step and class it was drawn from (the sample is not proportional)."""
    s1, s2 = ("2000-01-01", "2001-01-01"), ("2001-01-01", "2002-01-01")
    rows = [_judged("split", s1, "right"), _judged("split", s1, "right"),
            _judged("added", s1, "wrong", "split piece of 101.2"), _judged("added", s1, "right"),
            _judged("added", s2, "right"), _judged("added", s2, "unsure", "split piece of 101.3?"),
            _judged("removed", s2, "wrong", "merged into 506.2"), _judged("removed", s2, "wrong", "modified: 506.3"),
            _judged("merged", s2, "right")]
    population = {("split", s1): 10, ("added", s1): 100, ("added", s2): 50, ("removed", s2): 20, ("merged", s2): 5}
    got = {t["class"]: t for t in audit.recall(rows, population)}
    assert got["split"]["found"] == 10 and got["split"]["missed"] == 50  # 100 added x 1 of 2 judged
    assert got["split"]["recall"] == pytest.approx(10 / 60)
    assert got["merged"]["found"] == 5 and got["merged"]["missed"] == 10  # 20 removed x 1 of 2 judged
    assert got["merged"]["recall"] == pytest.approx(5 / 15) and got["merged"]["wrong_rows"] == 1
