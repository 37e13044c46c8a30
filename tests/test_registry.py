"""The edition registry (pipeline/data/sets.csv): set codes and names for editions, checked against the archive's
editions, and accepted wherever an edition is (issue 26, item 3)."""
import datetime

import pytest
from click.testing import CliRunner

from pipeline import lookup, registry
from pipeline.cli.main import main
from conftest import ARCHIVE, EDITIONS


def test_the_table_is_well_formed():
    sets = registry.entries()
    assert len(sets) > 100
    codes = [s.set_code for s in sets]
    assert len(codes) == len(set(codes)), "a set code names one edition"
    assert len({s.effective for s in sets}) == len(sets), "one entry per edition"
    for s in sets:
        datetime.date.fromisoformat(s.effective)
        assert s.published and all(datetime.date.fromisoformat(d) for d in s.published)
        assert s.set_code and s.set_name and s.set_code == s.set_code.strip().upper()


@pytest.mark.parametrize("spec, code", [("M10", "M10"), ("m10", "M10"), ("Magic 2010", "M10"), ("dsk", "DSK"),
                                        ("Dragon's Maze", "DGM"), ("IKO_2", "IKO_2")])
def test_find_by_code_or_name(spec, code):
    assert registry.find(spec).set_code == code


@pytest.mark.parametrize("spec", ["M99", "2009-07-11", "", "Magic"])
def test_find_near_misses(spec):
    assert registry.find(spec) is None


def test_labels_and_near_dates():
    assert registry.label("2009-07-11") == "2009-07-11 (M10, Magic 2010)"
    assert registry.label("2013-04-29") == "2013-04-29 (DGM, Dragon’s Maze)"  # the file date it was published under
    assert registry.label("2024-09-19") == "2024-09-19 (DSK, Duskmourn: House of Horror)"  # a listed day, near
    assert registry.label("2009-07-08") == "2009-07-08"  # M10 is checked: its date is exact, nothing is near it
    assert registry.label("2008-03-17") == "2008-03-17"


@pytest.mark.parametrize("spec, edition, note", [
    ("M10", "2009-07-11", ""), ("arb", "2009-05-01", ""), ("2009-07-11", "2009-07-11", ""),
    ("2009-08-01", "2009-07-11", "2009-08-01 is not an edition: 2009-07-11 is the edition in force on that date"),
    ("ZEN", "2009-07-11", "ZEN (2009-10-05, Zendikar) is not in the datasets: 2009-07-11 (M10, Magic 2010) is the "
                          "edition in force on that date"),
])
def test_an_edition_by_date_or_set(spec, edition, note):
    assert lookup.edition(spec, ["2009-05-01", "2009-07-11"]) == (edition, note)


def test_not_a_date_nor_a_set_lists_the_editions():
    with pytest.raises(Exception, match=r"^'M99' is not a date \(YYYY-MM-DD\) or a set code \(M10, DSK\); "
                                        r"editions: 2009-05-01$"):
        lookup.edition("M99", ["2009-05-01"])
    with pytest.raises(Exception, match="no edition was in force on 2003-10-01"):
        lookup.edition("MRD", ["2009-05-01"])


def test_missing_editions():
    missing = [s.set_code for s in registry.missing(["2009-05-01", "2009-07-11", "2009-10-05"])]
    assert missing == []
    assert [s.set_code for s in registry.missing(["2009-05-01", "2010-02-01"])] == ["M10", "ZEN"]


@pytest.mark.archive
def test_checked_entries_are_the_archive_editions(archive_run):
    """Every archive edition is in the registry under its effective date (from its text) and the file date it
    was published under; every entry marked checked is one of them."""
    result, _ = archive_run
    effective = {e.edition: e for e in result.editions if e.complete}
    files = {stem: edition for edition, e in effective.items() for stem in e.sources if stem in EDITIONS}
    assert sorted(files) == sorted(EDITIONS) and ARCHIVE.is_dir()
    for stem, edition in files.items():
        entry = registry.of(edition)
        assert entry is not None and entry.effective == edition and stem in entry.published, (stem, edition)
        assert entry.checked.startswith("effective date"), entry
    assert {s.effective for s in registry.entries() if s.checked} == set(effective)


@pytest.mark.archive
def test_set_codes_work_everywhere(archive_run):
    _, processed = archive_run
    run = CliRunner().invoke
    compared = run(main, ["compare", "ARB", "M10", "--processed", str(processed)])
    assert compared.exit_code == 0, compared.output
    assert "2009-05-01 (ARB, Alara Reborn) -> 2009-07-11 (M10, Magic 2010)" in compared.stderr
    assert compared.stdout == run(main, ["compare", "2009-05-01", "2009-07-11", "--processed", str(processed)]).stdout
    cited = run(main, ["cite", "CR 212.1b", "--as-of", "ARB", "--processed", str(processed)])
    assert cited.stdout.startswith("CR 205.1a\n--- 1 citation, 2009-05-01 (ARB, Alara Reborn) -> 2026-01-16 (ECL,")
    history = run(main, ["history", "205.1a", "--edition", "DSK", "--processed", str(processed)])
    assert history.exit_code == 0 and "note: DSK (2024-09-20, Duskmourn: House of Horror) is not in the datasets: " \
        "2020-06-01 (IKO_2, Companion Change) is the edition in force on that date" in history.output


def test_the_editions_table_and_the_index_carry_set_names(seeds_run, tmp_path):
    from pipeline.publish import load
    from pipeline import run as stages
    _, processed = seeds_run
    table = load.read(processed, "editions", columns=["edition", "set_code", "set_name"]).to_pylist()
    assert {"edition": "2011-06-17", "set_code": "CMD", "set_name": "Commander 2011"} in table
    assert {"edition": "2008-03-17", "set_code": "", "set_name": ""} in table  # a copy's date: no set near it
    stages.run_report(processed, tmp_path / "reports", True)
    index = (tmp_path / "reports" / "index.html").read_text(encoding="utf-8")
    assert "CMD, Commander 2011</span>" in index and "FIN, Final Fantasy</span>" in index
