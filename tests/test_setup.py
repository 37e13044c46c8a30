"""Set-up: `make test` installs what the tests need, and says when archive tests are skipped."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT

# Run under make (CI's `make test-fast VENV=.venv-3.12`), the variables of the outer make would reach these
OWN_MAKE = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def test_make_test_installs_chromium_when_it_is_missing(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    os.symlink(shutil.which("id"), fake / "id")
    for tool in ("apt-get", "sudo"):
        (fake / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {tmp_path}/calls\n'
                                 + ('[ "$1" = -n ] && shift\nexec "$@"\n' if tool == "sudo" else ""))
        (fake / tool).chmod(0o755)
    out = subprocess.run([shutil.which("make"), "-s", "-C", str(ROOT), "browser"], env={"PATH": str(fake)},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[-1].endswith("apt-get install -y -q --no-install-recommends chromium")
    test_recipe = subprocess.run(["make", "-n", "-C", str(ROOT), "test"], capture_output=True, text=True,
                                 env=OWN_MAKE).stdout
    assert test_recipe.index("apt-get install") < test_recipe.index("-m pytest")


def test_without_a_way_to_install_chromium_make_test_goes_on(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    os.symlink(shutil.which("id"), fake / "id")
    out = subprocess.run([shutil.which("make"), "-s", "-C", str(ROOT), "browser"], env={"PATH": str(fake)},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "the browser tests will be skipped" in out.stdout


def test_skipped_archive_tests_are_announced(tmp_path):
    env = {**os.environ, "CR_ARCHIVE": str(tmp_path / "none")}
    env.pop("CI", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/ingest/test_ingest_robust.py", "-k", "several_editions"],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    assert "1 skipped" in out.stdout
    assert (f"NOTE: 1 tests SKIPPED: they need the twelve official editions, not at {tmp_path / 'none'}. "
            "To run them:") in out.stdout


def _pins(lock: str) -> dict[str, str]:
    """A lock's pins that apply to this Python (a universal lock pins some packages per version)."""
    from packaging.requirements import Requirement
    pins = {}
    for line in (ROOT / lock).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#", "-")):
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate():
                pins[req.name.lower().replace("_", "-")] = str(req.specifier).removeprefix("==")
    return pins


def test_the_locks_pin_every_dependency_within_its_range_and_agree_with_what_is_installed():
    import tomllib
    from importlib import metadata
    from packaging.requirements import Requirement
    running, testing = _pins("requirements.lock"), _pins("requirements-test.lock")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    for pins, specs in ((running, project["dependencies"]),
                        (testing, project["dependencies"] + extras["test"] + extras["serve"])):
        for spec in specs:
            req = Requirement(spec)
            name = req.name.lower().replace("_", "-")
            assert name in pins and req.specifier.contains(pins[name]), f"{spec}: locked {pins.get(name)}"
    assert all(testing[name] == version for name, version in running.items())  # the running lock within the test's
    assert not {"pytest", "playwright", "duckdb"} & set(running)  # `make` installs no test tools
    for name, version in testing.items():
        assert metadata.version(name) == version, f"{name}: installed {metadata.version(name)}, locked {version}"
    recipe = subprocess.run(["make", "-n", "-B", "-C", str(ROOT), ".venv/.installed"],
                            capture_output=True, text=True, env=OWN_MAKE).stdout
    assert "pip install --quiet -r requirements.lock" in recipe and "--no-deps -e ." in recipe
