"""Datasette over processed/crdiff.sqlite, on 127.0.0.1 only: `serve` runs it in the foreground;
`running` starts it in a child process on a free port, waits until it answers and always stops it
(the test and `serve --measure` use it); `measure` fetches the pages people open (every table's
first page, a search, each canned query, a rule's history, a text's page) and times them.

Datasette is an optional extra (`pip install 'crdiff[serve]'`): it is only ever run as a child
process (`python -m datasette`), never imported, so the rest of the package does not need it.
"""
from __future__ import annotations

import importlib.util
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from pipeline.publish import browse
from pipeline.publish import transaction as publish
from pipeline.errors import PipelineError
from pipeline.schema import TABLES

DATABASE = "crdiff.sqlite"  # pipeline.publish.database.NAME (that module imports numpy)
HOST = "127.0.0.1"  # never another interface: the server has no authentication
STARTUP_SECONDS = 60.0
# Datasette's facet suggestions try every column of a page's table for up to 50 ms each: on the
# 300,000-row tables that alone is a second per page, for suggestions nobody asked for.
SETTINGS = (("suggest_facets", "off"),)


def command(processed: Path, port: int) -> list[str]:
    """The Datasette command line: the database immutable (a run replaces it whole, never edits it:
    Datasette counts its tables once; restart it after a run), with its metadata."""
    settings = [arg for name, value in SETTINGS for arg in ("--setting", name, value)]
    return [sys.executable, "-m", "datasette", "serve", "-i", str(processed / DATABASE),
            "--metadata", str(processed / browse.METADATA), "--host", HOST, "--port", str(port), *settings]


def check(processed: Path) -> None:
    """Datasette is installed, and the database and its metadata are the published run's."""
    if importlib.util.find_spec("datasette") is None:
        raise PipelineError("datasette is not installed: pip install 'crdiff[serve]' (or `make serve`)")
    publish.verify(processed, [DATABASE, browse.METADATA], quick=True)


def serve(processed: Path, port: int) -> int:
    """Datasette in the foreground until Ctrl-C; returns its exit status."""
    check(processed)
    try:
        return subprocess.run(command(processed, port)).returncode
    except KeyboardInterrupt:  # the child had the same Ctrl-C and stops on its own
        return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@contextmanager
def running(processed: Path, port: int = 0):
    """Datasette in a child process; yields its base URL once it answers, stops it on the way out."""
    check(processed)
    port = port or free_port()
    url = f"http://{HOST}:{port}"
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a pipe nobody reads fills and stalls it
        child = subprocess.Popen(command(processed, port), stdout=log, stderr=log)
        try:
            _wait(url, child, log)
            yield url
        finally:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _wait(url: str, child: subprocess.Popen, log) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if child.poll() is not None:
            log.seek(0)
            said = log.read().decode("utf-8", "replace").strip().splitlines()
            raise PipelineError(f"datasette stopped at start (status {child.returncode}): "
                                f"{said[-1] if said else 'no output'}")
        try:
            with urllib.request.urlopen(f"{url}/-/versions.json", timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise PipelineError(f"datasette did not answer on {url} within {STARTUP_SECONDS:.0f} s")


def fetch(url: str, timeout: float = 30.0) -> tuple[int, bytes, float]:
    """Status, body and seconds of one GET (an HTTP error is a status, not an exception)."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    return status, body, time.perf_counter() - start


def pages(processed: Path) -> list[str]:
    """The paths people open: the index, every table's and view's first page, a search, each
    canned query with a real rule, step and word of this database, and a text's own page."""
    con = sqlite3.connect(f"{(processed / DATABASE).resolve().as_uri()}?mode=ro", uri=True)
    try:
        sample = browse.sample(con)
    finally:
        con.close()
    db = f"/{browse.DATABASE}"
    paths = ["/", db] + [f"{db}/{urllib.parse.quote(t.name)}" for t in TABLES]  # glossary is a view
    paths.append(f"{db}/texts?" + urllib.parse.urlencode({"_search": sample["q"]}))
    paths.append(f"{db}/texts/{sample['text_id']}")
    for name, query in browse.QUERIES.items():
        paths.append(f"{db}/{name}?" + urllib.parse.urlencode({p: sample[p] for p in query["params"]}))
    return paths


def measure(processed: Path, repeat: int = 2) -> list[tuple[float, float, int, str]]:
    """(first fetch, best of the others, status, path) of every page, slowest first."""
    timings = []
    with running(processed) as url:
        for path in pages(processed):
            runs = [fetch(url + path) for _ in range(max(repeat, 1))]
            timings.append((runs[0][2], min(r[2] for r in runs[1:] or runs), runs[0][0], path))
    return sorted(timings, reverse=True)
