"""Dating undated fragments: the window of editions in which every rule they hold had that text."""
import json
import shutil

import pytest
from click.testing import CliRunner

from pipeline import run as stages
from pipeline.cli.main import main
from pipeline.query.identify import identify_files
from pipeline.segment.dating import edition_texts, verdict, version, window
from pipeline.records import Rule
from conftest import ARCHIVE, RAW, SEEDS, needs_archive


def rule(rule_id, text, edition="", flags=()):
    return Rule(edition, "x", rule_id, "subrule", "", "", text, text, flags=flags)


TEXTS = edition_texts([rule("1.1a", "Old words.", "2001"), rule("1.1b", "Same.", "2001"),
                       rule("1.1a", "Old words.", "2002"), rule("1.1b", "Same.", "2002"),
                       rule("1.1a", "New words.", "2003"), rule("1.1b", "Same.", "2003"),
                       rule("1.1a", "Old words.", "2004")], {"2001", "2002", "2003", "2004"})


@pytest.mark.parametrize("fragment, expected", [
    ([rule("1.1a", "Old words."), rule("1.1b", "Same.")], ("2001", "2002")),  # 2004 lost 1.1b
    ([rule("1.1a", "Old words.")], ("2001", "2002", "2004")),  # reverted words match again
    ([rule("1.1b", "Same.")], ("2001", "2002", "2003")),
    ([rule("1.1a", "words.", flags=("partial",))], ("2001", "2002", "2003", "2004")),
    # near misses: one word off, or a number the editions never had
    ([rule("1.1a", "Old word.")], ()),
    ([rule("1.1c", "Same.")], ()),
])
def test_window(fragment, expected):
    found = window(fragment, TEXTS)
    assert found.editions == expected
    assert bool(found.misses) == (not expected)


def glossary(term, text, edition=""):
    return Rule(edition, "x", term, "glossary", "", "", text, text)


def test_a_glossary_term_is_found_whatever_its_quotes():
    # 2003-10-01.txt prints '"As though"' and "Isn't"; its PDF (and later TXTs) “As though” and Isn’t
    texts = edition_texts([glossary('"As though"', "Text of as though.", "2003"),
                           glossary("Attacks and Isn't Blocked", "An attacking creature.", "2003"),
                           glossary("“As though”", "Other words.", "2005")], {"2003", "2005"})
    found = window([glossary("“As though”", "Text of as though."),
                    glossary("Attacks and Isn’t Blocked", "An attacking creature.")], texts)
    assert found.editions == ("2003",)


def test_a_definition_whose_paragraphs_break_elsewhere_still_matches():
    # a PDF has no blank lines to tell a glossary definition's paragraphs apart: its TXT twin breaks
    # "Leaves Play" after "See rule 410.10c." where the PDF runs on
    texts = edition_texts([glossary("Leaves Play", "A permanent leaves play.\nIf a token leaves play.", "2003")],
                          {"2003"})
    assert window([glossary("Leaves Play", "A permanent leaves play. If a token leaves play.")],
                  texts).editions == ("2003",)
    assert window([glossary("Leaves Play", "A permanent leaves play. If a token leaves.")], texts).editions == ()


def test_one_rule_in_two_files_must_match_with_both_texts():
    # 1.1a has "Old words." in 2001, 2002 and 2004, "New words." in 2003: no edition has both
    found = window([rule("1.1a", "Old words."), rule("1.1a", "New words.")], TEXTS)
    assert found.editions == ()
    assert found.misses == {"1.1a": ()}


@pytest.fixture(scope="module")
def processed(archive_run):
    return archive_run[1]


@needs_archive
@pytest.mark.parametrize("seeds, expected", [
    (["004"], ("2025-06-06",)),
    # with the whole archive this is 2006-07-15 ... 2007-02-01; of the twelve shared editions only
    # 2006-07-15 has these words, since 2007-10-01 changed them
    (["001", "003"], ("2006-07-15",)),
])
def test_identify_the_seeds(processed, seeds, expected):
    found = identify_files([RAW / f"{SEEDS[s]}.txt" for s in seeds], processed)
    assert found.window.editions == expected


@needs_archive
def test_identify_cli(processed):
    result = CliRunner().invoke(main, ["identify", "--processed", str(processed),
                                       str(RAW / f"{SEEDS['001']}.txt"), str(RAW / f"{SEEDS['003']}.txt")])
    assert result.exit_code == 0, result.output
    assert "54 rules; matches 2006-07-15" in result.output


@needs_archive
def test_identify_cli_names_the_closest_edition_when_none_matches(processed):
    """The rulings page of 2008-03-17 quotes rules with its own small differences: no edition holds them all,
    and the edition most of them agree with is named (its rules are tagged up to [CompRules 2008/02/01])."""
    result = CliRunner().invoke(main, ["identify", "--processed", str(processed), str(RAW / f"{SEEDS['000']}.txt")])
    assert result.exit_code == 0, result.output
    assert "matches no edition" in result.output and "  closest: 2008-02-01 (" in result.output
    assert "  1 rule (212.4j) matches 2008-02-01" in result.output


def test_identify_cli_without_a_run(tmp_path):
    result = CliRunner().invoke(main, ["identify", "--processed", str(tmp_path), str(RAW / f"{SEEDS['004']}.txt")])
    assert result.exit_code == 1 and "crdiff.sqlite is missing" in result.output


@needs_archive
def test_manifest_edition_auto(tmp_path):
    raw, corpus = tmp_path / "raw", tmp_path / "corpus"
    raw.mkdir()
    corpus.mkdir()
    for key in ("001", "003"):
        shutil.copy(RAW / f"{SEEDS[key]}.txt", raw)
    (raw / "manifest.toml").write_text("".join(
        f'[[source]]\nfile = "{SEEDS[k]}.txt"\nformat = "copy"\nkind = "copy"\nedition = "auto"\nlanguage = "en"\n\n'
        for k in ("001", "003")), encoding="utf-8")
    for name in ("2005-10-01.txt", "2006-07-15.txt", "2007-10-01.txt"):
        shutil.copy(ARCHIVE / name, corpus)
    result = stages.run_datasets(raw, [corpus], tmp_path / "processed", quiet=True)
    dated = {d.source.source_id: (d.edition, d.warnings) for d in result.ingested.docs}
    for key in ("001", "003"):
        edition, warnings = dated[SEEDS[key]]
        assert edition == "2006-07-15" and any("edition auto: its" in w for w in warnings)
    assert {r.edition for r in result.rules if SEEDS["001"] in r.source} == {"2006-07-15"}


def test_identify_refuses_a_pipe_rather_than_waiting_on_it(tmp_path):
    import os
    import subprocess
    import sys
    from conftest import ROOT
    os.mkfifo(tmp_path / "fifo")
    done = subprocess.run([sys.executable, "-m", "pipeline", "identify", "--processed", str(tmp_path),
                           str(tmp_path / "fifo")], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == f"Error: {tmp_path / 'fifo'}: not a regular file (a pipe, socket or device)\n"


def v(text, *examples):
    return version(text, examples)


@pytest.mark.parametrize("mine, cut, theirs, expected", [
    (v("A “quoted” word."), "whole", v("A “quoted” word."), "exact"),
    (v('A "quoted" word.'), "whole", v("A “quoted” word."), "other typography"),  # the copier's quotes
    (v("A quoted word."), "whole", v("A “quoted” word."), "other words"),
    (v("A rule."), "whole", v("A rule.", "Example: one."), "exact"),  # examples left out: no evidence
    (v("A rule.", "Example: one."), "whole", v("A rule.", "Example: one.", "Example: two."), "exact"),
    (v("A rule.", "Example: three."), "whole", v("A rule.", "Example: one."), "other examples"),
    (v("A rule that stops"), "end", v("A rule that stops here."), "start"),  # cut mid-rule
    (v("A rule that stops"), "whole", v("A rule that stops here."), "other words"),
    (v("A rule.", "Example: cut"), "end", v("A rule.", "Example: cut short."), "start"),
    (v("A rule", "Example: cut"), "end", v("A rule.", "Example: cut short."), "other words"),  # its text is whole
    (v("that stops here."), "inside", v("A rule that stops here."), "inside"),  # text before the first number
    (v("A rule."), "whole", None, "absent"),
])
def test_verdict(mine, cut, theirs, expected):
    assert verdict(mine, cut, theirs) == expected


def test_exact_typography_narrows_the_window():
    texts = edition_texts([rule("1.1a", 'A "word".', "2001"), rule("1.1a", "A “word”.", "2002"),
                           rule("1.1a", "A “word”.", "2003")], {"2001", "2002", "2003"})
    found = window([rule("1.1a", "A “word”.")], texts)
    assert found.editions == ("2001", "2002", "2003") and found.exactly == ("2002", "2003")
    assert window([rule("1.1a", "A word.")], texts).editions == ()


def test_the_last_rule_of_a_file_may_be_cut_short_the_others_not():
    texts = edition_texts([rule("1.1a", "Old words.", "2001"), rule("1.1b", "Same words here.", "2001")], {"2001"})
    assert window([rule("1.1a", "Old words."), rule("1.1b", "Same wor")], texts).editions == ("2001",)
    assert window([rule("1.1b", "Same wor"), rule("1.1a", "Old words.")], texts).editions == ()


@pytest.fixture
def clippings(tmp_path):
    folder = tmp_path / "clippings"
    folder.mkdir()
    shutil.copy(RAW / f"{SEEDS['004']}.txt", folder / "type-line.md")
    (folder / "evolve.txt").write_text("702.98a Evolve is a triggered ability.\n", encoding="utf-8")
    (folder / "nothing.txt").write_text("Nothing to see here.\n", encoding="utf-8")
    return folder


@needs_archive
def test_identify_a_folder_of_clippings_each_alone(processed, clippings):
    result = CliRunner().invoke(main, ["identify", "--processed", str(processed), str(clippings)])
    assert result.exit_code == 1  # one clipping could not be read; the others are dated
    assert f"{clippings / 'type-line.md'}: 34 rules; matches 2025-06-06" in result.output
    assert f"{clippings / 'evolve.txt'}: 1 rule; matches 2013-05-01" in result.output  # its start
    assert f"{clippings / 'nothing.txt'}: error: " in result.output and "--format" in result.output


@needs_archive
def test_identify_each_file_alone_or_together_as_json(processed):
    files = [str(RAW / f"{SEEDS[k]}.txt") for k in ("001", "004")]
    alone = CliRunner().invoke(main, ["identify", "--each", "--json", "--processed", str(processed), *files])
    together = CliRunner().invoke(main, ["identify", "--json", "--processed", str(processed), *files])
    assert [f["window"]["editions"] for f in json.loads(alone.stdout)["fragments"]] == \
        [["2006-07-15"], ["2025-06-06"]]
    [both] = json.loads(together.stdout)["fragments"]
    assert both["window"] is None and both["rules"] == 24 + 34 and both["closest"] == ["2025-06-06"]
    assert set(both["rules_by_verdict"]["absent"]) >= {"212.1d", "212.1e"}


def test_a_file_nothing_describes_asks_for_format(tmp_path):
    (tmp_path / "notes.txt").write_text("Some notes about the rules.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["identify", "--processed", str(tmp_path), str(tmp_path / "notes.txt")])
    assert result.exit_code == 1 and "name its format with --format" in result.output
