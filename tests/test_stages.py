"""Stages that stand alone: each reads the previous stage's stored output and publishes only its
own; `run` is the list of them; no stage imports a later one; the CLI loads no spaCy."""
import subprocess
import sys

import pytest
from click.testing import CliRunner

from pipeline.publish import transaction as publish
from pipeline.cache import _closure
from pipeline.cli.main import main
from conftest import RAW, ROOT, run_stages

TABLE_FILES = ("rules.csv", "rules.parquet", "changes.parquet", "lineages.csv", "crdiff.sqlite", "datapackage.json")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def published(folder):
    return set(publish.listing(folder) or {})


def test_the_stages_one_by_one_write_what_run_writes(tmp_path):
    assert run_stages(tmp_path / "stages", "--no-cache").exit_code == 0
    assert invoke("run", "--raw", RAW, "--processed", tmp_path / "run", "--no-reports", "--no-cache",
                  "-q").exit_code == 0
    assert published(tmp_path / "stages") == published(tmp_path / "run")
    for name in sorted(published(tmp_path / "run")):
        assert (tmp_path / "stages" / name).read_bytes() == (tmp_path / "run" / name).read_bytes(), name
    for name in ("stages", "run"):
        assert invoke("report", "--processed", tmp_path / name, "--reports", tmp_path / f"r-{name}",
                      "-q").exit_code == 0
    pages = sorted(p.relative_to(tmp_path / "r-run") for p in (tmp_path / "r-run").rglob("*.html"))
    assert len(pages) > 100
    for page in pages:  # the index links to its own datasets folder; nothing else may differ
        stages = (tmp_path / "r-stages" / page).read_bytes().replace(b'href="../stages/', b'href="../run/')
        assert stages == (tmp_path / "r-run" / page).read_bytes(), page
    assert list((tmp_path / "r-run/sources").glob("*.html")), "source pages come from ingest's stored output"


def test_each_stage_publishes_only_its_own_and_drops_what_came_after(tmp_path):
    p = tmp_path / "p"
    assert invoke("ingest", "--raw", RAW, "--processed", p, "-q").exit_code == 0
    after_ingest = published(p)
    assert ".stages/ingest.json.gz" in after_ingest and "sources.csv" in after_ingest
    assert not any(n.startswith(("rules", ".stages/segment")) for n in after_ingest)
    assert invoke("segment", "--processed", p, "-q").exit_code == 0
    segmented = published(p) - after_ingest  # the list of editions, and a file of records for each
    assert ".stages/segment.json.gz" in segmented and len(segmented) > 2
    assert all(n.startswith(".stages/segment.") and n.endswith((".parquet", ".json.gz")) for n in segmented)
    assert invoke("align", "--raw", RAW, "--processed", p, "-q").exit_code == 0
    assert invoke("export", "--processed", p, "-q").exit_code == 0
    assert set(TABLE_FILES) <= published(p)
    publish.verify(p, sorted(published(p)))
    assert invoke("ingest", "--raw", RAW, "--processed", p, "-q").exit_code == 0  # a new first stage
    assert published(p) == after_ingest and not (p / "rules.csv").exists() and not (p / "crdiff.sqlite").exists()
    result = invoke("export", "--processed", p)
    assert result.exit_code == 1 and "segment.json.gz is missing: run `python -m pipeline segment` first" \
        in result.output


@pytest.mark.parametrize("command", [["segment"], ["align", "--raw", RAW], ["export"]])
def test_a_stage_without_its_input_says_which_stage_to_run(tmp_path, command):
    result = invoke(*command, "--processed", tmp_path)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "is missing: run `python -m pipeline " in result.output


def test_report_without_tables_leaves_no_reports_folder_behind(tmp_path):
    result = invoke("report", "--processed", tmp_path / "nowhere", "--reports", tmp_path / "r")
    assert result.exit_code == 1 and "editions.parquet is missing" in result.output
    assert not (tmp_path / "r").exists()


LATER = {  # stage module -> modules of later stages it must never import
    "pipeline.ingest.discover": ("segment", "nlp", "align", "lineage", "export", "report", "stages"),
    "pipeline.segment.rules": ("align", "lineage", "export", "report", "stages"),
    "pipeline.align.lineage": ("export", "report", "stages", "load"),
    "pipeline.publish.export": ("segment", "nlp", "align", "lineage", "trace", "report", "stages"),
    "pipeline.report.build": ("segment", "nlp", "align", "lineage", "trace", "export", "stages", "ingest"),
    "pipeline.publish.load": ("segment", "nlp", "align", "lineage", "export", "report"),
}


@pytest.mark.parametrize("module", sorted(LATER))
def test_no_stage_imports_a_later_one(module):
    imported = {name.split(".")[-1] for name in _closure(module)}
    assert not imported & set(LATER[module]), sorted(imported & set(LATER[module]))


def test_the_cli_and_the_reports_load_no_spacy():
    code = ("import sys, pipeline.cli.main, pipeline.report.build, pipeline.publish.load, pipeline.ruleid; "
            "print('spacy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_the_collector_stays_paused_through_the_reports_and_resumes_after(tmp_path, monkeypatch):
    """The reports of a run and of `report` alone render with the cyclic collector off (its passes over the
    loaded tables cost 5 s when an edition was added), and it is on again once the run is over."""
    import gc
    from pipeline import run as stages
    from pipeline.report import build
    seen = []
    render = build.render
    monkeypatch.setattr(build, "render", lambda *a, **k: seen.append(gc.isenabled()) or render(*a, **k))
    stages.run_all(RAW, [], tmp_path / "p", tmp_path / "r", quiet=True)
    assert gc.isenabled()
    stages.run_report(tmp_path / "p", tmp_path / "r2", quiet=True)
    assert seen == [False, False] and gc.isenabled()
