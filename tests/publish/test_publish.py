"""Whole runs published all or nothing, one writer at a time, and readers that never mix runs."""
import fcntl
import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from pipeline.publish import export
from pipeline.publish import transaction as publish
from pipeline import run as stages
from pipeline.cli.main import main
from pipeline.errors import PipelineError
from conftest import RAW, ROOT, archive_files, needs_archive


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def run(tmp_path, corpus=None, name="p", reports=True):
    args = ["run", "--raw", RAW, "--processed", tmp_path / name, "-q"]
    args += ["--reports", tmp_path / "r"] if reports else ["--no-reports"]
    return invoke(*args, *(["--corpus", corpus] if corpus else []))


def edited_raw(tmp_path):
    """raw/ with one word of one seed changed: a run over it writes different tables."""
    raw = tmp_path / "raw2"
    shutil.copytree(RAW, raw)
    seed = raw / "004_f1d686327d0145de.txt"
    text = seed.read_text(encoding="utf-8")
    seed.write_text(text.replace(" player", " gamer", 1), encoding="utf-8")
    return raw


def one_edition(tmp_path, index=0):
    corpus = tmp_path / f"corpus{index}"
    corpus.mkdir()
    shutil.copy(archive_files()[index], corpus)
    return corpus


def test_a_second_run_fails_clearly_while_the_folder_is_locked(tmp_path):
    (tmp_path / "p").mkdir()
    with open(tmp_path / "p" / publish.LOCK, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("4242")
        held.flush()
        result = run(tmp_path)
    assert result.exit_code == 1
    assert result.output == (f"Error: {(tmp_path / 'p').resolve()}: another run (pid 4242) is writing here; "
                             "wait for it to finish or use another folder\n")
    assert run(tmp_path).exit_code == 0  # released by the holder: the next run goes ahead


def test_a_reader_during_a_first_run_is_told_to_wait_not_to_run(tmp_path):
    (tmp_path / "p").mkdir()
    with open(tmp_path / "p" / publish.LOCK, "a+") as held:  # a first run is writing: nothing published yet
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("4242")
        held.flush()
        result = invoke("history", "205.1a", "--processed", tmp_path / "p")
        assert result.exit_code == 1
        assert "is not there yet: a run (pid 4242) is writing here; wait for it to finish" in result.output
    result = invoke("history", "205.1a", "--processed", tmp_path / "p")  # no run at all
    assert result.exit_code == 1 and "is missing: run `python -m pipeline run` first" in result.output


@needs_archive
def test_concurrent_runs_never_leave_one_runs_tables_under_the_others_stamp(tmp_path):
    corpora = [one_edition(tmp_path, 0), one_edition(tmp_path, 1)]
    command = [sys.executable, "-m", "pipeline", "run", "--raw", str(RAW), "--processed", str(tmp_path / "p"),
               "--no-reports", "-q"]
    procs = [subprocess.Popen(command + ["--corpus", str(c)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
             for c in corpora]
    outcomes = [(p.wait(), p.stderr.read()) for p in procs]
    assert any(code == 0 for code, _ in outcomes)
    for code, err in outcomes:
        assert code == 0 or "another run" in err, err
    published = publish.listing(tmp_path / "p")
    publish.verify(tmp_path / "p", list(published))  # every table is the one the listed run wrote
    for corpus in corpora:  # each input set, run again, gets its own tables, never "nothing changed"
        assert run(tmp_path, corpus, reports=False).exit_code == 0
        sources = (tmp_path / "p/sources.csv").read_text(encoding="utf-8")
        assert f"{corpus.name}/{archive_files()[int(corpus.name[-1])].name}" in sources
        assert publish.run_id(tmp_path / "p") == stages.run_id(RAW, [corpus])


def test_a_run_killed_mid_export_leaves_the_previous_run_whole(tmp_path, monkeypatch):
    assert run(tmp_path, reports=False).exit_code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "p").glob("*.csv")}
    (tmp_path / "p" / ".rules.csv.x1.tmp").write_text("orphan")
    real = export.write_table

    def dies_after_lineages(data, folder, name, *args, **kwargs):
        real(data, folder, name, *args, **kwargs)
        if name == "lineages":  # a table export writes whole (the stage files before it are kept, not written)
            raise KeyboardInterrupt  # what a kill looks like to the code that was running

    monkeypatch.setattr(export, "write_table", dies_after_lineages)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "note.txt").write_text("not rules")
    with pytest.raises(KeyboardInterrupt):
        stages.run_datasets(RAW, [extra], tmp_path / "p", quiet=True)
    assert {p.name: p.read_bytes() for p in (tmp_path / "p").glob("*.csv")} == before
    assert invoke("history", "205.1a", "--processed", tmp_path / "p").exit_code == 0
    monkeypatch.setattr(export, "write_table", real)
    assert run(tmp_path, reports=False).exit_code == 0
    assert not list((tmp_path / "p").glob(".*.tmp")) and not (tmp_path / "p" / publish.STAGING).exists()


@pytest.mark.parametrize("moved, command", [("rules.parquet", ["report", "--reports", "r2"]),
                                            ("crdiff.sqlite", ["history", "205.1a"])])  # what each reads
def test_a_run_killed_while_moving_files_in_is_refused_by_readers_then_finished(tmp_path, monkeypatch, moved,
                                                                               command):
    assert run(tmp_path, reports=False).exit_code == 0
    raw2 = edited_raw(tmp_path)
    real = publish.apply

    def moves_one_file_then_dies(folder):
        staged = folder / publish.STAGING / moved
        staged.replace(folder / moved)
        raise KeyboardInterrupt

    monkeypatch.setattr(publish, "apply", moves_one_file_then_dies)
    with pytest.raises(KeyboardInterrupt):
        stages.run_datasets(raw2, [], tmp_path / "p", quiet=True)
    monkeypatch.setattr(publish, "apply", real)
    result = invoke(*[tmp_path / a if a == "r2" else a for a in command], "--processed", tmp_path / "p")
    assert result.exit_code == 1
    assert f"{moved} is not the file run" in result.output and "Traceback" not in result.output
    assert run(tmp_path, reports=False).exit_code == 0  # rolls forward, then runs over raw/ again
    publish.verify(tmp_path / "p", list(publish.listing(tmp_path / "p")))
    assert publish.run_id(tmp_path / "p") == stages.run_id(RAW, [])


@pytest.mark.parametrize("table, command", [("changes.parquet", ["cite", "[CR 205.1a]", "--as-of", "2025-06-06"]),
                                            ("crdiff.sqlite", ["history", "205.1a"])])  # what each reads
def test_readers_refuse_a_table_from_another_run(tmp_path, table, command):
    assert run(tmp_path, reports=False).exit_code == 0
    assert invoke("run", "--raw", edited_raw(tmp_path), "--processed", tmp_path / "other", "--no-reports",
                  "-q").exit_code == 0
    shutil.copy(tmp_path / f"other/{table}", tmp_path / f"p/{table}")
    result = invoke(*command, "--processed", tmp_path / "p")
    assert result.exit_code == 1
    rid = publish.run_id(tmp_path / "p")
    assert result.output.startswith(f"Error: {tmp_path / 'p'}: {table} is not the file run {rid} wrote")


def test_a_quick_check_trusts_the_run_stamp_only_while_size_and_time_hold(tmp_path, monkeypatch):
    assert run(tmp_path, reports=False).exit_code == 0
    p, real = tmp_path / "p", publish._digest
    monkeypatch.setattr(publish, "_digest", lambda path: pytest.fail(f"{path} hashed"))
    publish.verify(p, ["crdiff.sqlite"], quick=True)  # just published: the run's stamp vouches for it
    monkeypatch.setattr(publish, "_digest", real)
    data = bytearray((p / "crdiff.sqlite").read_bytes())
    data[-1] ^= 1  # same size, another modification time
    (p / "crdiff.sqlite").write_bytes(bytes(data))
    with pytest.raises(PipelineError, match="crdiff.sqlite is not the file run"):
        publish.verify(p, ["crdiff.sqlite"], quick=True)


@pytest.mark.parametrize("damage", ["truncate rules.csv", "delete reports/lineage", "delete run.json"])
def test_nothing_changed_checks_the_outputs(tmp_path, damage):
    assert run(tmp_path).exit_code == 0
    rules = (tmp_path / "p/rules.csv").read_bytes()
    pages = sorted(p.name for p in (tmp_path / "r/lineage").iterdir())
    if damage == "truncate rules.csv":
        (tmp_path / "p/rules.csv").write_bytes(rules[:100])
    elif damage == "delete reports/lineage":
        shutil.rmtree(tmp_path / "r/lineage")
    else:
        (tmp_path / "p/run.json").unlink()
    result = CliRunner().invoke(main, ["run", "--raw", str(RAW), "--processed", str(tmp_path / "p"),
                                       "--reports", str(tmp_path / "r")])
    assert "nothing changed" not in result.output
    assert (tmp_path / "p/rules.csv").read_bytes() == rules
    assert sorted(p.name for p in (tmp_path / "r/lineage").iterdir()) == pages
    again = invoke("run", "--raw", RAW, "--processed", tmp_path / "p", "--reports", tmp_path / "r")
    assert "nothing changed" in again.output


def test_the_index_and_the_listing_carry_the_run_id_of_the_tables(tmp_path):
    assert run(tmp_path).exit_code == 0
    rid = publish.run_id(tmp_path / "p")
    assert rid == publish.run_id(tmp_path / "r") and len(rid) == 16
    assert f'<meta name="crdiff-run" content="{rid}">' in (tmp_path / "r/index.html").read_text(encoding="utf-8")
    pages = list((tmp_path / "r").rglob("*.html"))
    assert len(pages) > 10
    assert all("crdiff-run" not in p.read_text(encoding="utf-8") for p in pages if p.name != "index.html")
    listed = json.loads((tmp_path / "r/run.json").read_text())["files"]
    assert set(listed) == {p.relative_to(tmp_path / "r").as_posix() for p in (tmp_path / "r").rglob("*")
                           if p.is_file() and not p.name.startswith(".") and p.name != "run.json"}
    assert publish.verify(tmp_path / "r", sorted(listed)) == rid


def test_a_run_rewrites_only_the_pages_that_changed(tmp_path):
    assert run(tmp_path).exit_code == 0
    before = {p: (p.stat().st_ino, p.read_bytes()) for p in (tmp_path / "r").rglob("*.html")}
    (tmp_path / "r/app.js").write_text("edited by hand")  # differs from what the run writes: written again
    assert invoke("run", "--raw", edited_raw(tmp_path), "--processed", tmp_path / "p", "--reports", tmp_path / "r",
                  "-q").exit_code == 0
    now = {p: p.stat().st_ino for p in before if p.exists()}
    kept = [p for p in now if now[p] == before[p][0]]
    rewritten = [p for p in now if now[p] != before[p][0]]
    assert len(kept) > 10 and tmp_path / "r/index.html" in rewritten
    assert all(p.read_bytes() != before[p][1] for p in rewritten)
    assert (tmp_path / "r/app.js").read_bytes() == (ROOT / "pipeline/report/templates/app.js").read_bytes()
    listed = json.loads((tmp_path / "r/run.json").read_text())["files"]
    assert all(p.relative_to(tmp_path / "r").as_posix() in listed for p in kept)
    assert publish.verify(tmp_path / "r", sorted(listed)) == publish.run_id(tmp_path / "p")
    assert not (tmp_path / "r" / publish.STAGING).exists()


def test_a_stale_page_of_an_earlier_run_is_removed(tmp_path):
    assert run(tmp_path).exit_code == 0
    (tmp_path / "r/lineage/0000-00-00_gone.html").write_text("old")
    assert invoke("run", "--raw", RAW, "--processed", tmp_path / "p", "--reports", tmp_path / "r",
                  "--no-cache", "-q").exit_code == 0
    assert not (tmp_path / "r/lineage/0000-00-00_gone.html").exists()


def test_orphan_temporary_files_are_removed_from_every_output_folder(tmp_path):
    assert run(tmp_path).exit_code == 0
    orphans = [tmp_path / "p" / ".stages" / ".segment.json.gz.x1.tmp", tmp_path / "r" / "rules" / ".205.1.html.x2.tmp",
               tmp_path / "r" / "editions" / ".2025-06-06.html.x3.tmp", tmp_path / "p" / ".rules.csv.x4.tmp"]
    for orphan in orphans:  # what a run killed while writing leaves
        orphan.parent.mkdir(parents=True, exist_ok=True)
        orphan.write_text("orphan")
    mine = tmp_path / "r" / "rules" / "notes.tmp"  # not a name the pipeline writes: not its to remove
    mine.write_text("the user's")
    assert run(tmp_path).exit_code == 0
    assert [o for o in orphans if o.exists()] == [] and mine.exists()


@pytest.mark.parametrize("command", [["report"], ["run", "--raw", RAW]])
def test_reports_into_the_processed_folder_are_refused_before_anything_is_written(tmp_path, command):
    assert run(tmp_path, reports=False).exit_code == 0
    before = sorted(p.name for p in (tmp_path / "p").iterdir())
    result = invoke(*command, "--processed", tmp_path / "p", "--reports", tmp_path / "p", "-q")
    assert result.exit_code == 1  # `report` published its pages over the tables, deleting every dataset
    assert result.output == (f"Error: {tmp_path / 'p'}: --reports is the --processed folder: the pages would "
                             "replace the datasets; give the reports a folder of their own\n")
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == before
    assert invoke("history", "205.1a", "--processed", tmp_path / "p").exit_code == 0


def test_names_checked_together_are_what_confined_says_of_each(tmp_path):
    """`checked` (many names, each folder on the way looked at once) gives each name's path and whether it is
    there, refuses a symbolic link anywhere on the way as `confined` does, and a name that is not plain."""
    from pipeline.publish import transaction
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "page.html").write_text("x", encoding="utf-8")
    (tmp_path / "top.csv").write_text("y", encoding="utf-8")
    names = ["a/b/page.html", "top.csv", "a/b/gone.html", "missing/deeper/file", "a/new/file"]
    got = transaction.checked(tmp_path, names)
    assert [p for p, _ in got] == [str(transaction.confined(tmp_path, n)) for n in names]
    assert [st is not None for _, st in got] == [True, True, False, False, False]
    assert got[0][1].st_size == 1
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "a" / "b" / "file-link").symlink_to(tmp_path / "top.csv")
    for name in ("linked/page.html", "a/b/file-link"):
        with pytest.raises(PipelineError, match="symbolic link"):
            transaction.confined(tmp_path, name)
        with pytest.raises(PipelineError, match="symbolic link"):
            transaction.checked(tmp_path, ["top.csv", name])
    with pytest.raises(PipelineError, match="not a plain relative path"):
        transaction.checked(tmp_path, ["a/../top.csv"])
