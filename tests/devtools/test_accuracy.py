"""The accuracy harness: hand-checked cases from the archive (tests/data/accuracy.csv), each a
relation a reader finds in the texts. Every case must come out right."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from devtools.accuracy import Case, Verdict, read_cases, summary, table
from devtools.cli import main
from pipeline.errors import PipelineError
from conftest import ARCHIVE, needs_archive

CASES = Path(__file__).parent.parent / "data" / "accuracy.csv"


@pytest.fixture(scope="module")
def verdicts():
    from devtools.accuracy import judge
    return {v.case.line: v for v in judge(read_cases(CASES), ARCHIVE)}


@needs_archive
@pytest.mark.parametrize("case", read_cases(CASES), ids=lambda c: f"{c.old or '-'}->{c.new or '-'}@{c.to_edition}")
def test_case(verdicts, case):
    v = verdicts[case.line]
    assert v.right, f"expected {'|'.join(case.expected)}, found {v.found}: {case.evidence}"


def test_precision_and_recall_are_counted_per_relation():
    def verdict(expected, found):
        return Verdict(Case(2, "a", "b", "1", "2", tuple(expected.split("|")), ""), found)
    rows = {r["relation"]: r for r in table([verdict("same", "same"), verdict("same", "unrelated"),
                                             verdict("split|same", "same"), verdict("split", "split"),
                                             verdict("unrelated", "unrelated")])}
    assert rows["same"]["recall"] == 0.5 and rows["same"]["precision"] == 1.0  # found twice, right twice
    assert rows["split"]["recall"] == 1.0 and rows["unrelated"]["precision"] == 0.5
    assert "1 of 1 cases right" in summary([verdict("same", "same")])


@pytest.mark.parametrize("text, message", [
    ("from_edition,to_edition,old,new,expected\n", "the columns must be"),
    ("from_edition,to_edition,old,new,expected,evidence\n2009-05-01,2009-07-11,1,2,kept,x\n",
     "line 2: expected one of"),
    ("from_edition,to_edition,old,new,expected,evidence\n2009-05-01,2009-07-11,,,same,x\n", "line 2: expected one of"),
])
def test_bad_case_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "cases.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PipelineError, match=message):
        read_cases(path)


def test_accuracy_command_reports_a_missing_edition(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text("from_edition,to_edition,old,new,expected,evidence\n1999-01-01,2000-01-01,100.1,100.1,same,x\n",
                     encoding="utf-8")
    result = CliRunner().invoke(main, ["accuracy", "--corpus", str(tmp_path), "--cases", str(cases)])
    assert result.exit_code == 1 and "no complete edition of 1999-01-01, 2000-01-01" in result.output
