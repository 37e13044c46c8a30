"""`history` in a terminal: runs of unchanged editions folded into one line (--all unfolds them),
splits and merges shown under the step where they happen; --json keeps every step."""
import json

import pytest
from click.testing import CliRunner

from pipeline import run as stages
from pipeline.cli.main import main
from pipeline.query import history as lineages

HEAD = ("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game Concepts\n\n"
        "100. General\n\n")
SAME = ("100.1. These Magic rules apply to any Magic game with two or more players.\n\n"
        "100.2. To play, each player needs their own deck of traditional Magic cards.\n\n")
WHOLE = ("100.3. Each player begins the game with a starting life total of 20. A player who has 0 or less life "
         "loses the game the next time a player would receive priority.\n\n"
         "100.4. A player can concede the game at any time during any step or phase.\n\n"
         "100.5. A player who concedes leaves the game immediately and loses the game.\n\n")
PIECES = ("100.3a. Each player begins the game with a starting life total of 20.\n\n"  # 100.3 split in two
          "100.3b. A player who has 0 or less life loses the game the next time a player would receive priority.\n\n"
          "100.4. A player can concede the game at any time during any step or phase. "  # 100.5 merged in
          "A player who concedes leaves the game immediately and loses the game.\n\n")
EDITIONS = (("May 1, 2009", WHOLE), ("July 11, 2009", WHOLE), ("October 1, 2009", WHOLE),
            ("January 1, 2010", PIECES), ("April 1, 2010", PIECES))


@pytest.fixture(scope="module")
def five_editions(tmp_path_factory):
    """Five small official editions: 100.1 never changes; in the fourth 100.3 is split and 100.5 merged."""
    root = tmp_path_factory.mktemp("five")
    (root / "raw").mkdir()
    (root / "corpus").mkdir()
    for n, (day, body) in enumerate(EDITIONS):
        (root / "corpus" / f"e{n}.txt").write_text(HEAD.format(day) + SAME + body, encoding="utf-8")
    stages.run_datasets(root / "raw", [root / "corpus"], root / "processed", quiet=True)
    return root / "processed"


def history(processed, *args):
    result = CliRunner().invoke(main, ["history", *map(str, args), "--processed", str(processed)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_unchanged_editions_are_one_line(five_editions):
    assert history(five_editions, "100.1") == [
        "lineage 2009-05-01:100.1",
        "  2009-05-01  100.1      first   [e0 lines 9-9]",
        "      These Magic rules apply to any Magic game with two or more players.",
        "  2009-07-11 … 2010-04-01  unchanged (4 editions)",
    ]


def test_all_shows_every_step(five_editions):
    steps = [line for line in history(five_editions, "100.1", "--all") if line.startswith("  20")]
    assert steps == [f"  {day}  100.1      {change}   [e{n} lines 9-9]" for n, (day, change) in enumerate(
        [("2009-05-01", "first"), ("2009-07-11", "unchanged"), ("2009-10-01", "unchanged"),
         ("2010-01-01", "unchanged"), ("2010-04-01", "unchanged")])]


def test_json_keeps_every_step_and_relation(five_editions):
    (lineage,) = json.loads("\n".join(history(five_editions, "100.4", "--json")))
    assert [v["change"] for v in lineage["versions"]] == ["first", "unchanged", "unchanged", "modified", "unchanged"]
    assert lineage["relations"] == [{"how": "took in", "rule_id": "100.5", "edition": "2009-10-01"}]


def test_a_merge_is_shown_under_its_step(five_editions):
    assert history(five_editions, "100.4") == [
        "lineage 2009-05-01:100.4",
        "  2009-05-01  100.4      first   [e0 lines 15-15]",
        "      A player can concede the game at any time during any step or phase.",
        "  2009-07-11 … 2009-10-01  unchanged (2 editions)",
        "  2010-01-01  100.4      modified   [e3 lines 17-17]",
        "    merged with 100.5 of 2009-10-01",
        "      A player can concede the game at any time during any step or phase{+. A player who concedes leaves",
        "      the game immediately and loses the game+}.",
        "  2010-04-01  100.4      unchanged   [e4 lines 17-17]",
    ]
    ended = history(five_editions, "100.5")
    assert ended[-2:] == ["  2009-07-11 … 2009-10-01  unchanged (2 editions)", "  2010-01-01  merged into 100.4"]


def test_a_split_is_shown_under_its_step_on_both_sides(five_editions):
    piece = history(five_editions, "100.3a")
    assert piece[1:3] == ["  2010-01-01  100.3a     split (renumbered)   [e3 lines 13-13]",
                          "    split from 100.3 of 2009-10-01"]
    rest = history(five_editions, "100.3b")
    at = rest.index("  2010-01-01  100.3b     modified (renumbered)   [e3 lines 15-15]")
    assert rest[at + 1] == "    split off into 100.3a"
    assert rest[-1] == "  2010-04-01  100.3b     unchanged   [e4 lines 15-15]"  # nothing listed after the steps


@pytest.mark.parametrize("relation, step", [
    ({"how": "piece split off into", "rule_id": "1.2", "edition": "2002"}, 1),  # at the edition it went to
    ({"how": "split from", "rule_id": "1.2", "edition": "2001"}, 1),  # the edition it came from: the next step
    ({"how": "took in", "rule_id": "1.2", "edition": "2002"}, 3),  # the copy (observed) is no step
    ({"how": "took in", "rule_id": "1.2", "edition": "2009"}, None),  # no step of this lineage: listed at the end
])
def test_relations_by_step(relation, step):
    versions = [{"edition": e, "change": c} for e, c in
                [("2001", "first"), ("2002", "modified"), ("2002-06", "observed"), ("2003", "unchanged")]]
    assert lineages.relations_by_step({"versions": versions, "relations": [relation]}) == {step: [relation]}
