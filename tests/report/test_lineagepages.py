"""A lineage page that goes on into the latest edition is made of its versions up to the last change only
(open_tail), so a new edition that simply continues the rule leaves the page's key and bytes as they are."""
import pytest

from pipeline.report.lineagepages import open_tail

E = ["2001", "2002", "2003", "2004", "2005"]
CHANGED = {"change": "modified", "note": "", "renumbered": False}


def inputs(editions, steps, copies=None, end=None):
    records = [{"edition": e, "rule_id": "100.1", "kind": "rule"} for e in editions]
    return {"id": "L", "records": records, "steps": steps, "copies": copies or [False] * len(editions), "end": end}


def kept(result):
    return [r["edition"] for r in result["records"]], result["since"]


@pytest.mark.parametrize("editions, steps, copies, expected", [
    # unchanged since 2002 into the latest: the page ends at 2002
    (E, [None, CHANGED, None, None, None], None, (["2001", "2002"], "2002")),
    # changed in the latest edition: nothing to cut, but open (the next edition may simply continue it)
    (E, [None, None, None, None, CHANGED], None, (E, "2005")),
    # never changed: the first version, then every later edition
    (E, [None] * 5, None, (["2001"], "2001")),
    # not in 2004: a gap, the run is listed as it is
    (["2001", "2002", "2003", "2005"], [None, CHANGED, None, None], None, (["2001", "2002", "2003", "2005"], "")),
    # not in the latest edition (it ended): closed
    (E[:4], [None, CHANGED, None, None], None, (E[:4], "")),
    # an unofficial copy stands in for 2005: closed
    (E, [None, CHANGED, None, None, None], [False, False, False, False, True], (E, "")),
])
def test_only_a_run_in_every_edition_up_to_the_latest_is_cut(editions, steps, copies, expected):
    assert kept(open_tail(inputs(editions, steps, copies), E)) == expected


def test_a_new_edition_that_continues_the_rule_gives_the_same_inputs():
    before = open_tail(inputs(E, [None, CHANGED, None, None, None]), E)
    after = open_tail(inputs(E + ["2006"], [None, CHANGED, None, None, None, None]), E + ["2006"])
    assert before == after
    changed = open_tail(inputs(E + ["2006"], [None, CHANGED, None, None, None, CHANGED]), E + ["2006"])
    assert changed != before


def test_a_run_is_written_by_its_ends_only_when_it_is_in_consecutive_editions():
    whole = open_tail(inputs(E, [None, CHANGED, None, None, CHANGED]), E)
    assert whole["follows"] == [False, True, True, True, True]
    gap = open_tail(inputs(["2001", "2003", "2004"], [None, None, CHANGED]), E)
    assert gap["follows"] == [False, False, True]
