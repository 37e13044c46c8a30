"""Set-up: `make test` installs what the tests need, and says when archive tests are skipped."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT


def test_make_test_installs_chromium_when_it_is_missing(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    os.symlink(shutil.which("id"), fake / "id")
    for tool in ("apt-get", "sudo"):
        (fake / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {tmp_path}/calls\n'
                                 + ('exec "$@"\n' if tool == "sudo" else ""))
        (fake / tool).chmod(0o755)
    out = subprocess.run([shutil.which("make"), "-s", "-C", str(ROOT), "browser"], env={"PATH": str(fake)},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[-1].endswith("apt-get install -y -q --no-install-recommends chromium")
    test_recipe = subprocess.run(["make", "-n", "-C", str(ROOT), "test"], capture_output=True, text=True).stdout
    assert test_recipe.index("apt-get install") < test_recipe.index("-m pytest")


def test_skipped_archive_tests_are_announced(tmp_path):
    env = {**os.environ, "CR_ARCHIVE": str(tmp_path / "none")}
    env.pop("CI", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/test_ingest_robust.py", "-k", "several_editions"],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    assert "1 skipped" in out.stdout
    assert f"NOTE: 1 archive tests were SKIPPED: the official editions are not at {tmp_path / 'none'}" in out.stdout


def test_the_lock_pins_every_dependency_within_its_range_and_is_what_is_installed():
    import tomllib
    from importlib import metadata
    from packaging.requirements import Requirement
    pins = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#", "-")):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version.strip()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for spec in project["dependencies"] + project["optional-dependencies"]["test"]:
        req = Requirement(spec)
        name = req.name.lower().replace("_", "-")
        assert name in pins and req.specifier.contains(pins[name]), f"{spec}: locked {pins.get(name)}"
    for name, version in pins.items():
        assert metadata.version(name) == version, f"{name}: installed {metadata.version(name)}, locked {version}"
    recipe = subprocess.run(["make", "-n", "-B", "-C", str(ROOT), ".venv/.installed"], capture_output=True, text=True).stdout
    assert "pip install --quiet -r requirements.lock" in recipe and "--no-deps -e ." in recipe
