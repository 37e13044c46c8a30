"""Output folders act only inside themselves: a name read from a listing or a journal is a plain
relative path inside its folder, and a symbolic link in an output folder is refused, never followed."""
import json
import os

import pytest
from click.testing import CliRunner

from pipeline.publish import transaction as publish
from pipeline.report import build as report
from pipeline.cli.main import main
from pipeline.errors import PipelineError
from pipeline.ingest.discover import ingest
from pipeline.atomic import write_atomic
from conftest import RAW, run_stages


def publish_run(folder, files: dict[str, str], run_id: str = "run1") -> None:
    """A run as the stages publish one: staged, listed, committed, moved into place."""
    with publish.locked(folder):
        stage = publish.begin(folder)
        for name, text in files.items():
            write_atomic(stage / name, text)
        publish.commit(folder, run_id)


def plant_listing(folder, *names: str) -> None:
    """Add `names` to the published run.json, as someone who can write the folder could."""
    listed = json.loads((folder / publish.LISTING).read_text(encoding="utf-8"))
    listed["files"].update({name: [1, "0" * 64] for name in names})
    (folder / publish.LISTING).write_text(json.dumps(listed), encoding="utf-8")


def outside(tmp_path, name="victim.txt", text="not the pipeline's"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- names from listings and journals ---------------------------------------------------------------

@pytest.mark.parametrize("planted", ["ABSOLUTE", "../victim.txt", "pages/../../victim.txt"])
def test_a_planted_listing_never_deletes_a_file_outside_its_folder(tmp_path, planted):
    folder, victim = tmp_path / "p", outside(tmp_path)
    publish_run(folder, {"a.csv": "a\n", "pages/x.html": "x"})
    plant_listing(folder, str(victim) if planted == "ABSOLUTE" else planted)
    with pytest.raises(PipelineError) as e:  # was: the next run deleted victim.txt
        publish_run(folder, {"a.csv": "b\n"}, "run2")
    assert e.value.path == folder / publish.LISTING and "refused" in e.value.message
    assert victim.read_text(encoding="utf-8") == "not the pipeline's"
    assert (folder / "a.csv").read_text() == "a\n"  # refused before the run wrote anything


def test_a_run_over_a_planted_listing_stops_with_one_line_naming_it(tmp_path):
    victim = outside(tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / publish.LISTING).write_text(json.dumps({"run_id": "x", "files": {str(victim): [1, "0"]}}))
    result = CliRunner().invoke(main, ["run", "--raw", str(RAW), "--processed", str(tmp_path / "p"),
                                       "--no-reports", "-q"])
    assert result.exit_code == 1 and victim.exists()
    assert result.output.startswith(f"Error: {tmp_path / 'p' / 'run.json'}: lists '{victim}'")
    assert "Traceback" not in result.output and len(result.output.splitlines()) == 1


def test_a_planted_committed_journal_never_moves_a_file_across_the_folder(tmp_path):
    work = tmp_path / "work"
    folder = work / "p"
    stage = folder / publish.STAGING
    stage.mkdir(parents=True)
    mine, theirs = outside(work, "victim", "the project's"), outside(tmp_path, "victim", "not the pipeline's")
    (stage / publish.LISTING).write_text(json.dumps({"run_id": "x", "files": {"../../victim": [1, "0"]}}))
    (stage / publish.COMMITTED).write_text("x\n")
    with pytest.raises(PipelineError) as e:  # was: work/victim renamed over tmp/victim
        with publish.locked(folder):
            pass
    assert e.value.path == stage / publish.LISTING
    assert mine.read_text() == "the project's" and theirs.read_text() == "not the pipeline's"


@pytest.mark.parametrize("name", ["", "/etc/passwd", "..", "../x", "a/../b", "./a", "a//b", "a/", "a\\..\\b",
                                  "a\0b", "C:\\x"])
def test_a_listed_name_must_be_a_plain_relative_path(tmp_path, name):
    folder = tmp_path / "p"
    publish_run(folder, {"a.csv": "a\n"})
    plant_listing(folder, name)
    with pytest.raises(PipelineError) as e:
        publish.listing(folder)
    assert e.value.path == folder / publish.LISTING and repr(name) in e.value.message


@pytest.mark.parametrize("name", ["a.csv", "pairs/2003-10-01_2005-10-01.html", ".stages/ingest.json.gz",
                                  "sources/rules#1?.html", "lineage/x..y.html"])
def test_honest_names_are_accepted(tmp_path, name):
    folder = tmp_path / "p"
    publish_run(folder, {name: "x"})
    assert list(publish.listing(folder)) == [name]
    assert publish.confined(folder, name) == folder / name and (folder / name).read_text() == "x"


# --- symbolic links in output folders ---------------------------------------------------------------

def linked_away(tmp_path, folder, name):
    """`folder/name` made a link to a folder outside holding a page of someone else's."""
    other = tmp_path / "other"
    other.mkdir(exist_ok=True)
    (other / "keep.html").write_text("someone else's")
    link = folder / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(other, target_is_directory=True)
    return other, link


def test_a_page_folder_linked_elsewhere_is_refused_not_emptied(tmp_path):
    folder = tmp_path / "r"
    publish_run(folder, {"sources/a.html": "a", "index.html": "i"})
    (folder / "sources/a.html").unlink()
    (folder / "sources").rmdir()
    other, link = linked_away(tmp_path, folder, "sources")
    with pytest.raises(PipelineError) as e:  # was: other/keep.html deleted, sources/b.html written there
        publish_run(folder, {"sources/b.html": "b", "index.html": "i"}, "run2")
    assert e.value.path == link and "symbolic link" in e.value.message
    assert sorted(p.name for p in other.iterdir()) == ["keep.html"]


@pytest.mark.parametrize("name", [".staging", ".cache", ".stages", "pairs", "lineage/deeper"])
def test_a_link_anywhere_in_an_output_folder_is_refused_before_anything_is_done(tmp_path, name):
    folder = tmp_path / "p"
    publish_run(folder, {"a.csv": "a\n", "lineage/x.html": "x"})
    other, link = linked_away(tmp_path, folder, name)
    with pytest.raises(PipelineError) as e:
        with publish.locked(folder):
            pytest.fail("the run went ahead")
    assert e.value.path == link
    assert sorted(p.name for p in other.iterdir()) == ["keep.html"]


def test_a_link_made_during_a_run_is_refused_when_publishing(tmp_path):
    folder = tmp_path / "r"
    publish_run(folder, {"lineage/a.html": "a"})
    with pytest.raises(PipelineError) as e:
        with publish.locked(folder):
            stage = publish.begin(folder)
            write_atomic(stage / "lineage/b.html", "b")
            (folder / "lineage/a.html").unlink()
            (folder / "lineage").rmdir()
            other, link = linked_away(tmp_path, folder, "lineage")
            publish.commit(folder, "run2")
    assert e.value.path == link
    assert sorted(p.name for p in other.iterdir()) == ["keep.html"]


def test_a_linked_file_is_refused_not_followed(tmp_path):
    folder = tmp_path / "p"
    publish_run(folder, {"a.csv": "a\n"})
    victim = outside(tmp_path)
    (folder / "a.csv").unlink()
    (folder / "a.csv").symlink_to(victim)
    with pytest.raises(PipelineError) as e:
        publish.verify(folder, ["a.csv"])
    assert e.value.path == folder / "a.csv"
    with pytest.raises(PipelineError):
        publish_run(folder, {"a.csv": "b\n"}, "run2")
    assert victim.read_text() == "not the pipeline's"


def test_the_report_cleaner_refuses_a_linked_page_folder(tmp_path):
    reports = tmp_path / "r"
    other, link = linked_away(tmp_path, reports, "lineage")
    with pytest.raises(PipelineError) as e:  # was: other/keep.html deleted as a stale page
        report._remove_stale(reports, set())
    assert e.value.path == link
    assert (other / "keep.html").exists()


@pytest.mark.parametrize("how", ["symlink", "hard link"])
def test_a_lock_file_that_is_another_file_is_refused_not_truncated(tmp_path, how):
    folder = tmp_path / "p"
    folder.mkdir()
    victim = outside(tmp_path)
    (os.symlink if how == "symlink" else os.link)(victim, folder / publish.LOCK)
    with pytest.raises(PipelineError) as e:  # was: victim.txt truncated and overwritten with a pid
        with publish.locked(folder):
            pytest.fail("the run went ahead")
    assert e.value.path == folder / publish.LOCK
    assert victim.read_text() == "not the pipeline's"
    assert publish.writer(folder) == ""  # a reader neither follows it


def test_an_honest_lock_file_still_names_its_holder_and_is_emptied_after(tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / publish.LOCK).write_text("99999")  # a killed run's pid: the kernel freed its lock
    with publish.locked(folder):
        assert (folder / publish.LOCK).read_text() == str(os.getpid())
        with pytest.raises(PipelineError, match=f"another run \\(pid {os.getpid()}\\)"):
            with publish.locked(folder):
                pass
    assert (folder / publish.LOCK).read_text() == ""


# --- a rejected link publishes nothing of its target ------------------------------------------------

def test_a_rejected_symlink_publishes_no_hash_or_size_of_its_target(tmp_path):
    raw, corpus = tmp_path / "raw", tmp_path / "c"
    raw.mkdir()
    corpus.mkdir()
    secret = outside(tmp_path, "hostname", "secret-host\n")
    (corpus / "host.txt").symlink_to(secret)
    (corpus / "plain.txt").write_text("secret-host\n")
    rejected = {r.path.name: r for r in ingest(raw, [corpus]).rejections}
    assert rejected["host.txt"].reason.startswith("not a Comprehensive Rules edition")
    assert (rejected["host.txt"].sha256, rejected["host.txt"].n_bytes) == ("", 0)  # was the target's
    assert rejected["plain.txt"].n_bytes == 12 and len(rejected["plain.txt"].sha256) == 64  # a file's own: kept


def test_a_planted_stage_tag_is_a_clear_error_not_a_traceback(tmp_path):
    processed = tmp_path / "p"
    assert run_stages(processed).exit_code == 0
    listed = json.loads((processed / "run.json").read_text(encoding="utf-8"))
    listed["stages"] = {"sources.csv": "../../evil"}
    (processed / "run.json").write_text(json.dumps(listed), encoding="utf-8")
    result = CliRunner().invoke(main, ["segment", "--processed", str(processed), "-q"])
    assert result.exit_code == 1 and "'../../evil', which is no stage" in result.output
    assert "Traceback" not in result.output


def test_compare_report_never_writes_through_a_link(tmp_path):
    """`compare A B --report` writes into reports/ like a run: a linked reports/compare is refused."""
    head = "Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n100. General\n\n"
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(head.format("May 1, 2020") + "100.1. These Magic rules apply to any game.\n", encoding="utf-8")
    b.write_text(head.format("June 1, 2020") + "100.1. These Magic rules apply to every game.\n", encoding="utf-8")
    reports = tmp_path / "reports"
    reports.mkdir()
    other, link = linked_away(tmp_path, reports, "compare")
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--report", "--reports", str(reports),
                                       "--processed", str(tmp_path / "p")])
    assert result.exit_code == 1 and "symbolic link" in result.output, result.output
    assert sorted(p.name for p in other.iterdir()) == ["keep.html"]
