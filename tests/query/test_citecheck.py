"""`cite --check [--fix]` on the hand-made datasets of test_cite.py (issue 26, items 1 and 2): 100.1 renumbered
100.2, 100.2 removed, 100.3 split (its number kept), 100.6 merged into 100.7 (now 100.8), 101.1a-c renumbered
101.2a-c, from A to C. The archive corpus is in test_citecheck_archive.py."""
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from pipeline.query import citefix
from pipeline.query.citecheck import Finding
from pipeline.cli.main import main
from test_cite import A, C, processed  # noqa: F401 (a fixture)

SARIF_SCHEMA = Path(__file__).parent.parent / "data" / "sarif-2.1.0-subset.schema.json"


@pytest.fixture
def tree(tmp_path):
    """A folder for the files to check (the datasets are in tmp_path itself)."""
    (tmp_path / "tree").mkdir()
    return tmp_path / "tree"


def check(*args, processed_dir):
    return CliRunner().invoke(main, ["cite", "--check", *map(str, args), "--processed", str(processed_dir)])


@pytest.mark.parametrize("line, cited, column, status, fix", [
    ("As [CR 100.1] says", "100.1", 8, "renumbered", "100.2"),
    ("{{CR|100.1}}", "100.1", 6, "renumbered", "100.2"),
    ("{{CR|100.1}", "100.1", 6, "renumbered", "100.2"),
    ("see rule 100.1.", "100.1", 10, "renumbered", "100.2"),
    ("CR 101.1A", "101.1A", 4, "renumbered", "101.2A"),  # the case it was written in is kept
    ("x = 1  # 100.1 in a comment", "100.1", 10, "renumbered", "100.2"),
    ("rules 101.1a-c", "101.1a-c", 7, "renumbered", "101.2a-c"),
    ("rules 101.1a–c", "101.1a–c", 7, "renumbered", "101.2a–c"),
    ("rule 100.2", "100.2", 6, "removed", ""),
    ("rule 100.6", "100.6", 6, "merged", ""),
    ("rule 100.9", "100.9", 6, "unknown", ""),
])
def test_each_form_is_found_where_it_is(processed, tree, line, cited, column, status, fix):  # noqa: F811
    (tree / "notes.md").write_text(f"First line.\n{line}\n", encoding="utf-8")
    result = check(tree / "notes.md", "--as-of", A, "--json", processed_dir=processed)
    assert result.exit_code == 1, result.output
    (found,) = json.loads(result.stdout)["findings"]
    assert (found["line"], found["column"], found["cited"], found["status"], found["fix"]) == \
        (2, column, cited, status, fix)
    assert line[found["column"] - 1:found["end_column"] - 1] == cited


@pytest.mark.parametrize("text", ["$100.50 and 100.50 dollars", "version 100.9 ships", "rule 2011 of the club",
                                  "100 life", "rules 100.3 and 100.5", "[CR 100.4]"])
def test_no_false_alarms(processed, tree, text):  # noqa: F811
    (tree / "a.txt").write_text(text, encoding="utf-8")
    result = check(tree / "a.txt", "--as-of", "2011-01-01", processed_dir=processed)
    assert result.exit_code == 0 and result.stdout == "", result.output


def test_walk_skips_binaries_git_and_what_is_excluded(processed, tree):  # noqa: F811
    (tree / ".git").mkdir()
    (tree / ".git" / "notes.md").write_text("CR 100.1", encoding="utf-8")
    (tree / "build").mkdir()
    (tree / "build" / "notes.md").write_text("CR 100.1", encoding="utf-8")
    (tree / "a.md").write_text("CR 100.1", encoding="utf-8")
    (tree / "a.py").write_text("# CR 100.1", encoding="utf-8")
    (tree / "image.png").write_bytes(b"\x89PNG\0\0CR 100.1")
    (tree / "latin1.txt").write_bytes(b"Caf\xe9 CR 100.1")
    result = check(tree, "--as-of", A, "--exclude", "build", processed_dir=processed)
    assert result.exit_code == 1
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == [str(tree / "a.md"),
                                                                          str(tree / "a.py")]
    assert "2 citations in 2 files" in result.stderr and "2 files skipped (binary 1, not UTF-8 1)" in result.stderr
    only_md = check(tree, "--as-of", A, "--glob", "*.md", "--exclude", "build/*", processed_dir=processed)
    assert only_md.stdout.count(":1:4: error:") == 1 and "a.md" in only_md.stdout


def test_exit_codes(processed, tree):  # noqa: F811
    (tree / "a.md").write_text("[CR 100.2]", encoding="utf-8")
    assert check(tree, "--as-of", C, processed_dir=processed).exit_code == 0
    assert check(tree, "--as-of", A, processed_dir=processed).exit_code == 1
    for bad in (["--as-of", "M99"], ["--as-of", "June"], ["--as-of", A, "--json", "--sarif"]):
        result = check(tree, *bad, processed_dir=processed)
        assert result.exit_code == 2 and "Traceback" not in result.output, bad
    assert check(tree / "nowhere", "--as-of", A, processed_dir=processed).exit_code == 2
    assert check(tree, "--as-of", A, processed_dir=tree / "none").exit_code == 2
    result = CliRunner().invoke(main, ["cite", "--fix", "[CR 100.1]", "--as-of", A, "--processed", str(processed)])
    assert result.exit_code == 2 and "go with --check" in result.output


def test_replacements_are_computed_before_any_is_applied():
    text = "509.2 then 509.1"
    findings = [Finding("f", 1, 1, 6, 0, 5, "509.2", "509.2", A, "renumbered", "", "509.1"),
                Finding("f", 1, 12, 17, 11, 16, "509.1", "509.1", A, "renumbered", "", "509.3")]
    assert citefix.replaced(text, findings) == ("509.1 then 509.3", 2)


def test_fix_keeps_everything_else(processed, tree):  # noqa: F811
    original = "\ufeffAs [CR 100.1] says,\r\nsee rules 101.1a–c and rule 100.2 (removed); 100.1 again.\r\n"
    (tree / "a.md").write_bytes(original.encode("utf-8"))
    result = check(tree, "--as-of", A, "--fix", processed_dir=processed)
    assert result.exit_code == 1  # 100.2 was removed: reported, never guessed
    assert (tree / "a.md").read_bytes() == original.replace("100.1", "100.2").replace(
        "101.1a–c", "101.2a–c").encode("utf-8")
    assert "fixed 3; 1 stale (removed 1)" in result.stderr
    assert result.stdout.splitlines()[-1].endswith("[removed]")
    assert list(tree.iterdir()) == [tree / "a.md"]  # no temporary file left


def test_a_file_changed_while_being_fixed_is_left_alone(processed, tree, monkeypatch):  # noqa: F811
    path = tree / "a.md"
    path.write_text("[CR 100.1]", encoding="utf-8")
    real = citefix.shutil.copymode

    def someone_saves(src, dst):  # between reading the file and renaming the fixed text over it
        path.write_text("[CR 100.1] and a new line", encoding="utf-8")
        real(src, dst)
    monkeypatch.setattr(citefix.shutil, "copymode", someone_saves)
    result = check(tree, "--as-of", A, "--fix", processed_dir=processed)
    assert path.read_text(encoding="utf-8") == "[CR 100.1] and a new line"
    assert f"{path}: changed while being fixed: left alone" in result.stderr
    assert result.exit_code == 1 and list(tree.iterdir()) == [path]


def test_fix_warns_once_in_a_dirty_git_tree(processed, tree):  # noqa: F811
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    for name in ("a.md", "b.md"):
        (tree / name).write_text("[CR 100.1]", encoding="utf-8")
    subprocess.run([*git, "add", "a.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    result = check(tree / "a.md", tree / "b.md", "--as-of", A, "--fix", processed_dir=processed)
    assert result.stderr.count("has uncommitted changes") == 1 and result.exit_code == 0


def test_as_of_git_reads_each_line_against_its_commit_date(processed, tree):  # noqa: F811
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tree / "a.md").write_text("[CR 100.1]\n", encoding="utf-8")
    subprocess.run([*git, "add", "a.md"], check=True)
    env = {"GIT_COMMITTER_DATE": "2010-06-01T12:00:00Z", "GIT_AUTHOR_DATE": "2010-06-01T12:00:00Z",
           "PATH": "/usr/bin:/bin"}
    subprocess.run([*git, "commit", "-qm", "a"], check=True, env=env)
    with (tree / "a.md").open("a", encoding="utf-8") as f:
        f.write("[CR 100.2]\n")  # not committed: written today, against the latest edition
    (tree / "new.md").write_text("[CR 100.5]\n", encoding="utf-8")  # untracked: today too
    result = check(tree, "--as-of", "git", "--json", processed_dir=processed)
    data = json.loads(result.stdout)
    assert [(f["path"], f["line"], f["edition"], f["fix"]) for f in data["findings"]] == [
        (str(tree / "a.md"), 1, A, "100.2")]
    assert f"{tree / 'new.md'}: not in git history: read against {C}" in data["notes"]


def test_sarif_validates(processed, tree):  # noqa: F811
    (tree / "my notes.md").write_text("[CR 100.1]\nrule 100.2\nrule 100.6\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tree)
        result = check("my notes.md", "--as-of", A, "--sarif", processed_dir=processed)
    sarif = json.loads(result.stdout)
    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text()),
                               format_checker=jsonschema.FormatChecker()).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["renumbered", "removed", "merged"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "my%20notes.md"},
                        "region": {"startLine": 1, "startColumn": 5, "endColumn": 10}}
    assert results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"] == {"text": "100.2"}
    with pytest.raises(jsonschema.ValidationError):  # the schema does catch a broken log
        jsonschema.validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]},
                            json.loads(SARIF_SCHEMA.read_text()))
