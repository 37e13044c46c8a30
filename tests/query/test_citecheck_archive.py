"""`cite --check --fix` on a corpus built here: files citing the archive's rules as written in February 2008
(MOR), June 2011 (CMD) and today, each committed on a date in its period so `--as-of git` reads every line
against its own edition. Every stale citation must be found with its fate, no current one flagged; `--fix`
must make the check clean of renumbered citations and change nothing else (issue 26, items 1 and 2)."""
import difflib
import json
import os
import subprocess
import time

import pytest
from click.testing import CliRunner

from pipeline.cli.main import main

# (line as written, the number cited, its fate, what the message says, the fixed number)
MOR = [  # written against 2008-02-01, before the renumbering of July 2009
    ("Trample: [CR 502.9b].", "502.9b", "renumbered", "is now 702.19b", "702.19b"),
    ("Type changes: {{CR|212.1b}}", "212.1b", "renumbered", "is now 205.1a", "205.1a"),
    ("Casting: rules 601.2a and 601.2c.", "601.2a", "renumbered", "is now 801.2a", "801.2a"),
    (None, "601.2c", "renumbered", "is now 801.2c", "801.2c"),  # the same line's second number
    ("// see 102.2a–c for the steps", "102.2a–c", "renumbered", "is now 104.2a–c", "104.2a–c"),
    ("Merged: rule 200.5", "200.5", "merged", "merged into 111.2 in 2009-07-11 (now 112.2)", ""),
    ("Removed: CR 100.3", "100.3", "removed", "removed in 2009-07-11", ""),
    ("Split: rule 305.3", "305.3", "removed", "split into 505.6, 505.6a; removed in 2020-06-01", ""),
    ("Draw step: rule 304.1", "304.1", "renumbered", "is now 504.1", "504.1"),  # its head continues, 504.2 a piece
    ("Typo: rule 502.9z", "502.9z", "unknown", "did you mean 502.9", ""),
    ("Range now broken: rules 212.2h-k", "212.2h-k", "range", "212.2j -> 301.5a", ""),
]
CMD = [  # written against 2011-06-17
    ("Removed: rule 510.1e", "510.1e", "removed", "removed in 2013-05-01", ""),
    ("Merged: [CR 903.12]", "903.12", "merged", "merged into 903.9 in 2020-06-01 (now 903.9b)", ""),
    ("Reused: rule 101.5", "101.5", "ambiguous", "101.5 in 2003-10-01…2006-07-15, now 103.8; 101.5 in "
                                                 "2007-10-01…2009-05-01, now 103.6", ""),
    ("Chain: rule 103.2 then", "103.2", "renumbered", "is now 103.1", "103.1"),
    ("rule 103.1 (the next one)", "103.1", "renumbered", "is now 103.3a", "103.3a"),
    ("Mulligans: CR 103.5a–c", "103.5a–c", "renumbered", "is now 103.6a–c", "103.6a–c"),
]
CURRENT = {  # no fate to report: current then and now
    "2011-06-17": ["Split, its number kept: rule 614.13", "First rule: [CR 100.1]", "Version 100.50 ships",
                   "$103.50 and rule 2011"],
    "2009-07-11": ["Merged into the rule of its own number: rule 300.2"],
    "2026-02-01": ["Trample: CR 702.19b, rule 205.1a, {{CR|601.2a}}", "/* 702.19b–c */ rules 601.2a and 601.2c"],
}
DATES = {"mor.md": "2008-03-01", "cmd.md": "2011-07-01", "m10.md": "2009-08-01", "today.md": "2026-02-01"}


def _write_corpus(tree):
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    texts = {"mor.md": [x[0] for x in MOR if x[0]], "cmd.md": [x[0] for x in CMD] + CURRENT["2011-06-17"],
             "m10.md": CURRENT["2009-07-11"], "today.md": CURRENT["2026-02-01"]}
    for name, lines in texts.items():
        (tree / name).write_text("# notes\n" + "\n".join(lines) + "\n", encoding="utf-8")
        stamp = f"{DATES[name]}T12:00:00Z"
        subprocess.run([*git, "add", name], check=True)
        subprocess.run([*git, "commit", "-qm", name], check=True,
                       env={**os.environ, "GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp})
    (tree / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0[CR 502.9b]")
    subprocess.run([*git, "add", "logo.png"], check=True)
    subprocess.run([*git, "commit", "-qm", "logo"], check=True)
    return {name: (tree / name).read_text(encoding="utf-8") for name in texts}


def _expected(tree):
    out, line = [], 1
    for name, rows in (("mor.md", MOR), ("cmd.md", CMD)):
        line = 1
        for text, cited, status, says, fix in rows:
            line += 1 if text else 0
            out.append((str(tree / name), line, cited, status, says, fix))
    return sorted(out, key=lambda x: (x[0], x[1]))


def check(tree, processed, *extra):
    return CliRunner().invoke(main, ["cite", "--check", str(tree), "--as-of", "git", "--processed", str(processed),
                                     *extra])


@pytest.mark.archive
def test_every_stale_citation_is_found_with_its_fate(archive_run, tmp_path):
    _, processed = archive_run
    _write_corpus(tmp_path)
    result = check(tmp_path, processed, "--json")
    assert result.exit_code == 1, result.output
    findings = json.loads(result.stdout)["findings"]
    got = sorted(((f["path"], f["line"], f["cited"], f["status"], f["message"], f["fix"]) for f in findings),
                 key=lambda x: (x[0], x[1]))
    assert [g[:4] for g in got] == [e[:4] for e in _expected(tmp_path)]  # all found, nothing else flagged
    for g, e in zip(got, _expected(tmp_path)):
        assert e[4] in g[4] and g[5] == e[5], (g, e)
    assert "1 file skipped (binary 1)" in result.stderr


@pytest.mark.archive
def test_fix_makes_it_clean_and_changes_nothing_else(archive_run, tmp_path):
    _, processed = archive_run
    before = _write_corpus(tmp_path)
    result = check(tmp_path, processed)
    assert result.exit_code == 1
    fixed = check(tmp_path, processed, "--fix")
    renumbered = [e for e in _expected(tmp_path) if e[5]]
    assert f"fixed {len(renumbered)};" in fixed.stderr and "has uncommitted changes" not in fixed.stderr
    for name, text in before.items():  # the diff: each renumbered number replaced where it stood, nothing else
        after = (tmp_path / name).read_text(encoding="utf-8")
        changes = [(e[1], e[2], e[5]) for e in renumbered if e[0] == str(tmp_path / name)]
        expected = text.splitlines()
        for line, cited, fix in changes:
            expected[line - 1] = expected[line - 1].replace(cited, fix, 1) if cited not in fix else \
                expected[line - 1]
        assert after.splitlines() == expected, "\n".join(difflib.unified_diff(expected, after.splitlines()))
    # Fixed lines are not committed: --as-of git reads them against today's edition, and finds them current.
    again = check(tmp_path, processed, "--json")
    statuses = [f["status"] for f in json.loads(again.stdout)["findings"]]
    assert "renumbered" not in statuses and len(statuses) == len(_expected(tmp_path)) - len(renumbered)


@pytest.mark.archive
@pytest.mark.slow
def test_benchmark_100000_citations(archive_run, tmp_path):
    """Prints the figure (no timing is asserted: machines differ)."""
    _, processed = archive_run
    forms = ["CR {}", "rule {}", "[CR {}]", "{{{{CR|{}}}}}", "see {} here", "rules {} and 601.2c"]
    numbers = ["502.9b", "212.1b", "601.2a", "702.19b", "100.1", "205.1a", "999.9z", "212.2h-k", "103.4", "500.1"]
    for i in range(3000):
        folder = tmp_path / f"d{i % 30}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i}.md").write_text("\n".join(f"Line {j}: {forms[(i + j) % 6].format(numbers[(i * j) % 10])}."
                                                   for j in range(34)) + "\n", encoding="utf-8")
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["cite", "--check", str(tmp_path), "--as-of", "MOR", "--processed",
                                       str(processed)])
    seconds = time.perf_counter() - start
    summary = result.stderr.strip().splitlines()[-1]
    print(f"\ncite --check: {summary.split(',')[0]} in {seconds:.1f} s")
    assert result.exit_code == 1 and "in 3000 files" in summary
