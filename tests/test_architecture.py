"""The layer rules of pyproject.toml ([tool.importlinter]) hold, and they would catch a forbidden arrow."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                              "sys.exit(lint_imports_command())", "--no-cache"]


def lint(folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(folder)}  # the folder's packages, not the installed ones
    return subprocess.run(LINT, cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def test_the_imports_keep_the_layer_contracts():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def copy_project(tmp_path: Path) -> Path:
    for name in ("pipeline", "devtools"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_an_import_up_the_stages_breaks_the_contract(tmp_path):
    folder = copy_project(tmp_path)
    decode = folder / "pipeline" / "ingest" / "decode.py"
    decode.write_text(decode.read_text(encoding="utf-8") + "\nfrom pipeline.report import build  # noqa\n",
                      encoding="utf-8")
    result = lint(folder)
    assert result.returncode == 1
    assert "pipeline.ingest is not allowed to import pipeline.report" in result.stdout
    assert "pipeline.ingest.decode -> pipeline.report.build" in result.stdout


def test_the_vocabulary_knows_no_stage(tmp_path):
    folder = copy_project(tmp_path)
    records = folder / "pipeline" / "records.py"
    records.write_text(records.read_text(encoding="utf-8") + "\nimport pipeline.segment.nlp  # noqa\n",
                       encoding="utf-8")
    result = lint(folder)
    assert result.returncode == 1
    assert "pipeline.records -> pipeline.segment.nlp" in result.stdout


def test_the_shipped_package_never_imports_the_developer_tools(tmp_path):
    folder = copy_project(tmp_path)
    run = folder / "pipeline" / "run.py"
    run.write_text(run.read_text(encoding="utf-8") + "\nfrom devtools import bench  # noqa\n", encoding="utf-8")
    result = lint(folder)
    assert result.returncode == 1
    assert "pipeline.run -> devtools.bench" in result.stdout
