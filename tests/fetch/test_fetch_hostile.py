"""fetch against hostile input, all on 127.0.0.1: a planted fetched.json naming files outside the folder,
answers that never end (a byte a second, endless bodies, gzip bombs), listings built to crash a parser,
two runs in one folder, redirects to another origin. Every case ends in seconds and well under 1 GB, with
a right result or one line naming the address or file and why; never a traceback. Inputs are generated:
no edition files needed."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT
from fetch_server import Route, Server, Site, cdx_table, docx_bomb, fake_docx, zip_of_one
from pipeline.ingest import lockfile as fetch_lock
from pipeline.errors import PipelineError
from pipeline.fetch.editions import CDX_PATTERNS, Client, cdx_candidate, fetch

SECONDS, MEGABYTES = 10, 1024  # what every case must stay under
KILL_AFTER = 30  # a run still going then is killed (and the case fails)
P1 = "wizards.com/magic/comprules/*"
DOCX = "/2026/downloads/MagicCompRules_20260116.docx"
OLD = "http://www.wizards.com/magic/comprules/MagicCompRules.docx"


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float
    megabytes: float  # the child's peak resident memory


def run_cli(*args: str) -> Run:
    """`python -m pipeline ARGS` in a child process, with its time and peak memory; killed if still
    running after KILL_AFTER seconds."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start, peak = time.monotonic(), 0
        child = subprocess.Popen([sys.executable, "-m", "pipeline", *args], cwd=ROOT, stdout=out, stderr=err,
                                 text=True)
        while child.poll() is None:
            peak = max(peak, _peak_kb(child.pid))
            if time.monotonic() - start > KILL_AFTER:
                child.kill()
            time.sleep(0.01)
        out.seek(0)
        err.seek(0)
        return Run(child.returncode, out.read(), err.read(), time.monotonic() - start, peak / 1024)


def _peak_kb(pid: int) -> int:
    """The child's own peak resident memory (VmHWM; wait4's ru_maxrss would count the parent's, taken at fork)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)


def fetch_args(into: Path, server: Server, *, rules: str = "", cdx: bool = False, quiet: bool = False) -> list[str]:
    return ["fetch", "--into", str(into), "--rules-page", f"{server.base}{rules}" if rules else "",
            "--cdx", f"{server.base}/cdx" if cdx else "", "--wayback", f"{server.base}/web",
            "--delay", "0", "--retries", "0", "--timeout", "0.2", *(["-q"] if quiet else [])]  # 3 s an address


def within_bounds(run: Run) -> None:
    assert "Traceback" not in run.err, run.err
    assert run.seconds < SECONDS, f"took {run.seconds:.1f} s"
    assert run.megabytes < MEGABYTES, f"peaked at {run.megabytes:.0f} MB"


def one_line_error(run: Run, expected: str) -> None:
    within_bounds(run)
    assert run.code == 1 and run.err.count("\n") == 1 and run.err.startswith("Error: "), run.err
    assert expected in run.err, run.err


def rules_site(route: Route | None = None) -> Site:
    """The rules page linking one DOCX edition (served by `route`, a good one by default)."""
    site = Site()
    site.routes["/en/rules"] = Route(f'<a href="{DOCX}">DOCX</a>'.encode(), content_type="text/html")
    site.routes[DOCX] = route or Route(fake_docx("January 16, 2026"))
    return site


def stored_entry(file: str, data: bytes, **changes) -> dict:
    entry = dict(file=file, edition="2009-05-01", read_from="text", format="txt", complete=True,
                 sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), url="http://x/MagicCompRules.txt",
                 fetched_from="http://x/MagicCompRules.txt", snapshot="", digest="", retrieved="2026-01-01T00:00:00")
    return entry | changes


def plant_lock(corpus: Path, *files: dict, skipped: tuple = ()) -> Path:
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "fetched.json").write_text(json.dumps({"files": list(files), "skipped": list(skipped)}))
    return corpus / "fetched.json"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# 1. A planted fetched.json: names are confined to the folder, dates are dates, bad entries are left alone


def test_a_planted_name_outside_the_folder_is_reported_and_never_moved(tmp_path):
    secret = tmp_path / "outside/secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"not yours")
    corpus = tmp_path / "corpus"
    lock = plant_lock(corpus, stored_entry("../outside/secret.txt", b"not yours"))
    with Server(rules_site()) as server:
        run = run_cli(*fetch_args(corpus, server, rules="/en/rules"))
    within_bounds(run)
    assert run.code == 0, run.err
    assert secret.read_bytes() == b"not yours"
    assert sorted(tree(corpus)) == ["cr-2026-01-16-docx.docx", "fetched.json"]
    assert (f"skipped: {lock}: files[0]: file '../outside/secret.txt' is not a file name fetch gives "
            "(cr-YYYY-MM-DD-FMT.FMT, or one in variants/): entry ignored") in run.err.splitlines()
    assert [s["file"] for s in json.loads(lock.read_text())["files"]] == ["cr-2026-01-16-docx.docx"]


def test_a_planted_edition_cannot_move_a_corpus_file_out(tmp_path):
    corpus, data = tmp_path / "a/corpus", b"an edition fetched before"
    lock = plant_lock(corpus, stored_entry("cr-2009-05-01-txt.txt", data, edition="2009-05-01/../../../stolen"))
    (corpus / "cr-2009-05-01-txt.txt").write_bytes(data)
    with Server(rules_site()) as server:
        run = run_cli(*fetch_args(corpus, server, rules="/en/rules"))
    within_bounds(run)
    assert (corpus / "cr-2009-05-01-txt.txt").read_bytes() == data
    assert sorted(tree(tmp_path)) == ["a/corpus/cr-2009-05-01-txt.txt", "a/corpus/cr-2026-01-16-docx.docx",
                                      "a/corpus/fetched.json"]
    assert (f"skipped: {lock}: files[0]: edition '2009-05-01/../../../stolen' is not a date (YYYY-MM-DD, ASCII "
            "digits): entry ignored") in run.err.splitlines()


@pytest.mark.parametrize("key, value, problem", [
    ("file", "../outside/secret.txt", "file '../outside/secret.txt' is not a file name fetch gives"),
    ("file", "/etc/passwd", "file '/etc/passwd' is not a file name fetch gives"),
    ("file", "variants/../../x.txt", "is not a file name fetch gives"),
    ("file", "variants/cr-2009-05-01-txt-0123456789ab.txt/..", "is not a file name fetch gives"),
    ("file", ".fetch.lock", "is not a file name fetch gives"),
    ("file", "fetched.json", "is not a file name fetch gives"),
    ("file", ["cr-2009-05-01-txt.txt"], "is not a file name fetch gives"),
    ("edition", "/../../", "edition '/../../' is not a date (YYYY-MM-DD, ASCII digits)"),
    ("edition", "2009-13-45", "edition '2009-13-45' is not a date"),
    ("edition", "\u00b2\u2070\u2070\u2079-05-01", "is not a date"),  # superscript digits: isdigit() says yes
    ("edition", "20090501", "is not a date"),  # date.fromisoformat takes it since Python 3.11
    ("format", "txt/../../x", "format 'txt/../../x' is not one of txt, pdf, docx, rtf"),
    ("sha256", "../" + "0" * 61, "is not a sha256"),
    ("snapshot", "\u00b2\u2070\u2070\u2079" + "0" * 10, "is not a Wayback timestamp"),
    ("snapshot", "20091399000000", "is not a Wayback timestamp"),
    ("bytes", "25", "bytes '25' is not a number of bytes"),
    ("bytes", True, "is not a number of bytes"),
    ("complete", 1, "complete 1 is not true or false"),
    ("also_at", [{"url": "x"}], "also_at is not a list of {url, snapshot, digest}"),
    ("url", {"nested": []}, "url is not a text"),
    ("extra", "x", "unknown extra"),
])
def test_each_bad_entry_is_named_and_ignored(tmp_path, key, value, problem):
    data = b"an edition fetched before"
    (tmp_path / "cr-2009-05-01-txt.txt").write_bytes(data)
    good = stored_entry("cr-2009-05-01-txt.txt", data)
    lock = plant_lock(tmp_path, good | {"sha256": "f" * 64, key: value}, good)
    loaded = fetch_lock.load(tmp_path)
    assert [s.file for s in loaded.files] == ["cr-2009-05-01-txt.txt"]  # the good entry, after the bad one
    assert len(loaded.rejected) == 1 and loaded.rejected[0].startswith(f"{lock}: files[0]: ")
    assert problem in loaded.rejected[0] and loaded.rejected[0].endswith(": entry ignored")


def test_near_misses_are_good_entries(tmp_path):
    data = b"x"
    (tmp_path / "variants").mkdir()
    for name in ("cr-2009-05-01-txt.txt", "variants/cr-2009-05-01-txt-0123456789ab.txt"):
        (tmp_path / name).write_bytes(data + name.encode())
    plant_lock(tmp_path, stored_entry("cr-2009-05-01-txt.txt", data + b"cr-2009-05-01-txt.txt", snapshot=""),
               stored_entry("variants/cr-2009-05-01-txt-0123456789ab.txt",
                            data + b"variants/cr-2009-05-01-txt-0123456789ab.txt", snapshot="20090510000000",
                            also_at=[{"url": "u", "snapshot": "", "digest": ""}], final_url="http://y/z.txt"))
    loaded = fetch_lock.load(tmp_path)
    assert loaded.rejected == [] and len(loaded.files) == 2


def test_a_file_not_in_the_lock_is_never_overwritten(tmp_path):
    """A file in the plain name's place that the lock does not know stays; the download waits in variants/."""
    (tmp_path / "cr-2026-01-16-docx.docx").write_bytes(b"mine")
    with Server(rules_site()) as server:
        summary = fetch(tmp_path, Client(delay=0, timeout=1, retries=0), rules_page=f"{server.base}/en/rules",
                        cdx="", wayback="")
    assert (tmp_path / "cr-2026-01-16-docx.docx").read_bytes() == b"mine"
    [stored] = json.loads((tmp_path / "fetched.json").read_text())["files"]
    assert stored["file"].startswith("variants/") and (tmp_path / stored["file"]).read_bytes() == \
        fake_docx("January 16, 2026")
    assert summary.notes == [f"{stored['file']} stays: cr-2026-01-16-docx.docx is taken by a file not in "
                             "fetched.json"]


def test_variants_as_a_link_out_of_the_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus/variants").symlink_to(outside)
    with Server(rules_site()) as server:
        run = run_cli(*fetch_args(tmp_path / "corpus", server, rules="/en/rules"))
    one_line_error(run, f"{tmp_path / 'corpus/variants'}: a symbolic link or a file, not a folder")
    assert list(outside.iterdir()) == []


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_links_to_endless_files_are_not_read(tmp_path):
    """fetched.json linked to /dev/zero is refused; an entry's file linked to it is not there as recorded."""
    (tmp_path / "fetched.json").symlink_to("/dev/zero")
    with pytest.raises(PipelineError, match="fetched.json: cannot read it \\(a symbolic link: not followed\\)"):
        fetch_lock.load(tmp_path)
    (tmp_path / "fetched.json").unlink()
    (tmp_path / "cr-2009-05-01-txt.txt").symlink_to("/dev/zero")
    plant_lock(tmp_path, stored_entry("cr-2009-05-01-txt.txt", b""))
    assert fetch_lock.load(tmp_path).files == []
    assert fetch_lock.fetched_url(tmp_path / "cr-2009-05-01-txt.txt") == "http://x/MagicCompRules.txt"


def test_a_lock_nested_too_deeply_is_one_line(tmp_path):
    (tmp_path / "fetched.json").write_text("[" * 100_000 + "]" * 100_000)
    run = run_cli("fetch", "--into", str(tmp_path), "--rules-page", "", "--cdx", "")
    one_line_error(run, f"{tmp_path / 'fetched.json'}: not a fetch lock file (nested too deeply)")


# 2. Answers that never end: every body has a size cap (decompressed), every address a deadline


@pytest.mark.parametrize("fault, listing", [("endless", "rules"), ("bomb", "rules"), ("endless", "cdx"),
                                             ("bomb", "cdx")])
def test_an_endless_or_bomb_listing_stops_at_the_cap(tmp_path, fault, listing):
    site = Site()
    site.routes["/en/rules"] = Route(b"<p>rules</p>" * 6000, fault=fault, content_type="text/html")
    site.cdx_answers = {p: Route(b'["x", ' * 12000, fault=fault, content_type="application/json")
                        for p in CDX_PATTERNS}
    with Server(site) as server:
        run = run_cli(*fetch_args(tmp_path, server, rules="/en/rules" if listing == "rules" else "",
                                  cdx=listing == "cdx"))
    address = f"{server.base}/en/rules" if listing == "rules" else f"{server.base}/cdx"
    one_line_error(run, f"Error: nothing could be reached: {address}: larger than 8 MB: not a rules page or a CDX "
                        "listing")


@pytest.mark.parametrize("fault", ["endless", "bomb"])
def test_an_endless_or_bomb_download_stops_at_the_cap(tmp_path, fault):
    with Server(rules_site(Route(fault=fault, times=99))) as server:
        run = run_cli(*fetch_args(tmp_path, server, rules="/en/rules"))
    within_bounds(run)
    assert run.code == 0
    assert f"skipped: {server.base}{DOCX}: larger than 64 MB: not an edition" in run.err.splitlines()
    assert [p.name for p in tmp_path.iterdir()] == ["fetched.json"]  # no partial file left


def test_a_docx_that_is_a_zip_bomb_is_read_only_as_far_as_its_date(tmp_path):
    """1.3 MB on the wire, 1.25 GB once inflated: only the start of its text is needed for the date."""
    with Server(rules_site(Route(docx_bomb("January 16, 2026")))) as server:
        run = run_cli(*fetch_args(tmp_path, server, rules="/en/rules"))
    within_bounds(run)
    assert run.code == 0, run.err
    [stored] = json.loads((tmp_path / "fetched.json").read_text())["files"]
    assert (stored["file"], stored["read_from"]) == ("cr-2026-01-16-docx.docx", "text")


@pytest.mark.parametrize("data, method, problem", [
    (b"\xff" * 100, 8, "Error -3 while decompressing data"),  # not deflate data
    (b"x" * 100, 99, "compression method"),  # AES-encrypted: not read by zipfile
], ids=["not-deflate", "encrypted"])
def test_a_docx_that_cannot_be_inflated_is_skipped_with_the_reason(tmp_path, data, method, problem):
    body = zip_of_one("word/document.xml", data, method=method, crc=0, size=1000)
    with Server(rules_site(Route(body))) as server:
        run = run_cli(*fetch_args(tmp_path, server, rules="/en/rules"))
    within_bounds(run)
    assert run.code == 0, run.err
    [line] = [line for line in run.err.splitlines() if line.startswith("skipped:")]
    assert line.startswith(f"skipped: {server.base}{DOCX}: not a readable DOCX (") and problem in line, line


def test_a_redirect_whose_body_is_a_bomb_is_followed_without_reading_it(tmp_path):
    """requests reads a redirect's whole body into memory before following it: gigabytes for a bomb."""
    site = rules_site(Route(fault="redirect-bomb", location="/real.docx"))
    site.routes["/real.docx"] = Route(fake_docx("January 16, 2026"))
    with Server(site) as server:
        run = run_cli(*fetch_args(tmp_path, server, rules="/en/rules"))
    within_bounds(run)
    assert run.code == 0, run.err
    [stored] = json.loads((tmp_path / "fetched.json").read_text())["files"]
    assert (stored["file"], stored["final_url"]) == ("cr-2026-01-16-docx.docx", f"{server.base}/real.docx")


@pytest.mark.parametrize("fault", ["drip", "drip-headers"])
def test_a_byte_a_second_is_cut_at_the_deadline(tmp_path, fault):
    """--timeout bounds each read; 15 of them bound the whole address (here 3 s), headers and body alike."""
    with Server(rules_site(Route(fake_docx("January 16, 2026"), fault=fault, drip_seconds=0.1, times=99))) as server:
        run = run_cli(*fetch_args(tmp_path, server, rules="/en/rules", quiet=True))
    one_line_error(run, f"Error: no download could be made: {server.base}{DOCX}: no complete answer within 3 s "
                        "(15 x --timeout) (tried again next run)")
    assert [p.name for p in tmp_path.iterdir()] == ["fetched.json"]


def test_a_listing_a_byte_a_second_is_cut_at_the_deadline(tmp_path):
    """One of the three listings drips: it fails after 3 s, the run goes on with the others."""
    site = Site()
    site.cdx_answers[P1] = Route(json.dumps(cdx_table([])).encode() + b" " * 1000, fault="drip", drip_seconds=0.1)
    site.snapshot("20090801000000", OLD, fake_docx("July 11, 2009"), CDX_PATTERNS[1])
    with Server(site) as server:
        run = run_cli(*fetch_args(tmp_path, server, cdx=True))
    within_bounds(run)
    assert run.code == 0, run.err
    assert f"listing: CDX {P1}: failed: no complete answer within 3 s (15 x --timeout) (tried again next run)" in \
        run.out.splitlines()
    assert sorted(tree(tmp_path)) == ["cr-2009-07-11-docx.docx", "fetched.json"]


def test_the_deadline_counts_retries_and_their_waits(tmp_path):
    """Bodies cut short, retried after 0, 1, 2 and 4 s: 7 s of waiting, more than the 2.5 s an address has.
    A try that would begin after the deadline is not made."""
    site = rules_site(Route(fake_docx("January 16, 2026"), fault="reset", times=99))
    client = Client(delay=0, timeout=1, retries=4, backoff=1, deadline=2.5)
    start = time.monotonic()
    with Server(site) as server:
        with pytest.raises(PipelineError, match=f"no download could be made: {server.base}{DOCX}: connection broken"):
            fetch(tmp_path, client, rules_page=f"{server.base}/en/rules", cdx="", wayback="")
    assert time.monotonic() - start < 2.5
    assert len(site.requested(DOCX)) == 3  # at 0, 0 and 1 s; the next, at 3 s, would be past the deadline


# 3. Listings built to crash a parser: reported and skipped


def test_a_cdx_listing_nested_100000_deep_is_one_line(tmp_path):
    site = Site()
    site.cdx_answers = {p: Route(b"[" * 100_000 + b"]" * 100_000, content_type="application/json")
                        for p in CDX_PATTERNS}
    with Server(site) as server:
        run = run_cli(*fetch_args(tmp_path, server, cdx=True))
    one_line_error(run, f"nothing could be reached: {server.base}/cdx: the CDX answer is not JSON (nested too "
                        "deeply)")


def test_a_malformed_cdx_row_is_reported_and_the_others_fetched(tmp_path):
    """A timestamp in superscript digits used to be taken (str.isdigit), downloaded, then crash the naming
    and leave the download in variants/ with no record of it."""
    site = Site()
    bad = "\u00b2\u2070\u2070\u2079" + "0510000000"
    site.snapshot(bad, OLD, fake_docx("May 1, 2009"), P1)
    site.snapshot("20090801000000", OLD, fake_docx("July 11, 2009"), P1)
    with Server(site) as server:
        run = run_cli(*fetch_args(tmp_path, server, cdx=True))
    within_bounds(run)
    assert run.code == 0, run.err
    assert (f"skipped: {server.base}/cdx (CDX {P1}): 1 malformed rows not used; the first: row 1: '{bad}' is not a "
            "Wayback timestamp (YYYYMMDDhhmmss, ASCII digits)") in run.err.splitlines()
    lock = json.loads((tmp_path / "fetched.json").read_text())
    assert sorted(tree(tmp_path)) == ["cr-2009-07-11-docx.docx", "fetched.json"]  # nothing orphaned
    assert [s["file"] for s in lock["files"]] == ["cr-2009-07-11-docx.docx"]


@pytest.mark.parametrize("row, problem", [
    (["20090510000000", OLD, "D"], ""),
    (["\uff12\uff10\uff10\uff19" + "0510000000", OLD, "D"], "is not a Wayback timestamp"),  # full-width digits
    (["2009051000000", OLD, "D"], "is not a Wayback timestamp"),
    (["20091399000000", OLD, "D"], "is not a Wayback timestamp"),
    ([20090510000000, OLD, "D"], "is not a Wayback timestamp"),
    (["20090510000000", OLD + "\n", "D"], "original 'http://www.wizards.com/magic/comprules/MagicCompRules.docx\\n' "
                                          "is not an address"),
    (["20090510000000", None, "D"], "original None is not an address"),
    (["20090510000000", OLD, ["D"]], "digest ['D'] is not an address"),
    (["20090510000000", OLD], "not a list of the header's columns"),
    ({"timestamp": "20090510000000"}, "not a list of the header's columns"),
])
def test_cdx_rows_are_checked(row, problem):
    col = {"timestamp": 0, "original": 1, "digest": 2}
    if not problem:
        assert cdx_candidate(row, col, "http://w/web", ("docx",)).snapshot == "20090510000000"
        return
    with pytest.raises(ValueError, match=re.escape(problem)):
        cdx_candidate(row, col, "http://w/web", ("docx",))


@pytest.mark.parametrize("answer", [b'{"timestamp": 1}', b'"text"', b"[1, 2]", b'[["original"]]', b"[[]]"])
def test_a_cdx_answer_that_is_not_a_table_is_one_line(tmp_path, answer):
    site = Site()
    site.cdx_answers[P1] = Route(answer, content_type="application/json")
    with Server(site) as server:
        with pytest.raises(PipelineError) as e:
            fetch(tmp_path, Client(delay=0, timeout=1, retries=0), rules_page="", cdx=f"{server.base}/cdx",
                  wayback=f"{server.base}/web", patterns=(P1,))
    assert str(e.value).startswith(f"nothing could be reached: {server.base}/cdx: the CDX answer is not a JSON "
                                   "table with timestamp, original and digest columns")


# 4. Two runs in one folder: the second is refused while the first works


def test_a_second_fetch_in_the_same_folder_is_refused(tmp_path):
    gate = threading.Event()
    site = rules_site(Route(fake_docx("January 16, 2026"), fault="hold", gate=gate))
    done = {}
    with Server(site) as server:
        first = threading.Thread(target=lambda: done.setdefault("summary", fetch(
            tmp_path, Client(delay=0, timeout=5, retries=0), rules_page=f"{server.base}/en/rules", cdx="",
            wayback="")))
        first.start()
        while not site.requested(DOCX):  # the first run is downloading
            time.sleep(0.01)
        parts = list(tmp_path.glob(".fetch-*.part"))
        second = run_cli(*fetch_args(tmp_path, server, rules="/en/rules", quiet=True))
        assert list(tmp_path.glob(".fetch-*.part")) == parts != []  # its download is left alone
        gate.set()
        first.join(10)
    one_line_error(second, f"Error: another fetch is running in {tmp_path}\n")
    assert done["summary"].fetched == ["cr-2026-01-16-docx.docx (edition read from the text)"]
    assert [s["file"] for s in json.loads((tmp_path / "fetched.json").read_text())["files"]] == \
        ["cr-2026-01-16-docx.docx"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cr-2026-01-16-docx.docx", "fetched.json"]


def test_the_folder_lock_is_not_followed_through_a_link(tmp_path):
    target = tmp_path / "elsewhere.txt"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / ".fetch.lock").symlink_to(target)
    with pytest.raises(PipelineError, match=r"\.fetch\.lock: cannot open the lock file \(a symbolic link: not "
                                            r"followed\): move it away"):
        fetch(corpus, Client(), rules_page="", cdx="", wayback="")
    assert not target.exists()


def test_a_lock_file_left_by_a_killed_run_does_not_stop_the_next(tmp_path):
    (tmp_path / ".fetch.lock").write_text("")
    with Server(rules_site()) as server:
        fetch(tmp_path, Client(delay=0, timeout=1, retries=0), rules_page=f"{server.base}/en/rules", cdx="",
              wayback="")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cr-2026-01-16-docx.docx", "fetched.json"]


# 5. Redirects and file modes


def test_a_redirect_to_another_origin_is_recorded(tmp_path):
    other = Site()
    other.routes["/mirror.docx"] = Route(fake_docx("January 16, 2026"))
    with Server(other) as mirror:
        with Server(rules_site(Route(fault="redirect", location=f"{mirror.base}/mirror.docx"))) as server:
            fetch(tmp_path, Client(delay=0, timeout=1, retries=0), rules_page=f"{server.base}/en/rules", cdx="",
                  wayback="")
    [stored] = json.loads((tmp_path / "fetched.json").read_text())["files"]
    assert (stored["url"], stored["fetched_from"]) == (f"{server.base}{DOCX}",) * 2
    assert stored["final_url"] == f"{mirror.base}/mirror.docx"


def test_fetched_files_get_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        with Server(rules_site()) as server:
            fetch(tmp_path, Client(delay=0, timeout=1, retries=0), rules_page=f"{server.base}/en/rules", cdx="",
                  wayback="")
    finally:
        os.umask(old)
    assert oct((tmp_path / "cr-2026-01-16-docx.docx").stat().st_mode & 0o777) == oct(0o644)


def test_the_deadline_option_reaches_the_client(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from pipeline.fetch import editions as fetcher
    from pipeline.cli.main import main
    seen = {}

    def fake_fetch(into, client, **kwargs):
        seen["deadline"] = client.deadline
        raise SystemExit(0)
    monkeypatch.setattr(fetcher, "fetch", fake_fetch)
    CliRunner().invoke(main, ["fetch", "--into", str(tmp_path), "--deadline", "7.5", "-q"])
    assert seen == {"deadline": 7.5}
    result = CliRunner().invoke(main, ["fetch", "--into", str(tmp_path), "--deadline", "0"])
    assert result.exit_code == 2 and "--deadline" in result.output
