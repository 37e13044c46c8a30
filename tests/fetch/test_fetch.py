"""fetch against a real HTTP server on 127.0.0.1 playing the rules page, the CDX API and the snapshots
(tests/fetch_server.py), built from the archive editions, with duplicates, dead snapshots, error
pages served with status 200, 429 with Retry-After, resets mid-body and answers past the time-out."""
from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import ARCHIVE, FORMATS, RAW, needs_archive
from fetch_server import Route, Server, Site, fake_docx, fake_pdf
from pipeline.ingest import lockfile as fetch_lock
from pipeline import run as stages
from pipeline.cli.main import main
from pipeline.fetch.editions import Client, FetchError, fetch, format_of
from pipeline.fetch.identify import identify

pytestmark = needs_archive
P1, P2, P3 = "wizards.com/magic/comprules/*", "www.wizards.com/magic/comprules/*", \
    "media.wizards.com/*/downloads/MagicCompRules*"
OLD = "http://www.wizards.com/magic/comprules/MagicCompRules.txt"  # one address, many editions over time
ERROR_PAGE = b"<!DOCTYPE html><html><head><title>Page Not Found</title></head><body>Sorry</body></html>"


def edition(name: str) -> bytes:
    return (ARCHIVE / name).read_bytes()


def truncated_2020() -> bytes:
    """The 2020 edition cut off inside the glossary, as an incomplete capture would be."""
    data = edition("2020-06-01.txt")
    return data[: data.index("Credits".encode("utf-8"), len(data) // 2) - 2000]


def build_site() -> Site:
    site = Site()
    live = "/2026/downloads/MagicCompRules%2020260116"
    site.routes["/en/rules"] = Route(
        f"""<html><body><a href="/en/news">News</a><a href="{live}.txt">TXT</a>
        <a href="{live}.pdf">PDF</a><a href="{live}.docx">DOCX</a><a href="/docs/FloorRules.pdf">Floor</a>
        <a href="{live}.txt">TXT again</a></body></html>""".encode(), content_type="text/html")
    site.routes[live + ".txt"] = Route(edition("2026-01-16.txt"))
    site.routes[live + ".pdf"] = Route(fake_pdf())
    site.routes[live + ".docx"] = Route(fake_docx("January 16, 2026"))
    site.snapshot("20031015000000", "http://wizards.com/magic/comprules/MagicCompRules.txt",
                  edition("2003-10-01.txt"), P1)
    site.snapshot("20090510000000", OLD, edition("2009-05-01.txt"), P1)
    site.snapshot("20090510000000", OLD, edition("2009-05-01.txt"), P2)  # the same row through both patterns
    site.snapshot("20090512000000", OLD.replace("www.", ""), edition("2009-05-01.txt"), P1)  # same digest
    site.snapshot("20090801000000", OLD, edition("2009-07-11.txt"), P2, fault="reset")  # reset once, then fine
    site.snapshot("20100101000000", OLD, ERROR_PAGE, P2)  # an error page served with status 200
    site.snapshot("20110101000000", OLD, b"gone", P2, status=404)  # a dead snapshot
    site.snapshot("20120101000000", "http://www.wizards.com/magic/comprules/MagicCompRules_20120101.txt",
                  edition("2011-06-17.txt"), P2, fault="slow", times=99)  # never answers in time
    site.snapshot("20120201000000", "http://www.wizards.com/magic/comprules/index.html", b"<html/>", P2)
    site.snapshot("20130510000000", "http://media.wizards.com/2013/downloads/MagicCompRules_20130501.txt",
                  edition("2013-04-29.txt"), P3, fault="429")
    site.snapshot("20130601000000", "http://media.wizards.com/2013/downloads/MagicCompRules 20130501.txt",
                  edition("2013-04-29.txt"), P3, digest="OTHERDIGEST")  # same bytes, digest not the same
    site.snapshot("20200520000000", "http://media.wizards.com/2020/downloads/MagicCompRules_20200601.txt",
                  edition("2020-06-01.txt"), P3)
    site.snapshot("20200801000000", "http://media.wizards.com/2020/downloads/MagicCompRules_20200601.txt",
                  truncated_2020(), P3)  # a later, incomplete capture of the same file
    return site


def client() -> Client:
    return Client(delay=0, timeout=0.5, retries=1, backoff=0.05)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs into the same folder, the second with nothing new to get."""
    into = tmp_path_factory.mktemp("fetch") / "corpus"
    site = build_site()
    with Server(site) as server:
        urls = dict(rules_page=f"{server.base}/en/rules", cdx=f"{server.base}/cdx", wayback=f"{server.base}/web")
        first = fetch(into, client(), **urls)
        n_first = len(site.log)
        second = fetch(into, client(), **urls)
    return into, site, server.base, first, second, site.log[n_first:]


EXPECTED = {  # file -> the bytes it must hold
    "cr-2003-10-01-txt.txt": lambda: edition("2003-10-01.txt"),
    "cr-2009-05-01-txt.txt": lambda: edition("2009-05-01.txt"),
    "cr-2009-07-11-txt.txt": lambda: edition("2009-07-11.txt"),
    "cr-2013-05-01-txt.txt": lambda: edition("2013-04-29.txt"),  # named by the date in its text
    "cr-2020-06-01-txt.txt": lambda: edition("2020-06-01.txt"),  # the complete copy, not the later cut one
    "cr-2026-01-16-txt.txt": lambda: edition("2026-01-16.txt"),
    "cr-2026-01-16-pdf.pdf": fake_pdf,
    "cr-2026-01-16-docx.docx": lambda: fake_docx("January 16, 2026"),
}


def test_what_lands_in_the_folder_byte_for_byte(runs):
    into = runs[0]
    files = sorted(str(p.relative_to(into)) for p in into.rglob("*") if p.is_file())
    cut = truncated_2020()
    variant = f"variants/cr-2020-06-01-txt-{hashlib.sha256(cut).hexdigest()[:12]}.txt"
    assert files == sorted([*EXPECTED, variant, "fetched.json"])  # no partial file, no error page
    for name, data in EXPECTED.items():
        assert (into / name).read_bytes() == data(), name
    assert (into / variant).read_bytes() == cut


def test_the_lock_records_provenance(runs):
    into, _, base, *_ = runs
    lock = json.loads((into / "fetched.json").read_text())
    by_file = {s["file"]: s for s in lock["files"]}
    old = by_file["cr-2009-07-11-txt.txt"]
    assert old["url"] == OLD and old["snapshot"] == "20090801000000"
    assert old["fetched_from"] == f"{base}/web/20090801000000id_/{OLD}"
    assert old["edition"] == "2009-07-11" and old["read_from"] == "text" and old["complete"]
    assert old["sha256"] == hashlib.sha256(edition("2009-07-11.txt")).hexdigest()
    assert old["retrieved"].endswith("+00:00") and old["retrieved"][:2] == "20"
    live = by_file["cr-2026-01-16-pdf.pdf"]
    assert live["url"] == f"{base}/2026/downloads/MagicCompRules%2020260116.pdf" and live["snapshot"] == ""
    assert live["read_from"] == "name"  # no PDF text reader yet: the edition is the file name's date
    assert by_file["cr-2026-01-16-docx.docx"]["read_from"] == "text"
    assert not next(s for f, s in by_file.items() if f.startswith("variants/"))["complete"]
    also = by_file["cr-2013-05-01-txt.txt"]["also_at"]  # same bytes under another digest: stored once
    assert [a["url"] for a in also] == ["http://media.wizards.com/2013/downloads/MagicCompRules 20130501.txt"]
    reasons = {k["snapshot"]: k["reason"] for k in lock["skipped"]}
    assert reasons == {"20100101000000": "an HTML page, not a .txt edition (title: 'Page Not Found')",
                       "20110101000000": "HTTP 404 Not Found"}


def test_each_distinct_file_is_downloaded_once(runs):
    _, site, *_ = runs
    assert site.requested("/web/").count(f"/web/20090510000000id_/{OLD}") == 1  # one row listed twice
    assert not site.requested("/web/20090512000000")  # another address, the same digest: not asked for
    assert site.requested("/2026/downloads/MagicCompRules%2020260116.txt") == \
        ["/2026/downloads/MagicCompRules%2020260116.txt"]  # linked twice on the page
    assert not any("index.html" in p or "FloorRules" in p for p in site.requested("/"))  # not rules files


def test_the_summary_says_what_happened_and_why(runs):
    first = runs[3]
    assert len(first.fetched) == 9
    assert [(a.rsplit("/", 1)[-1], why) for a, why in first.failed] == \
        [("MagicCompRules_20120101.txt", "timed out (no answer within 0.5 s; 2 tries)")]
    skipped = dict(first.skipped)
    assert any("HTML page" in why for why in skipped.values()) and "HTTP 404 Not Found" in skipped.values()
    had = [why for _, why in first.had]
    assert any(why.startswith("same digest as") for why in had)
    assert any(why == "same bytes as cr-2013-05-01-txt.txt" for why in had)
    assert any("ends early" in note for note in first.notes)


def test_faults_are_retried_politely(runs):
    _, site, *_ = runs
    times = [t for t, p, _ in site.log if p.startswith("/web/20130510000000id_/")]
    assert len(times) == 2 and times[1] - times[0] >= 0.9  # waited the Retry-After: 1 second
    assert len(site.requested("/web/20090801000000id_/")) == 2  # reset mid-body, asked again, kept whole
    assert {ua for _, _, ua in site.log} == {Client().session.headers["User-Agent"]}
    assert "crdiff" in Client().session.headers["User-Agent"]


def test_a_second_run_downloads_nothing_it_has(runs):
    into, site, base, first, second, log = runs
    downloads = [p for _, p, _ in log if not p.startswith(("/cdx", "/en/rules"))]
    # only what failed last time (the answer past the time-out) is asked for again
    assert downloads == ["/web/20120101000000id_/http://www.wizards.com/magic/comprules/"
                         "MagicCompRules_20120101.txt"] * 2
    assert second.fetched == [] and second.skipped == []
    assert len(second.had) == len(first.had) + len(first.fetched) + len(first.skipped)


def test_the_cdx_is_asked_as_documented(runs):
    _, site, *_ = runs
    query = site.cdx_queries[0]
    assert query == {"url": P1, "output": "json", "filter": "statuscode:200", "collapse": "digest"}
    assert [q["url"] for q in site.cdx_queries[:3]] == [P1, P2, P3]


def test_fetched_urls_reach_sources_csv(runs, tmp_path):
    into, _, base, *_ = runs
    result = stages.run_ingest(RAW, [into], tmp_path, quiet=True)
    sources = pd.read_csv(tmp_path / "sources.csv", dtype=str, keep_default_na=False).set_index("path")
    row = sources.loc[f"{into.name}/cr-2003-10-01-txt.txt"]
    assert row["url"] == f"{base}/web/20031015000000id_/http://wizards.com/magic/comprules/MagicCompRules.txt"
    assert row["edition"] == "2003-10-01"
    assert sources.loc["raw/000_3c08dd261a4ed4b0.txt", "url"] == ""
    assert not any(r.path.name == "fetched.json" for r in result.ingested.rejections)


def test_since_keeps_later_editions_only(tmp_path):
    site = build_site()
    with Server(site) as server:
        summary = fetch(tmp_path, client(), rules_page="", cdx=f"{server.base}/cdx", wayback=f"{server.base}/web",
                        since="2013-01-01", formats=("txt",))
    assert sorted(p.name for p in tmp_path.glob("cr-*")) == ["cr-2013-05-01-txt.txt", "cr-2020-06-01-txt.txt"]
    assert not site.requested("/web/20031015000000")  # too old to hold a 2013 edition: never asked for
    assert any("before --since 2013-01-01" in why for _, why in summary.skipped)


def test_a_better_copy_found_later_takes_the_plain_name(tmp_path):
    """Placement depends on the records, not on the order the copies arrive in."""
    site = Site()
    site.snapshot("20200520000000", "http://media.wizards.com/2020/downloads/MagicCompRules_20200601.txt",
                  truncated_2020(), P3)
    with Server(site) as server:
        urls = dict(rules_page="", cdx=f"{server.base}/cdx", wayback=f"{server.base}/web", patterns=(P3,))
        fetch(tmp_path, client(), **urls)
        assert (tmp_path / "cr-2020-06-01-txt.txt").read_bytes() == truncated_2020()  # the only copy, for now
        site.snapshot("20200901000000", "http://media.wizards.com/2020/downloads/MagicCompRules_20200601.txt",
                      edition("2020-06-01.txt"), P3)
        summary = fetch(tmp_path, client(), **urls)
    assert (tmp_path / "cr-2020-06-01-txt.txt").read_bytes() == edition("2020-06-01.txt")
    assert [p.read_bytes() for p in (tmp_path / "variants").iterdir()] == [truncated_2020()]
    assert any(n.startswith("moved cr-2020-06-01-txt.txt -> variants/") for n in summary.notes)


def test_a_failed_download_leaves_nothing_behind(tmp_path):
    site = Site()
    site.snapshot("20090801000000", OLD, edition("2009-07-11.txt"), P2, fault="reset", times=99)
    with Server(site) as server:
        with pytest.raises(FetchError, match="no download could be made: .*connection broken after"):
            fetch(tmp_path, client(), rules_page="", cdx=f"{server.base}/cdx", wayback=f"{server.base}/web",
                  patterns=(P2,))
    assert len(site.requested("/web/")) == 2  # retried once
    assert [p.name for p in tmp_path.iterdir()] == ["fetched.json"]
    assert json.loads((tmp_path / "fetched.json").read_text()) == {"files": [], "skipped": []}


def test_stale_partial_files_are_removed(tmp_path):
    (tmp_path / ".fetch-abc.part").write_bytes(b"half")
    site = Site()
    with Server(site) as server:
        fetch(tmp_path, client(), rules_page="", cdx=f"{server.base}/cdx", wayback=f"{server.base}/web")
    assert not list(tmp_path.glob("*.part"))
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing found: no lock, no empty folder


def test_requests_to_one_host_are_spaced_by_the_delay(tmp_path):
    site = Site()
    with Server(site) as server:
        fetch(tmp_path, Client(delay=0.3, timeout=2, retries=0), rules_page="", cdx=f"{server.base}/cdx",
              wayback=f"{server.base}/web")
    times = [t for t, _, _ in site.log]
    assert len(times) == 3 and all(b - a >= 0.29 for a, b in zip(times, times[1:]))


def test_cli_fetch_end_to_end(tmp_path):
    site = Site()
    site.snapshot("20031015000000", "http://wizards.com/magic/comprules/MagicCompRules.txt",
                  edition("2003-10-01.txt"), P1)
    site.snapshot("20100101000000", OLD, ERROR_PAGE, P1)
    with Server(site) as server:
        args = ["fetch", "--into", str(tmp_path / "c"), "--rules-page", f"{server.base}/en/rules", "--cdx",
                f"{server.base}/cdx", "--wayback", f"{server.base}/web", "--delay", "0", "--retries", "0", "-q"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert (tmp_path / "c/cr-2003-10-01-txt.txt").read_bytes() == edition("2003-10-01.txt")
        result = CliRunner().invoke(main, args[:-1])
    assert result.exit_code == 0
    assert "listing: rules page: failed: HTTP 404 Not Found" in result.output
    assert result.output.strip().endswith("0 fetched, 2 already had, 0 skipped, 0 failed")


def test_cli_nothing_reachable_is_one_line_and_exit_1(tmp_path):
    result = CliRunner().invoke(main, ["fetch", "--into", str(tmp_path), "--rules-page", "http://127.0.0.1:9/rules",
                                       "--cdx", "http://127.0.0.1:9/cdx", "--retries", "0", "--delay", "0"])
    assert result.exit_code == 1
    assert result.output == ("Error: nothing could be reached: http://127.0.0.1:9/rules: unreachable (Connection "
                             "refused; 1 try); http://127.0.0.1:9/cdx: unreachable (Connection refused; 1 try)\n")


def test_cli_rejects_unknown_formats(tmp_path):
    result = CliRunner().invoke(main, ["fetch", "--into", str(tmp_path), "--formats", "txt,epub"])
    assert result.exit_code == 2 and "epub; known: txt, pdf, docx, rtf" in result.output


@pytest.mark.parametrize("url, expected", [
    ("https://media.wizards.com/2024/downloads/MagicCompRules%2020240802.txt", "txt"),
    ("http://www.wizards.com/magic/comprules/MagicCompRules_20091001.PDF", "pdf"),
    ("http://www.wizards.com:80/magic/comprules/MagicCompRules.docx", "docx"),
    ("http://www.wizards.com/magic/comprules/MagicCompRules.rtf", None),  # rtf not asked for
    ("http://www.wizards.com/magic/comprules/", None),  # the rules page itself
    ("http://www.wizards.com/magic/comprules/FloorRules.pdf", None),  # another document
    ("http://www.wizards.com/magic/comprules/MagicCompRules.txt.html", None),
    ("http://www.wizards.com/magic/comprules/Comp_Rules.txt", "txt"),
])
def test_format_of(url, expected):
    assert format_of(url, ("txt", "pdf", "docx")) == expected


@pytest.mark.parametrize("data, fmt, problem", [
    (ERROR_PAGE, "txt", "an HTML page, not a .txt edition (title: 'Page Not Found')"),
    (b"  <html><body>rules</body></html>", "pdf", "an HTML page, not a .pdf edition"),
    (b"", "txt", "empty file"),
    (b"Hello, this is a text file.\r\n", "txt", "not a Comprehensive Rules edition"),
    (fake_pdf()[:-7], "pdf", "truncated PDF (no %%EOF marker at the end)"),
    (b"PK\x03\x04 cut", "docx", "not a DOCX (not a complete ZIP archive"),
    (fake_pdf(), "pdf", "no date in the file name, and the .pdf text is not read here: edition unknown"),
])
def test_identify_says_why_a_file_is_not_an_edition(data, fmt, problem):
    found = identify(data, fmt, f"MagicCompRules.{fmt}")
    assert found.edition is None and found.problem.startswith(problem)


def test_identify_reads_the_date_from_the_text_not_the_name():
    found = identify(edition("2013-04-29.txt"), "txt", "MagicCompRules_20130429.txt")
    assert (found.edition, found.read_from, found.complete) == ("2013-05-01", "text", True)
    assert identify(truncated_2020(), "txt", "x.txt").complete is False


def test_a_broken_lock_file_is_a_clear_error(tmp_path):
    (tmp_path / "fetched.json").write_text('{"files": [\n  {"file": }\n]}\n')
    with pytest.raises(Exception) as e:
        fetch_lock.load(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'fetched.json'}:2: not valid JSON")


@pytest.mark.formats
@pytest.mark.parametrize("name, edition_found, read_from", [
    ("2013-04-29.docx", "2013-05-01", "text"),  # named by its release day, effective May 1
    ("2026-01-16.docx", "2026-01-16", "text"),
    ("2005-10-01.rtf", "2005-10-01", "text"),  # Mac code page RTF
    ("2009-05-01.rtf", "2009-05-01", "text"),
    ("2026-01-16.pdf", "2026-01-16", "name"),  # no PDF text reader here: the published name's date
])
def test_identify_the_other_formats(name, edition_found, read_from):
    fmt = name.rsplit(".", 1)[1]
    found = identify((FORMATS / name).read_bytes(), fmt, f"MagicCompRules_{name[:10].replace('-', '')}.{fmt}")
    assert (found.edition, found.read_from, found.problem) == (edition_found, read_from, "")
    assert identify((FORMATS / name).read_bytes(), fmt, f"MagicCompRules.{fmt}").edition == \
        (edition_found if read_from == "text" else None)


def test_report_pages_show_the_url_escaped(tmp_path):
    """A URL from a lock file is source data: a web address becomes a link, anything else stays text."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    data = edition("2003-10-01.txt")
    (corpus / "cr-2003-10-01-txt.txt").write_bytes(data)
    (corpus / "cr-2003-10-01-txt.txt.bak").write_bytes(b"")  # a rejection: its URL column stays empty
    evil = 'javascript:alert(1)"><script>window.__pwned = 1</script>'
    record = dict(file="cr-2003-10-01-txt.txt", edition="2003-10-01", read_from="text", format="txt", complete=True,
                  sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), url=evil, fetched_from=evil,
                  snapshot="", digest="", retrieved="2026-01-01T00:00:00+00:00")
    (corpus / "fetched.json").write_text(json.dumps({"files": [record], "skipped": []}))
    stages.run_all(RAW, [corpus], tmp_path / "p", tmp_path / "r", quiet=True, use_cache=False)
    for page in ("sources.html", "sources/cr-2003-10-01-txt.html"):
        html = (tmp_path / "r" / page).read_text(encoding="utf-8")
        assert "javascript:alert(1)&#34;&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html, page
        assert "<script>window.__pwned" not in html and 'href="javascript' not in html, page
    sources = pd.read_csv(tmp_path / "p/sources.csv", dtype=str, keep_default_na=False).set_index("path")
    assert sources.loc["corpus/cr-2003-10-01-txt.txt", "url"] == evil
    assert sources.loc["corpus/cr-2003-10-01-txt.txt.bak", "url"] == ""


def test_a_503_with_retry_after_is_waited_for(tmp_path):
    site = Site()
    site.routes["/rules"] = Route(b'<a href="/MagicCompRules_20260116.txt">x</a>', content_type="text/html")
    site.routes["/MagicCompRules_20260116.txt"] = Route(edition("2026-01-16.txt"), fault="503", retry_after=1)
    with Server(site) as server:
        summary = fetch(tmp_path, client(), rules_page=f"{server.base}/rules", cdx="", wayback="")
    times = [t for t, p, _ in site.log if p == "/MagicCompRules_20260116.txt"]
    assert len(times) == 2 and times[1] - times[0] >= 0.9
    assert summary.fetched == ["cr-2026-01-16-txt.txt (edition read from the text)"]
    assert (tmp_path / "cr-2026-01-16-txt.txt").read_bytes() == edition("2026-01-16.txt")


def test_a_retry_after_longer_than_the_longest_wait_fails_that_file_at_once(tmp_path):
    import threading
    site = Site()
    site.routes["/rules"] = Route(b'<a href="/MagicCompRules_20260116.txt">x</a><a href="/MagicCompRules_20250606.txt">'
                                  b'y</a>', content_type="text/html")
    site.routes["/MagicCompRules_20260116.txt"] = Route(edition("2026-01-16.txt"), fault="429", retry_after=86400)
    site.routes["/MagicCompRules_20250606.txt"] = Route(edition("2025-06-06.txt"))
    found = {}
    with Server(site) as server:  # a server asking for a day's pause must not hold the run for a day
        worker = threading.Thread(target=lambda: found.setdefault("summary", fetch(
            tmp_path, client(), rules_page=f"{server.base}/rules", cdx="", wayback="")), daemon=True)
        worker.start()
        worker.join(timeout=20)
    assert not worker.is_alive(), "fetch is still waiting for the Retry-After"
    assert found["summary"].failed == [(f"{server.base}/MagicCompRules_20260116.txt",
                                        "HTTP 429 Too Many Requests (the server asks to wait 86400 s, more than "
                                        "the 600 s a run waits: run again later)")]
    assert found["summary"].fetched == ["cr-2025-06-06-txt.txt (edition read from the text)"]
