"""`identify` on fragments cut from the archive as a user copies them (tests/fragments.py), with no
--format: with and without examples, cut mid-rule, quotes straightened, hard-wrapped. Each must land
in a window of editions that holds the edition it was cut from."""
import json

import pytest
from click.testing import CliRunner

from conftest import ARCHIVE, needs_archive
from fragments import cut
from pipeline.cli.main import main

# (file, first rule, last rule, how it is cut) -> the window, and the editions whose typography it has
CASES = [
    # issue 25: a word-for-word cut of 702.98-702.98c (here from 2013-05-01, the archive's 2013 edition)
    (("2013-04-29", "702.98", "702.98c", {}), ("2013-05-01",), ()),
    (("2003-10-01", "212.1", "212.1e", {}), ("2003-10-01",), ()),  # hard-wrapped at ~110 columns
    (("2003-10-01", "212.1", "212.1e", {"examples": False, "stop_at": 0.4}), ("2003-10-01",), ()),
    (("2006-07-15", "212.2", "212.2e", {"examples": False}), ("2003-10-01", "2005-10-01", "2006-07-15"),
     ("2006-07-15",)),
    (("2007-10-01", "300.1", "300.9", {}), ("2005-10-01", "2006-07-15", "2007-10-01"),
     ("2006-07-15", "2007-10-01")),
    (("2009-07-11", "702.19", "702.19e", {"straight": True}), ("2009-07-11",), ()),
    (("2011-06-17", "508.1", "508.1h", {"stop_at": 0.6}), ("2011-06-17",), ()),
    (("2020-06-01", "601.2", "601.2i", {"examples": False}), ("2020-06-01",), ()),
    (("2020-06-01", "601.2", "601.2e", {"stop_at": 0.5}), ("2020-06-01",), ()),
    (("2020-06-01", "601.2", "601.2i", {"straight": True}), ("2020-06-01",), ()),
    (("2025-06-06", "205.3", "205.3m", {"straight": True}), ("2025-06-06",), ()),
    (("2026-01-16", "205.3", "205.3m", {}), ("2026-01-16",), ()),
    # the same words 2011-2020; the 2011 and 2013 files print straight quotes, 2020 curly ones
    (("2013-04-29", "109.2a", "109.2c", {}), ("2011-06-17", "2013-05-01", "2020-06-01"),
     ("2011-06-17", "2013-05-01")),
    (("2020-06-01", "109.2a", "109.2c", {}), ("2011-06-17", "2013-05-01", "2020-06-01"), ("2020-06-01",)),
    (("2020-06-01", "109.2a", "109.2c", {"straight": True}), ("2011-06-17", "2013-05-01", "2020-06-01"),
     ("2011-06-17", "2013-05-01")),
]


def _name(case):
    (edition, first, last, how), _, _ = case
    return f"{edition}:{first}-{last}" + "".join(f",{k}" for k in how)


@pytest.fixture(scope="module")
def processed(archive_run):
    return archive_run[1]


@needs_archive
@pytest.mark.parametrize("case", CASES, ids=[_name(c) for c in CASES])
def test_a_fragment_cut_from_an_edition_lands_in_its_window(processed, tmp_path, case):
    (edition, first, last, how), expected, exactly = case
    fragment = tmp_path / "fragment.txt"
    fragment.write_text(cut(ARCHIVE / f"{edition}.txt", first, last, **how), encoding="utf-8")
    result = CliRunner().invoke(main, ["identify", "--json", "--processed", str(processed), str(fragment)])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["fragments"][0]
    assert found["window"]["editions"] == list(expected)
    assert (found["exactly"] or {}).get("editions", []) == list(exactly)
