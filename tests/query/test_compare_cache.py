"""`compare` of two files keeps each file's segmentation (by its bytes) and the pair's alignment (by the
pair's content) in processed/.cache: asked again, it answers the same without segmenting or aligning."""
import json
from dataclasses import astuple, replace

from click.testing import CliRunner

from pipeline.cli.main import main
from pipeline.query.compare import _decode_rules, _row
from pipeline.records import Citation, Rule
from conftest import HEAVY, imported_by

HEAD = "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n1. Game\n\n100. General\n\n"


def _files(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(HEAD.format("May 1, 2001") + "100.1. Each game has a winner.\n100.1a A subrule.\n", encoding="utf-8")
    b.write_text(HEAD.format("July 11, 2001") + "100.1. Each game has one winner.\n100.1a A subrule.\n"
                 "100.1b New.\n", encoding="utf-8")
    return a, b


def test_compare_again_is_answered_from_the_cache(tmp_path, monkeypatch):
    a, b = _files(tmp_path)
    args = ["compare", str(a), str(b), "--json", "--processed", str(tmp_path / "processed")]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert '"change": "modified"' in first.output and '"change": "added"' in first.output

    def forbidden(*_, **__):
        raise AssertionError("computed again")
    monkeypatch.setattr("pipeline.segment.read.rules", forbidden)
    monkeypatch.setattr("pipeline.align.lineage.align", forbidden)
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert again.output == first.output


def test_a_changed_file_is_read_again(tmp_path):
    a, b = _files(tmp_path)
    args = ["compare", str(a), str(b), "--processed", str(tmp_path / "processed")]
    assert "100.1b" in CliRunner().invoke(main, args).output
    b.write_text(HEAD.format("July 11, 2001") + "100.1. Each game has a winner.\n100.1a A subrule.\n", encoding="utf-8")
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0 and "100.1b" not in second.output and "modified" not in second.output


def test_asked_again_the_answer_comes_without_importing_spacy(tmp_path):
    a, b = _files(tmp_path)
    args = ["compare", a, b, "--processed", tmp_path / "processed"]
    found, first = imported_by(*args)
    assert "spacy" in found and "100.1 -> 100.1  modified" in first
    assert not found & {"pandas", "pyarrow"}  # two files: neither the datasets nor the report are read
    assert "bs4" not in found  # nor a page of HTML
    found, again = imported_by(*args)
    assert again == first and not found & set(HEAVY)


def test_each_form_of_the_answer_is_kept_apart(tmp_path):
    a, b = _files(tmp_path)
    args = ["compare", str(a), str(b), "--processed", str(tmp_path / "processed")]
    text, as_json = (CliRunner().invoke(main, args + extra).output for extra in ([], ["--json"]))
    assert CliRunner().invoke(main, args + ["--json"]).output == as_json and as_json.startswith("[")
    assert CliRunner().invoke(main, args).output == text and text.startswith("added: 1")
    every = CliRunner().invoke(main, args + ["--all"]).output
    assert "100.1a -> 100.1a  unchanged" in every and "100.1a -> 100.1a" not in text


def test_a_files_records_come_back_from_the_cache_as_they_went_in():
    rule = Rule("2001-05-01", "a.txt", "100.1", "rule", "100", "Game", "Each game. [CR 100.1]", "each game.",
                examples=("One.", "Two."), citations=(Citation("CR", "100.1", "[CR 100.1]"),), flags=("partial",),
                pieces=((0, 5), (7, 9)))
    rules = [rule, replace(rule, rule_id="100.2", citations=())]
    rows = [_row(r) for r in rules]
    assert rows == [list(astuple(r)) for r in rules]
    assert _decode_rules(json.loads(json.dumps(rows))) == rules
