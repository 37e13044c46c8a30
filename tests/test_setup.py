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
