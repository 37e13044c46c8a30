import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import settings

from pipeline import stages

# On CI the property tests draw the same examples every run (a failure there is reproducible);
# on a developer's machine they keep exploring, and hypothesis' database remembers what failed.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
DATA = Path(__file__).resolve().parent / "data"
ARCHIVE = Path(os.environ.get("CR_ARCHIVE", ROOT.parent / "shared" / "cr-archive"))
SEEDS = {
    "000": "000_3c08dd261a4ed4b0", "001": "001_3d6ba5c66001c583", "002": "002_fe0d7c38d7e9f0fd",
    "003": "003_44480226a2db131c", "004": "004_f1d686327d0145de",
}


def run_stages(processed: Path, *extra: str, raw: Path = RAW):
    """The stages one command each, as `run` chains them: ingest, segment, align, export (`extra`,
    e.g. --no-cache, goes to the stages that use the caches). Returns (exit status, output)."""
    from click.testing import CliRunner
    from pipeline.cli import main
    code, output = 0, ""
    for command in (["ingest", "--raw", str(raw)], ["segment", *extra], ["align", "--raw", str(raw), *extra],
                    ["export"]):
        result = CliRunner().invoke(main, [*command, "--processed", str(processed), "-q"])
        code, output = code or result.exit_code, output + result.output
    return SimpleNamespace(exit_code=code, output=output)


HEAVY = ("spacy", "pandas", "jinja2", "pyarrow", "numpy", "bs4", "requests")


def imported_by(*args: str) -> tuple[set[str], str]:
    """The top-level packages a fresh `python -m pipeline ARGS` has imported when it exits, and its output."""
    code = ("import runpy, sys\nsys.argv = ['pipeline', *sys.argv[1:]]\ntry:\n"
            "    runpy.run_module('pipeline', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    return {name.split(".")[0] for name in done.stderr.split()}, done.stdout


def archive_files() -> list[Path]:
    return sorted(ARCHIVE.glob("*.txt"))


needs_archive = pytest.mark.skipif(
    not ARCHIVE.is_dir() and not os.environ.get("CI"),
    reason=f"the official editions are not at {ARCHIVE} (set CR_ARCHIVE)")


@pytest.fixture(scope="session")
def seeds_run(tmp_path_factory):
    """The whole pipeline over raw/ alone, as `make` runs it."""
    out = tmp_path_factory.mktemp("seeds")
    return stages.run_datasets(RAW, [], out / "processed", quiet=True), out / "processed"


@pytest.fixture(scope="session")
def archive_run(tmp_path_factory):
    """raw/ plus the twelve archive editions."""
    if not ARCHIVE.is_dir():
        pytest.fail(f"CI needs the archive at {ARCHIVE}")
    out = tmp_path_factory.mktemp("archive")
    return stages.run_datasets(RAW, [ARCHIVE], out / "processed", quiet=True), out / "processed"


@pytest.fixture(scope="session")
def seed_rules(seeds_run):
    result, _ = seeds_run
    return {(r.edition, r.rule_id): r for r in result.rules}


def pytest_report_header(config):
    if not ARCHIVE.is_dir():
        return f"NOTE: no official editions at {ARCHIVE} (set CR_ARCHIVE): the archive tests will be skipped"


def pytest_terminal_summary(terminalreporter):
    """Skipped archive tests are said out loud, not left in the short summary."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "official editions" in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"NOTE: {len(skipped)} archive tests were SKIPPED: the official editions are "
                                    f"not at {ARCHIVE} (set CR_ARCHIVE); they test most of the pipeline",
                                    yellow=True, bold=True)
