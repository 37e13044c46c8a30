"""`cite`: a text's CR citations rewritten from one edition's numbers to another's (issue 14, point 5).

The small tests run on hand-made datasets whose history is known: 100.1 renumbered to 100.2,
100.2 removed, 100.3 split (a piece became 100.4), 100.5 modified, 100.6 merged into 100.7, 101.1a-c
renumbered 101.2a-c. The archive tests run the real pipeline (and say so when the archive is missing)."""
import json

import pytest
from click.testing import CliRunner

from pipeline.query import cite
from pipeline.publish import export
from pipeline.publish import transaction as publish
from pipeline.schema import BY_NAME
from pipeline.cli.main import main
from conftest import RAW, SEEDS, needs_archive

A, B, C = "2010-01-01", "2011-01-01", "2012-01-01"
RULES = [  # edition, rule_id, kind, lineage_id
    (A, "100.1", "rule", "L1"), (B, "100.2", "rule", "L1"), (C, "100.2", "rule", "L1"),
    (A, "100.2", "rule", "L2"),
    (A, "100.3", "rule", "L3"), (B, "100.3", "rule", "L3"), (C, "100.3", "rule", "L3"), (B, "100.4", "rule", "L4"),
    (C, "100.4", "rule", "L4"),
    (A, "100.5", "rule", "L5"), (B, "100.5", "rule", "L5"), (C, "100.5", "rule", "L5"),
    (A, "100.6", "rule", "L6"), (A, "100.7", "rule", "L7"), (B, "100.7", "rule", "L7"), (C, "100.8", "rule", "L7"),
    (A, "101", "chapter", "L9"), (B, "101", "chapter", "L9"), (C, "101", "chapter", "L9"),
    *[(e, f"101.{n}{x}", "subrule", f"L10{x}") for e, n in ((A, 1), (B, 2), (C, 2)) for x in "abc"],
    (A, "A note", "commentary", ""), (A, "Flash", "glossary", "G1"),
]
CHANGES = [  # from, to, lineage, old, new, change
    (A, B, "L1", "100.1", "100.2", "unchanged"), (B, C, "L1", "100.2", "100.2", "unchanged"),
    (A, B, "L2", "100.2", "", "removed"),
    (A, B, "L3", "100.3", "100.3", "modified"), (A, B, "L4", "100.3", "100.4", "split"),
    (A, B, "L5", "100.5", "100.5", "unchanged"), (B, C, "L5", "100.5", "100.5", "modified"),
    (A, B, "L6", "100.6", "100.7", "merged"), (A, B, "L7", "100.7", "100.7", "modified"),
    (B, C, "L7", "100.7", "100.8", "unchanged"),
    *[(A, B, f"L10{x}", f"101.1{x}", f"101.2{x}", "unchanged") for x in "abc"],
]


DEFAULTS = {"string": "", "edition": "", "date": None, "boolean": False, "number": 0.0, "integer": 0, "array": [],
            "object": {}}


@pytest.fixture
def processed(tmp_path):
    """The three tables cite reads, published as a run writes them (Parquet, listed in run.json)."""
    staging = publish.begin(tmp_path)

    def write(name, header, rows):
        columns = BY_NAME[name].columns
        full = [{c.name: dict(zip(header, row)).get(c.name, DEFAULTS[c.type]) for c in columns} for row in rows]
        export.write_table(export.frame(name, full), staging, name, formats=("parquet",))
    write("rules", ["edition", "rule_id", "kind", "lineage_id"], RULES)
    write("changes", ["from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "change"], CHANGES)
    write("editions", ["edition", "status"],
          [(A, "complete"), (B, "complete"), (C, "complete"), ("2011-06-01", "fragment")])
    publish.commit(tmp_path, "test-run")
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, ["cite", *map(str, args)])


def remap(processed, text, a=A, b=C):
    return cite.cite(text, cite.from_processed(processed), a, b)


@pytest.mark.parametrize("written, expected, status", [
    ("[CR 100.1]", "[CR 100.2]", "renumbered"),  # each form keeps its shape
    ("{{CR|100.1}}", "{{CR|100.2}}", "renumbered"),
    ("{{CR|100.1}", "{{CR|100.2}", "renumbered"),  # the wiki's broken template
    ("see rule 100.1.", "see rule 100.2.", "renumbered"),
    ("CR 100.1", "CR 100.2", "renumbered"),
    ("Rule 100.5", "Rule 100.5", "modified"),
    ("(see 100.1)", "(see 100.2)", "renumbered"),
    ("rules 100.1 and 100.6", "rules 100.2 and 100.8", "renumbered"),
    ("rules 101.1a-c", "rules 101.2a-c", "renumbered"),
    ("[CR 100.2]", "[CR 100.2]", "removed"),  # nothing to rewrite to: kept as written
    ("rule 100.3", "rule 100.3", "split"),
])
def test_each_form_is_rewritten_in_place(processed, written, expected, status):
    result = remap(processed, f"Text {written} more.")
    assert result.text == f"Text {expected} more."
    assert result.citations[0]["status"] == status


@pytest.mark.parametrize("text", [
    "Each player starts with 20 life; 100 life in a variant.", "Written in 2011 and 2012.", "rule 2011 applies",
    "It costs $100.50.", "version 100.9 of the app", "Section 100 of the act", "200.1.5 is a version number",
])
def test_near_misses_are_never_rewritten(processed, text):
    result = remap(processed, text)
    assert result.text == text and result.citations == []


def test_split_merged_removed_and_modified_are_marked(processed):
    by_cited = {c["cited"]: c
                for c in remap(processed, "[CR 100.3] [CR 100.6] [CR 100.2] [CR 100.5] [CR 100.1]").citations}
    assert by_cited["100.3"]["numbers"] == ["100.3", "100.4"] and "split" in by_cited["100.3"]["marks"]
    assert "modified" in by_cited["100.3"]["marks"]
    assert by_cited["100.6"]["numbers"] == ["100.8"] and by_cited["100.6"]["status"] == "merged"
    assert "merged into 100.7 in 2011-01-01 (now 100.8)" == by_cited["100.6"]["detail"]
    assert by_cited["100.2"]["numbers"] == [] and by_cited["100.2"]["detail"] == f"removed in {B}"
    assert by_cited["100.5"]["marks"] == ["modified"]  # modified on the way, same number
    assert by_cited["100.1"]["marks"] == ["renumbered"]  # only renumbered: the same rule
    # to an edition between: 100.5 was not modified yet
    assert cite.cite("[CR 100.5]", cite.from_processed(processed), A, B).citations[0]["status"] == "unchanged"


def test_back_in_time(processed):
    result = cite.cite("[CR 100.8] and [CR 100.4]", cite.from_processed(processed), C, A)
    assert result.text == "[CR 100.7] and [CR 100.4]"
    assert [c["marks"] for c in result.citations] == [["modified", "renumbered"], ["not yet"]]


def test_cli_text_and_file_give_the_same_rewrite(processed, tmp_path):
    text = "As [CR 100.1] says,\nsee rule 100.2 and {{CR|100.6}.\n"
    by_text = run(text, "--as-of", A, "--processed", processed)
    assert by_text.exit_code == 0, by_text.output
    (tmp_path / "notes.txt").write_text(text, encoding="utf-8")
    by_file = run(tmp_path / "notes.txt", "--as-of", A, "--processed", processed)
    assert by_file.stdout == by_text.stdout
    lines = by_file.stdout.splitlines()
    assert lines[:2] == ["As [CR 100.2] says,", "see rule 100.2 and {{CR|100.8}."]
    assert lines[2] == f"--- 3 citations, {A} -> {C}"
    assert "line 2: rule 100.2  100.2 -> -  removed (removed in 2011-01-01)" in lines
    assert ("line 2: {{CR|100.6}  100.6 -> 100.8  merged, renumbered "
            "(merged into 100.7 in 2011-01-01 (now 100.8))") in lines


def test_cli_json_is_the_same_as_data(processed):
    result = run("[CR 100.3] and rule 999.9", "--as-of", "2010-06-30", "--to", B, "--processed", processed, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["from_edition"], data["to_edition"]) == (A, B)
    assert data["notes"] == [f"2010-06-30 is not an edition: {A} is the edition in force on that date"]
    assert data["text"] == "[CR 100.3] and rule 999.9"
    split, unknown = data["citations"]
    assert split["numbers"] == ["100.3", "100.4"] and split["status"] == "split"
    assert (unknown["status"] == "unknown" and unknown["numbers"] == []
            and "no rule 999.9 in 2010-01-01" in unknown["detail"])
    assert "note: 2010-06-30 is not an edition" in result.stderr


@pytest.mark.parametrize("date, message", [
    ("2009-01-01", f"no edition was in force on 2009-01-01: the first is {A}; editions: {A}, {B}, {C}"),
    ("June 2011", f"'June 2011' is not a date (YYYY-MM-DD) or a set code (M10, DSK); editions: {A}, {B}, {C}"),
])
def test_cli_unknown_date_lists_the_editions(processed, date, message):
    result = run("[CR 100.1]", "--as-of", date, "--processed", processed)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip() == f"Error: {message}"


def test_cli_bad_input_is_one_clear_error(processed, tmp_path):
    (tmp_path / "latin1.txt").write_bytes(b"[CR 100.1]\nCaf\xe9 [CR 100.1]\n")
    result = run(tmp_path / "latin1.txt", "--as-of", A, "--processed", processed)
    assert result.exit_code == 1
    assert result.stderr.strip() == (f"Error: {tmp_path / 'latin1.txt'}:2: not UTF-8 (byte 0xe9 at offset 14): "
                                     "save it as UTF-8")
    result = run("[CR 100.1]", "--as-of", A, "--processed", tmp_path / "nowhere")
    assert result.exit_code == 1 and "rules.parquet is missing: run `python -m pipeline run` first" in result.stderr


@pytest.mark.parametrize("missing", ["./notes.txt", "wiki/204.html", "notes.md"])
def test_cli_a_missing_file_is_an_error_not_a_text(processed, tmp_path, missing):
    result = run(tmp_path / missing if "/" in missing else missing, "--as-of", A, "--processed", processed)
    assert result.exit_code == 1
    assert "no such file (to rewrite a text, pass the text itself, or - for standard input)" in result.stderr
    assert run("212.1b", "--as-of", A, "--processed", processed).exit_code == 0  # a bare number is text


def test_cli_bare_numbers_that_name_no_rule_are_counted(processed):
    result = run("Version 100.9 and see 100.1.", "--as-of", A, "--processed", processed)
    assert result.stdout.splitlines()[0] == "Version 100.9 and see 100.2."
    assert f"note: 1 bare numbers name no rule of {A} and were left alone: 100.9" in result.stderr


@needs_archive
def test_archive_seed_002_commentary_to_today(archive_run):
    """The wiki commentary of June 2011: its [CR 204.1a] is 205.1a today."""
    _, processed = archive_run
    result = run(RAW / f"{SEEDS['002']}.txt", "--as-of", "2011-06-17", "--processed", processed, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["from_edition"] == "2011-06-17" and data["to_edition"] == "2026-01-16"
    source = (RAW / f"{SEEDS['002']}.txt").read_text(encoding="utf-8")
    assert source.count("[CR 204.1a]") == 2 and data["text"].count("[CR 205.1a]") == 2
    assert "{{CR|205.1a}" in data["text"] and "[CR 204.1a]" not in data["text"]
    first = data["citations"][0]
    assert (first["form"], first["numbers"], first["marks"]) == ("[CR 204.1a]", ["205.1a"], ["modified", "renumbered"])
    assert len(data["text"]) == len(source)  # every other character as it was (204.1a and 205.1a are as long)
    # a rule removed since 2011, and a rule split since
    data = json.loads(run("rule 510.1e, rule 614.13", "--as-of", "2011-06-17", "--processed", processed,
                          "--json").stdout)
    removed, split = data["citations"]
    assert removed["status"] == "removed" and removed["detail"] == "removed in 2013-05-01"
    assert split["numbers"][0] == "614.13" and "614.13a" in split["numbers"] and "split" in split["marks"]
