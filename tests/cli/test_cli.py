import json
import re
import shutil
import subprocess
import sys

import click
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings, strategies as st

from pipeline.cli.main import main
from conftest import HEAVY, RAW, ROOT, imported_by, run_stages, two_small_editions

OUTPUTS = ("rules.csv", "rules.parquet", "editions.csv", "glossary.csv", "sources.csv", "discards.csv")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_help(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0 and main.commands[command].help
    for param in main.commands[command].params:
        assert isinstance(param, click.Argument) or param.help, f"{command} {param.name} has no help"


def test_help_imports_no_heavy_library():
    found, output = imported_by("--help")
    assert "history" in output and "click" in found
    assert not found & set(HEAVY)


def test_history_reads_the_database_without_heavy_libraries(seeds_run):
    found, output = imported_by("history", "205.1a", "--processed", seeds_run[1])
    assert "lineage 2008-03-17:212.1b" in output and "sqlite3" in found
    assert not found & set(HEAVY)


def documented_commands() -> dict[str, set[str]]:
    """docs/commands.md's command list: command -> the options its line shows."""
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    block = text.split("## Commands", 1)[1].split("```", 2)[1]
    out = {}
    for line in block.splitlines():
        m = re.match(r"python -m pipeline (\w[\w-]*)\s*(.*?)(?:#.*)?$", line.strip())  # not --version
        if m:
            out[m[1]] = set(re.findall(r"--[\w-]+|(?<=\[)-\w\b", m[2]))
    return out


def test_the_docs_list_every_command_with_the_options_help_shows():
    listed = documented_commands()
    assert set(listed) == set(main.commands)
    for name, options in listed.items():
        shown = invoke(name, "--help").output
        params = [p for p in main.commands[name].params if isinstance(p, click.Option)]
        real = {o for p in params for o in p.opts + p.secondary_opts}
        assert options <= real, f"{name}: docs/commands.md shows {sorted(options - real)}, which --help does not"
        missing = [p.opts[0] for p in params if not options & set(p.opts + p.secondary_opts)]
        assert not missing, f"{name}: docs/commands.md omits {missing}"
        assert all(o in shown for o in options)


def test_the_readme_command_table_names_every_command_in_the_order_of_help():
    text = (ROOT / "README.md").read_text(encoding="utf-8").split("## Commands", 1)[1]
    table = re.findall(r"^\| `(\w[\w-]*)", text, re.M)
    assert table == [name for section in help_sections(main).values() for name in section]


def test_run_on_the_seeds_is_deterministic(tmp_path):
    for name in ("a", "b"):
        result = invoke("run", "--raw", RAW, "--processed", tmp_path / name / "processed",
                        "--reports", tmp_path / name / "reports", "--quiet", "--no-cache")
        assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "a/processed").iterdir() if p.is_file())
    assert set(OUTPUTS) < set(written) and {"datapackage.json", "README.md", "changes.csv"} < set(written)
    for name in written:
        assert (tmp_path / "a/processed" / name).read_bytes() == (tmp_path / "b/processed" / name).read_bytes()
    assert (tmp_path / "a/reports/index.html").read_bytes() == (tmp_path / "b/reports/index.html").read_bytes()
    assert not list((tmp_path / "a/processed").glob(".*.tmp"))


def test_cache_does_not_change_results(tmp_path):
    for name in ("cold", "warm", "warm"):
        assert run_stages(tmp_path / name).exit_code == 0
    assert (tmp_path / "cold/rules.csv").read_bytes() == (tmp_path / "warm/rules.csv").read_bytes()


def test_rules_csv_loads_with_documented_types(seeds_run):
    _, processed = seeds_run
    rules = pd.read_csv(processed / "rules.csv", keep_default_na=False)
    assert list(rules.columns[:5]) == ["edition", "source", "rule_id", "occurrence", "kind"]
    assert rules["line_start"].dtype.kind == "i" and rules["occurrence"].dtype.kind == "i"
    assert not rules.duplicated(["edition", "rule_id", "occurrence", "kind"]).any()
    for column in ("references", "citations", "rule_flags"):
        assert all(isinstance(json.loads(v), list) for v in rules[column])
    texts = pd.read_csv(processed / "texts.csv", keep_default_na=False)
    assert set(rules["text_id"]) == set(texts["text_id"]) and texts["text_id"].is_unique
    for column in ("examples", "sentences"):
        assert all(isinstance(json.loads(v), list) for v in texts[column])
    assert not list(processed.glob("*.jsonl")) and "compare" not in rules.columns


def test_sources_csv_accounts_for_every_character(seeds_run):
    _, processed = seeds_run
    sources = pd.read_csv(processed / "sources.csv", keep_default_na=False)
    assert len(sources) == 5 and (sources["rejection"] == "").all()
    for _, row in sources.iterrows():
        by_reason = json.loads(row["discarded_by_reason"])
        assert row["chars_kept"] + sum(by_reason.values()) == row["chars_total"]
        assert row["chars_discarded"] == sum(by_reason.values())


def test_bad_directory_argument():
    result = CliRunner().invoke(main, ["run", "--raw", "/no/such/folder"])
    assert result.exit_code == 2
    assert "Directory '/no/such/folder' does not exist" in result.output


def test_bad_manifest_is_one_line_and_exit_1(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    manifest = raw / "manifest.toml"
    manifest.write_text(manifest.read_text().replace('format = "copy"', 'format = "pdf"', 1))
    result = CliRunner().invoke(main, ["run", "--raw", str(raw), "--processed", str(tmp_path / "p"), "-q"])
    assert result.exit_code == 1
    line = next(i for i, text in enumerate(manifest.read_text().splitlines(), 1) if 'format = "pdf"' in text)
    assert result.output == (f"Error: {manifest}:{line}: unknown format 'pdf'; known: rulings-text, "
                             "rulings-html, copy, wiki-text, wiki-html, markdown\n")


def test_report_without_datasets(tmp_path):
    result = CliRunner().invoke(main, ["report", "--processed", str(tmp_path), "--reports", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path}: editions.parquet is missing: run `python -m pipeline run` first\n"


def test_unusable_files_are_counted_rejections(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "empty.txt").write_bytes(b"")
    result = invoke("ingest", "--raw", RAW, "--corpus", corpus, "--processed", tmp_path / "p", "-q")
    assert result.exit_code == 0
    sources = pd.read_csv(tmp_path / "p/sources.csv", keep_default_na=False)
    assert sources.set_index("source_id").loc["empty", "rejection"] == "empty file"


@pytest.mark.slow
def test_module_entry_point_runs_from_another_directory(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pipeline", "run", "--raw", str(RAW), "--processed",
                          str(tmp_path / "p"), "--reports", str(tmp_path / "r"), "-q"],
                         cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "r/index.html").exists() and (tmp_path / "p/rules.csv").exists()


def test_history_of_the_seeds_is_one_story(seeds_run):
    _, processed = seeds_run
    result = invoke("history", "205.1a", "--processed", processed, "--json")
    assert result.exit_code == 0, result.output
    (lineage,) = json.loads(result.output)
    steps = [(v["edition"], v["rule_id"]) for v in lineage["versions"]]
    assert steps == [("2008-03-17", "212.1b"), ("2025-06-06", "205.1a")]
    assert lineage["versions"][1]["renumbered"] and "[-When-]{+Some effects set+}" in lineage["versions"][1]["redline"]
    assert lineage["versions"][0]["commentary"] == ["002_fe0d7c38d7e9f0fd.c4", "002_fe0d7c38d7e9f0fd.c5"]
    text = invoke("history", "212.1b", "--processed", processed).output
    assert text.splitlines()[0] == "lineage 2008-03-17:212.1b"


def test_history_of_an_unknown_rule(seeds_run):
    _, processed = seeds_run
    result = CliRunner().invoke(main, ["history", "999.9z", "--processed", str(processed)])
    assert result.exit_code == 1
    assert result.output == f"Error: no rule 999.9z in {processed / 'crdiff.sqlite'}\n"


def test_compare_two_files(tmp_path):
    two_small_editions(tmp_path)
    result = invoke("compare", tmp_path / "a.txt", tmp_path / "b.txt")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "modified: 1, renumbered: 2, unchanged: 3"
    assert "100.1 -> 100.2  modified renumbered" in lines
    assert "100.2 -> 100.1  unchanged renumbered" in lines


def test_compare_unknown_edition(seeds_run):
    _, processed = seeds_run
    result = CliRunner().invoke(main, ["compare", "1999-01-01", "2008-03-17", "--processed", str(processed)])
    assert result.exit_code == 1 and "'1999-01-01' is neither a file nor an edition" in result.output


def _junk(folder, n=3):
    folder.mkdir()
    for i in range(n):
        (folder / f"note{i}.txt").write_text(f"random notes {i}, nothing to do with the rules\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("files, why", [(0, "no files to read"), (1, "1 file rejected: {}/note0.txt: "),
                                        (5, "5 files rejected: {}/note0.txt: ")])
def test_run_over_nothing_readable_fails_even_quiet_and_publishes_nothing(tmp_path, files, why):
    raw, processed = _junk(tmp_path / "raw", files), tmp_path / "p"
    for _ in ("run", "again"):
        result = CliRunner().invoke(main, ["run", "--raw", str(raw), "--processed", str(processed), "--no-reports",
                                           "-q"])
        assert result.exit_code == 1
        assert result.output.startswith(f"Error: no editions found in {raw} ({why.format(raw)}")
        assert result.output.endswith("; nothing was published\n") and ("and 2 more" in result.output) == (files == 5)
    assert not (processed / "rules.csv").exists()
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--processed", str(tmp_path / "i"), "-q"])
    assert result.exit_code == 1 and "no editions found in" in result.output


def test_a_run_over_junk_leaves_the_last_good_outputs_alone(tmp_path):
    processed = tmp_path / "p"
    assert invoke("run", "--raw", RAW, "--processed", processed, "--no-reports", "-q").exit_code == 0
    before = (processed / "rules.csv").read_bytes()
    result = invoke("run", "--raw", _junk(tmp_path / "junk"), "--processed", processed, "--no-reports", "-q")
    assert result.exit_code == 1 and (processed / "rules.csv").read_bytes() == before


def test_junk_in_a_corpus_beside_the_seeds_is_no_failure(tmp_path):
    corpus = _junk(tmp_path / "corpus")
    result = invoke("run", "--raw", RAW, "--corpus", corpus, "--processed", tmp_path / "p", "--no-reports", "-q")
    assert (result.exit_code, result.output) == (0, "")


def test_version(monkeypatch):
    from importlib import metadata
    result = invoke("--version")
    assert (result.exit_code, result.output) == (0, f"crdiff, version {metadata.version('crdiff')}\n")

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "version", not_installed)
    assert invoke("--version").output == "crdiff, version unknown (crdiff is not installed: pip install -e .)\n"


def help_sections(group) -> dict[str, list[str]]:
    """--help's command headings -> the commands under each, in order."""
    out, heading = {}, None
    for line in CliRunner().invoke(group, ["--help"]).output.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            heading = line[:-1]
            out[heading] = []
        elif heading and heading != "Options" and line.startswith("  ") and line[2] != " ":
            out[heading].append(line.split()[0])
    return out


def test_help_lists_user_commands_first_then_stages():
    sections = help_sections(main)
    assert list(sections) == ["Options", "Commands", "Stage commands (run does them all, in this order)"]
    assert sections["Commands"][:6] == ["run", "history", "compare", "cite", "identify", "fetch"]
    assert sections["Stage commands (run does them all, in this order)"] == ["ingest", "segment", "align", "export",
                                                                              "report"]
    assert sorted(n for names in sections.values() for n in names if n in main.commands) == sorted(main.commands)


def test_a_command_in_no_list_is_a_user_command():
    group = type(main)(name="g", help="A group.")
    for name in ("zzz-new", "ingest", "run"):
        group.command(name, help=f"The {name} command.")(lambda: None)
    sections = help_sections(group)
    assert sections["Commands"] == ["run", "zzz-new"]


@settings(max_examples=500, deadline=None)
@example("a \xa0")  # a no-break space at the end: textwrap drops it
@given(st.text(alphabet=" a-\t\n\r\x0b\x0c\x1c\x85\u2028\xa0/", max_size=110)
       | st.text(alphabet=" ab", min_size=95, max_size=105))
def test_fill_gives_what_textwrap_gives(text):
    import textwrap
    from pipeline.cli.render import fill
    wrapped = textwrap.fill(text, 100, break_on_hyphens=False, break_long_words=False)
    assert fill(text, "    ") == textwrap.indent(wrapped, "    ")
