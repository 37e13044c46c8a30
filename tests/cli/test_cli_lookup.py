"""The CLI as a new user meets it (issue 14): compare shows everything, --json always parses,
history explains itself, rule numbers and dates are read the way people write them."""
import json
import re
import sqlite3

import pandas as pd
import pytest
from click.testing import CliRunner

from pipeline import lookup
from devtools.cli import main as devtools_main
from pipeline.cli.main import main
from conftest import ARCHIVE, RAW, needs_archive

HEAD = "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game\n\n100. General\n\n"


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


@pytest.mark.parametrize("typed, expected", [
    ("205.1a", "205.1a"), ("CR 205.1a", "205.1a"), ("205.1a.", "205.1a"), ("205.1A", "205.1a"),
    ("rule 205.1a", "205.1a"), ("  205.1a ", "205.1a"), ("205", "205"), ("212.8.Ruling.1", "212.8.Ruling.1"),
    # near misses that must not change
    ("Summoning Sickness", "Summoning Sickness"), ("CR", "CR"), ("Rules Text", "Rules Text"),
])
def test_rule_numbers_are_normalised(typed, expected):
    assert lookup.normalise(typed) == expected


def test_suggestions_and_edition_in_force():
    known = {"205.1", "205.1a", "205.1b", "702.19b", "Summoning Sickness"}
    assert (lookup.suggestions("205.1z", known)[:2] == ["205.1a", "205.1b"]
            or "205.1a" in lookup.suggestions("205.1z", known))
    assert lookup.suggestions("summoning sicknes", known) == ["Summoning Sickness"]
    assert lookup.suggestions("999.9z", known) == []
    editions = ["2003-10-01", "2009-07-11", "2011-06-17"]
    assert lookup.in_force("2010-01-01", editions) == "2009-07-11"
    assert lookup.in_force("2011-06-17", editions) == "2011-06-17"
    with pytest.raises(Exception, match="no edition was in force on 2001-01-01: the first is 2003-10-01"):
        lookup.in_force("2001-01-01", editions)


@pytest.mark.parametrize("day", ["2008-13-45", "2010-02-30", "2010-00-10"])
def test_an_impossible_date_is_no_date_in_force(day):
    # compare, history --edition and cite took 2099-13-45 for "the edition in force then"
    with pytest.raises(Exception, match=f"^'{day}' is not a real date \\(YYYY-MM-DD\\); editions: 2003-10-01$"):
        lookup.in_force(day, ["2003-10-01"])


def _files(tmp_path):
    (tmp_path / "a.txt").write_text(HEAD.format("May 1, 2009") + "100.1. A player may play a card from his or her "
                                    "hand.\nExample: A player plays a land.\n\n100.2. Each game has a winner.\n\n"
                                    "100.3. Dropped rule text.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text(HEAD.format("July 11, 2009").replace("100. General", "100. Generalities") +
                                    "100.1. Each game has a winner.\n\n100.2. A player may cast a card from their "
                                    "hand.\nExample: A player casts a land.\n\n100.4. A brand new rule here.\n",
                                    encoding="utf-8")


def test_compare_shows_added_removed_titles_and_examples(tmp_path):
    _files(tmp_path)
    result = invoke("compare", tmp_path / "a.txt", tmp_path / "b.txt")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "    + A brand new rule here." in out.splitlines()
    assert "    - Dropped rule text." in out.splitlines()
    assert "title: [-General-]{+Generalities+}" in out
    assert "example 1: Example: A player [-plays-]{+casts+} a land." in out


@needs_archive
def test_every_json_option_gives_valid_json(tmp_path, seeds_run):
    _, processed = seeds_run
    _files(tmp_path)
    (tmp_path / "cases.csv").write_text("from_edition,to_edition,old,new,expected,evidence\n"
                                        "2009-05-01,2009-07-11,212.9c,306.3,same,test\n", encoding="utf-8")
    runs = {
        "history": ["history", "205.1a", "--processed", processed],
        "compare": ["compare", tmp_path / "a.txt", tmp_path / "b.txt"],
        "cite": ["cite", "[CR 205.1a]", "--as-of", "2025-06-06", "--processed", processed],
        "identify": ["identify", next(RAW.glob("004_*.txt")), "--processed", processed],
    }
    runs = {name: (main, args) for name, args in runs.items()}
    runs["accuracy"] = (devtools_main, ["accuracy", "--corpus", ARCHIVE, "--cases", tmp_path / "cases.csv"])
    with_json = {name for group in (main, devtools_main) for name, cmd in group.commands.items()
                 if any(p.name == "as_json" for p in cmd.params)}
    assert with_json == set(runs)  # a new --json command needs a case here
    for name, (group, args) in runs.items():
        result = CliRunner().invoke(group, [str(a) for a in args] + ["--json"])
        assert result.exit_code == 0, (name, result.output)
        json.loads(result.stdout)


@needs_archive
@pytest.mark.parametrize("a, b", [("2009-05-01", "2009-07-11"), ("2025-06-06", "2026-01-16")])
def test_compare_counts_are_the_datasets_counts(archive_run, a, b):
    _, processed = archive_run
    result = CliRunner().invoke(main, ["compare", a, b, "--processed", str(processed), "--json"])
    assert result.exit_code == 0, result.output[-500:]
    found = pd.Series([c["change"] for c in json.loads(result.stdout)]).value_counts().to_dict()
    with sqlite3.connect(processed / "crdiff.sqlite") as db:  # changes.csv leaves out the plain unchanged rows
        changes = pd.read_sql("SELECT * FROM changes_all", db)
    expected = changes[(changes.from_edition == a) & (changes.to_edition == b)].change.value_counts().to_dict()
    assert found == expected
    assert sum(1 for c in json.loads(result.stdout) if c["kind"] == "glossary") > 100


@needs_archive
def test_compare_backwards_lists_each_ending_once(archive_run):
    """Two editions the run has no step for are aligned afresh, and recorded as a step is: a rule that
    ended in a merge is not also removed, nor one continued also merged (500.4 was both, backwards)."""
    _, processed = archive_run
    result = CliRunner().invoke(main, ["compare", "2026-01-16", "2025-06-06", "--processed", str(processed), "--json"])
    assert result.exit_code == 0, result.output[-500:]
    changes = json.loads(result.stdout)
    ends = [c["old_rule_id"] for c in changes if c["change"] in ("removed", "merged")]
    assert len(ends) == len(set(ends))
    kept = {c["old_rule_id"] for c in changes if c["change"] not in ("removed", "merged", "split")}
    assert not kept & set(ends)
    forward = CliRunner().invoke(main, ["compare", "2025-06-06", "2026-01-16", "--processed", str(processed),
                                        "--json"])
    added = sum(c["change"] == "added" for c in json.loads(forward.stdout))
    assert abs(added - sum(c["change"] == "removed" for c in changes)) <= 2  # the same step, seen from its end


@needs_archive
def test_history_of_a_renamed_term_names_it_once_and_calls_it_renamed(archive_run, tmp_path):
    _, processed = archive_run
    lines = invoke("history", "Mana Value", "--processed", processed).output.splitlines()
    line = next(x for x in lines if x.startswith("  2025-06-06"))
    assert line.startswith("  2025-06-06  Mana Value renamed (renamed from Converted Mana Cost)"), line
    missing = invoke("compare", tmp_path / "nope.txt", "2026-01-16", "--processed", processed)
    assert missing.exit_code == 1 and "nope.txt: no such file" in missing.output


@needs_archive
def test_history_explains_itself(archive_run):
    _, processed = archive_run
    out = invoke("history", "212.1b", "--processed", processed).output
    lines = out.splitlines()
    assert lines[0].startswith("3 lineages carried 212.1b")
    first = next(i for i, line in enumerate(lines) if line.startswith("[1/3] lineage 2003-10-01:212.1b: "))
    assert "first" in lines[first + 1] and "When an object's type changes" in lines[first + 2]  # the first text
    heading = invoke("history", "205", "--processed", processed, "--edition", "2026-01-16").output
    assert "205        “Type Line”" in heading
    for typed in ("CR 205.1a", "205.1a.", "205.1A"):
        result = invoke("history", typed, "--processed", processed, "--edition", "2026-01-16")
        assert result.exit_code == 0 and "lineage 2003-10-01:212.1b" in result.output, typed
    result = invoke("history", "205.1a", "--processed", processed, "--edition", "2014-01-01")
    assert result.exit_code == 0 and "2014-01-01 is not an edition: 2013-05-01 is the edition in force" in result.output
    result = invoke("history", "205.1z", "--processed", processed)
    assert result.exit_code == 1 and "did you mean 205.1" in result.output
    result = invoke("history", "205.1a", "--processed", processed, "--edition", "1999-01-01")
    assert result.exit_code == 1 and "the first is 2003-10-01" in result.output


def test_history_shows_commentary_text(seeds_run):
    _, processed = seeds_run
    out = invoke("history", "205.1a", "--processed", processed).output
    assert "commentary 002_fe0d7c38d7e9f0fd.c4 (" in out and "citing 204.1a" in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "commentary 002_fe0d7c38d7e9f0fd.c4" in line)
    assert len(lines[at + 1].strip()) > 20  # its words, not only its id


@needs_archive
def test_history_shows_every_change_and_when_each_lineage_had_the_number(archive_run):
    _, processed = archive_run
    out = invoke("history", "115.7e", "--processed", processed).output
    lines = out.splitlines()
    added = next(i for i, line in enumerate(lines) if "2011-06-17  114.6e" in line)
    assert "added" in lines[added] and "only the final set of targets" in lines[added + 1]  # an added rule whole
    assert any("Example: Arc Trail is an instant" in line for line in lines[added + 1:added + 6])
    last = next(i for i, line in enumerate(lines) if "2026-01-16  115.7e" in line)
    assert "[-another-]{+any other+}" in " ".join(lines[last + 1:])  # changed only in its example
    title = invoke("history", "2", "--edition", "2009-07-11", "--processed", processed).output
    assert "title: Parts of [-the Game-]{+a Card+}" in title
    many = invoke("history", "212.1b", "--processed", processed).output.splitlines()
    assert "[1/3] lineage 2003-10-01:212.1b: 212.1b in 2003-10-01 … 2009-05-01, now 205.1a" in many
    assert "[3/3] lineage 2020-06-01:212.1b: 212.1b in 2020-06-01, now 213.1b" in many


@needs_archive
def test_history_shows_a_typography_change_as_its_swaps(archive_run):
    _, processed = archive_run
    lines = invoke("history", "212.1b", "--edition", "2003-10-01", "--processed", processed).output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  2005-10-01  212.1b     cosmetic"))
    assert lines[at + 1].strip() == "typography only: object's -> object’s ×5, don't -> don’t, doesn't -> doesn’t"
    assert lines[at + 2].startswith("  2006-07-15  212.1b     cosmetic")  # not the paragraph again


def test_terminal_lines_are_not_broken_inside_hyphenated_words(tmp_path):
    url = " ".join(f"see-rules-documents-{i}" for i in range(12))
    (tmp_path / "a.txt").write_text(HEAD.format("May 1, 2009") + f"100.1. The rules of most tournaments, {url}.\n",
                                    encoding="utf-8")
    (tmp_path / "b.txt").write_text(HEAD.format("July 11, 2009") + f"100.1. The rules of every tournament, {url}.\n",
                                    encoding="utf-8")
    out = invoke("compare", tmp_path / "a.txt", tmp_path / "b.txt").output
    words = " ".join(line.strip() for line in out.splitlines()[2:])
    assert re.findall(r"see-rules-documents-\d+", words) == [f"see-rules-documents-{i}" for i in range(12)], out
