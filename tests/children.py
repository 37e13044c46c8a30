"""A test's child process, bounded: run in its own session with this checkout's pipeline first on its
path (a script's sys.path starts with its own folder, tests/, and an editable install may point at
another checkout), waited for until a deadline, and killed with its own children past it."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                                    *filter(None, [os.environ.get("PYTHONPATH")])])}


def run_bounded(args: list[str], deadline: float, stdout, stderr, preexec_fn=None) -> tuple[int, int] | None:
    """(exit code, peak resident memory in bytes, its own or its children's) of `args` run from ROOT;
    None when it was still running after `deadline` seconds and was killed."""
    child = subprocess.Popen(args, cwd=ROOT, stdout=stdout, stderr=stderr, env=CHILD_ENV, start_new_session=True,
                             preexec_fn=preexec_fn)
    started = time.monotonic()
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024
        if time.monotonic() - started > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            os.wait4(child.pid, 0)
            return None
        time.sleep(0.05)
