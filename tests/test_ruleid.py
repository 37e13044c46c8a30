"""One RuleId: parse, shape, parent, sort key, previous/next and ranges, with near misses."""
import pytest

from pipeline.records import CHANGES, KINDS, METHODS
from pipeline.ruleid import RuleId, expand_range, parent, sort_key


@pytest.mark.parametrize("text, shape, parent_id", [
    ("1", "part", ""), ("212", "chapter", "2"), ("212.1", "rule", "212"), ("212.10b", "subrule", "212.10"),
    ("212.8.Ruling.1", "ruling", "212.8"), ("212.2h-k", "range", "212.2"), ("702.10", "rule", "702"),
])
def test_parse(text, shape, parent_id):
    rule = RuleId.parse(text)
    assert rule is not None and str(rule) == text and rule.shape == shape and rule.parent == parent_id
    assert parent(text) == parent_id


@pytest.mark.parametrize("text", ["0", "21", "2121", "212.", "212.1B", "212.1bb", "Ability", "", "212.1b.", "10"])
def test_near_misses_are_not_rule_numbers(text):
    assert RuleId.parse(text) is None and parent(text) == ""


@pytest.mark.parametrize("text, previous, following", [
    ("212.1b", "212.1a", "212.1c"), ("212.1a", "", "212.1b"), ("212.1m", "212.1k", "212.1n"),
    ("212.1p", "212.1n", "212.1q"), ("212.1z", "212.1y", ""), ("212.2", "212.1", "212.3"), ("212.1", "", "212.2"),
    ("212", "", ""),
])
def test_previous_and_next_skip_l_and_o(text, previous, following):
    rule = RuleId.parse(text)
    assert (rule.previous(), rule.next()) == (previous, following)


def test_ranges_and_sorting():
    assert RuleId.parse("212.2h-k").expand() == ("212.2h", "212.2i", "212.2j", "212.2k")
    assert expand_range("702.5k", "702.5p") == ("702.5k", "702.5m", "702.5n", "702.5p")
    assert expand_range("702.5c", "702.5a") == ("702.5c", "702.5a")  # backwards: left as printed
    assert expand_range("702.5a", "703.5c") == ("702.5a", "703.5c")
    numbers = ["212.10a", "212.2", "212.10", "212", "Ability", "212.1b", "2"]
    assert sorted(numbers, key=sort_key) == ["2", "212", "212.1b", "212.2", "212.10", "212.10a", "Ability"]


def test_the_literals_cover_what_a_run_writes(seeds_run):
    result, _ = seeds_run
    assert {r.kind for r in result.rules} <= set(KINDS)
    assert {c.change for c in result.history.changes} <= set(CHANGES)
    assert {c.method for c in result.history.changes} <= set(METHODS)
