import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import settings

from pipeline import run as stages

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
    from pipeline.cli.main import main
    code, output = 0, ""
    for command in (["ingest", "--raw", str(raw), *extra], ["segment", *extra], ["align", "--raw", str(raw), *extra],
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


# The twelve editions the archive tests were written against (tests/README.md says how to get them).
EDITIONS = ("2003-10-01", "2005-10-01", "2006-07-15", "2007-10-01", "2008-02-01", "2009-05-01", "2009-07-11",
            "2011-06-17", "2013-04-29", "2020-06-01", "2025-06-06", "2026-01-16")


def archive_files() -> list[Path]:
    return [ARCHIVE / f"{edition}.txt" for edition in EDITIONS]


# Tests that need material a clone does not have carry a marker: they skip where it is missing (a
# user's machine, with one summary line saying how to run them) and fail on CI, which must have it.
FORMATS = Path(os.environ.get("CR_FORMATS", ROOT.parent / "shared" / "cr-formats"))
CHROMIUM = Path(os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium"))
NEEDS = {  # marker -> (what must exist, what it is, how to get it)
    "archive": (ARCHIVE, "the twelve official editions",
                "put the editions tests/README.md lists in a folder and run `CR_ARCHIVE=FOLDER make test`"),
    "formats": (FORMATS, "the PDF/DOCX/RTF/DOC editions", "set CR_FORMATS=FOLDER (tests/README.md)"),
    "browser": (CHROMIUM, "Chromium", "install Debian's chromium package (`make browser`) or set CHROMIUM=PATH"),
}
needs_archive = pytest.mark.archive


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "archive_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.archive)


def pytest_runtest_setup(item):
    for marker, (path, what, _) in NEEDS.items():
        if item.get_closest_marker(marker) and not path.exists():
            if os.environ.get("CI"):
                pytest.fail(f"CI needs {what} at {path}")
            pytest.skip(f"needs {what}, not at {path}")


@pytest.fixture(scope="session")
def paragraph_cache():
    """One ParagraphCache for the tests that read whole editions: each paragraph is analysed once."""
    from pipeline.segment.rules import ParagraphCache
    return ParagraphCache()


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
    missing = [f"{what} (not at {path})" for path, what, _ in NEEDS.values() if not path.exists()]
    if missing:
        return "NOTE: tests that need " + ", ".join(missing) + " will be skipped"


def pytest_terminal_summary(terminalreporter):
    """Skipped tests are counted out loud, with how to run them, not left in the short summary."""
    skipped = [str(r.longrepr) for r in terminalreporter.stats.get("skipped", [])]
    for path, what, how in NEEDS.values():
        count = sum(f"needs {what}, not at" in s for s in skipped)
        if count:
            terminalreporter.write_line(f"NOTE: {count} tests SKIPPED: they need {what}, not at {path}. "
                                        f"To run them: {how}", yellow=True, bold=True)


def two_small_editions(folder: Path) -> tuple[Path, Path]:
    """a.txt (May 2009) and b.txt (July 2009): two rules that swap numbers, one of them reworded."""
    head = ("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of {}.\n\n"
            "1. Game\n\n100. General\n\n")
    a, b = folder / "a.txt", folder / "b.txt"
    a.write_text(head.format("May 1, 2009") + "100.1. A player may play a card from his or her "
                 "hand.\n\n100.2. Each game has a winner.\n", encoding="utf-8")
    b.write_text(head.format("July 11, 2009") + "100.1. Each game has a winner.\n\n100.2. A player "
                 "may cast a card from their hand.\n", encoding="utf-8")
    return a, b


def flipped(value: str | bytes) -> str | bytes:
    """One digit of a JSON value changed, or one bit of a packed (zlib'd) one."""
    if isinstance(value, bytes):
        return value[:-1] + bytes([value[-1] ^ 1])
    i = next(i for i, c in enumerate(value) if c.isdigit())
    return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]
