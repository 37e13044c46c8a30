"""reports/feed.xml: valid Atom, checked twice. A stdlib check of RFC 4287's "MUST"s (one id, title and updated
per feed and entry, an author, absolute ids, RFC 3339 dates, an alternate link or content per entry, unique ids)
that feedparser does not make; and feedparser itself, as feed readers read it (no bozo, Atom 1.0, links resolved
against the feed's address). Every link, in the entries and in their HTML, leads to a page and anchor written."""
import re
import xml.etree.ElementTree as ET
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import feedparser
import pytest

from pipeline.report import feed
from pipeline.report import build as report
from conftest import needs_archive

A = "{http://www.w3.org/2005/Atom}"
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def atom_problems(data: bytes) -> list[str]:
    """What breaks RFC 4287's musts (sections 4.1.1, 4.1.2, 4.2.6, 4.2.7, 3.3)."""
    root = ET.fromstring(data)
    if root.tag != f"{A}feed":
        return [f"the root is {root.tag}, not atom:feed"]
    out = _once(root, "feed", ("id", "title", "updated"))
    entries = root.findall(f"{A}entry")
    if root.find(f"{A}author") is None and any(e.find(f"{A}author") is None for e in entries):
        out.append("no author on the feed, nor on every entry")
    ids = [e.findtext(f"{A}id") for e in entries]
    if len(set(ids)) != len(ids):
        out.append("two entries share an id")
    for e in entries:
        out += _once(e, f"entry {e.findtext(f'{A}id')}", ("id", "title", "updated"))
        if e.find(f"{A}content") is None and not e.findall(f"{A}link[@rel='alternate']"):
            out.append("an entry with neither content nor an alternate link")
        if len(e.findall(f"{A}published")) > 1 or len(e.findall(f"{A}summary")) > 1:
            out.append("an entry with two published or two summary elements")
    for el in root.iter():
        if el.tag in (f"{A}updated", f"{A}published") and not RFC3339.fullmatch(el.text or ""):
            out.append(f"{el.tag}: {el.text!r} is no RFC 3339 date")
        if el.tag == f"{A}id" and not ABSOLUTE.fullmatch(el.text or ""):
            out.append(f"id {el.text!r} is no absolute IRI")
        if el.tag == f"{A}link" and not el.get("href"):
            out.append("a link without href")
        if el.tag == f"{A}content" and el.get("type") not in ("text", "html", "xhtml"):
            out.append(f"content of type {el.get('type')!r}")
    return out


def _once(el: ET.Element, what: str, names: tuple[str, ...]) -> list[str]:
    return [f"{what}: {len(el.findall(A + n))} {n} elements, not one" for n in names if len(el.findall(A + n)) != 1]


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        self.hrefs += [v for k, v in attrs if k == "href"]


def feed_links(data: bytes) -> list[str]:
    root = ET.fromstring(data)
    hrefs = [link.get("href") for link in root.iter(f"{A}link")]
    for content in root.iter(f"{A}content"):
        parser = Links()
        parser.feed(content.text or "")
        hrefs += parser.hrefs
    return hrefs


EDITIONS = [{"edition": "2009-05-01", "status": "complete", "set_code": "ARB", "set_name": "Alara Reborn"},
            {"edition": "2009-07-11", "status": "complete", "set_code": "M10", "set_name": "Magic 2010"},
            {"edition": "2009-08-01", "status": "copy", "set_code": "", "set_name": ""}]
STEP = {"from": "2009-05-01", "to": "2009-07-11", "counts": {"modified": 1, "added": 1, "unchanged": 5}}
CHANGES = [{"old_rule_id": "212.1b", "new_rule_id": "204.1a", "change": "modified", "renumbered": True,
            "lineage_id": "x"},
           {"old_rule_id": "", "new_rule_id": "<b>&", "change": "added", "renumbered": False, "lineage_id": "y"},
           {"old_rule_id": "100.1", "new_rule_id": "100.1", "change": "cosmetic", "renumbered": False,
            "lineage_id": "z"}]


def made_up() -> bytes:
    return feed.render(EDITIONS, [STEP], {("2009-05-01", "2009-07-11"): CHANGES}, report.pair_file,
                       lambda old, new: f"c-{old}-{new}")


def test_a_made_up_feed_is_valid_atom_with_an_entry_per_edition_newest_first():
    data = made_up()
    assert atom_problems(data) == []
    parsed = feedparser.parse(data, response_headers={"content-location": "https://example.org/reports/feed.xml",
                                                      "content-type": "application/atom+xml"})
    assert not parsed.bozo and parsed.version == "atom10"
    assert [e.title for e in parsed.entries] == ["Comprehensive Rules of 2009-07-11 (M10, Magic 2010)",
                                                "Comprehensive Rules of 2009-05-01 (ARB, Alara Reborn)"]
    first = parsed.entries[0]
    assert first.link == "https://example.org/reports/pairs/2009-05-01_2009-07-11.html"
    assert first.updated == "2009-07-11T00:00:00Z" and first.tags[0].term == "M10"
    html = first.content[0].value
    assert "modified: 1" in html and "added: 1" in html and "unchanged: 5" in html
    page = "https://example.org/reports/pairs/2009-05-01_2009-07-11.html"
    assert f'href="{page}#c-212.1b-204.1a">212.1b → 204.1a' in html
    assert "&lt;b&gt;&amp;" in html and "<b>" not in html  # a number from a source stays text
    assert "cosmetic" not in html.split("substantive")[1]  # only the substantive changes are listed
    assert made_up() == data  # the same bytes


@pytest.mark.parametrize("broken, problem", [
    (b"<updated>2009-07-11T00:00:00Z</updated>", "is no RFC 3339 date"),
    (b"<id>urn:uuid:", "is no absolute IRI"),
    (b"<title>Comprehensive", "title elements, not one"),
])
def test_the_stdlib_check_catches_what_it_claims_to(broken, problem):
    data = made_up()
    bad = {b"<updated>2009-07-11T00:00:00Z</updated>": b"<updated>2009-07-11</updated>",
           b"<id>urn:uuid:": b"<id>feed-",
           b"<title>Comprehensive": b"<title>x</title><title>Comprehensive"}[broken]
    assert any(problem in p for p in atom_problems(data.replace(broken, bad, 1)))


def check_feed(reports: Path, editions: int) -> feedparser.FeedParserDict:
    data = (reports / "feed.xml").read_bytes()
    assert atom_problems(data) == []
    parsed = feedparser.parse(data)
    assert not parsed.bozo and parsed.version == "atom10" and len(parsed.entries) == editions
    ids: dict[Path, set[str]] = {}
    for href in feed_links(data):
        target, _, anchor = href.partition("#")
        path = reports / target
        assert path.is_file(), href
        if anchor:
            found = re.findall(r'\bid=(?:"([^"]+)"|([^\s">]+))', path.read_text(encoding="utf-8"))  # quoted or bare
            ids.setdefault(path, {unescape(quoted or bare) for quoted, bare in found})
            assert anchor in ids[path], href
    return parsed


def test_seed_feed(seeds_run, tmp_path):
    result, processed = seeds_run
    report.render(processed, tmp_path, result.ingested.docs)
    check_feed(tmp_path, len([e for e in result.editions if not e.observes]))
    assert 'type="application/atom+xml"' in (tmp_path / "index.html").read_text()


@needs_archive
def test_archive_feed_lists_every_substantive_change_of_the_july_2009_renumbering(archive_run, tmp_path):
    result, processed = archive_run
    report.render(processed, tmp_path, result.ingested.docs)
    parsed = check_feed(tmp_path, 12)
    july = next(e for e in parsed.entries if e.title.endswith("2009-07-11 (M10, Magic 2010)"))
    changes = [c for c in result.history.changes if c.to_edition == "2009-07-11" and c.change in feed.SUBSTANTIVE]
    assert july.content[0].value.count("<li><a href=") == len(changes) > 1000
    moved = next(c for c in changes if c.renumbered and c.old_rule_id and c.new_rule_id and c.change == "modified")
    assert f"{moved.old_rule_id} → {moved.new_rule_id}</a> modified" in july.content[0].value
    print("feed.xml:", (tmp_path / "feed.xml").stat().st_size, "bytes")
