"""reports/feed.xml: an Atom feed (RFC 4287) with one entry per edition, newest first: its set code and name
(the registry), its date, its counts by change class and its substantive changes, each linked to its change on
the pair page.

Links are relative to the feed (feed readers resolve them against its address), ids are URNs derived from
the edition's date, and `updated` is the edition's own date: the same run gives the same bytes.
"""
from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

from markupsafe import Markup

from pipeline import registry

ATOM = "http://www.w3.org/2005/Atom"
SUBSTANTIVE = ("modified", "renamed", "added", "removed", "split", "merged")  # what a reader wants to hear of


def _id(name: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"crdiff:{name}").urn


def _el(parent: ET.Element, tag: str, text: str = "", **attrs) -> ET.Element:
    el = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    if text:
        el.text = text
    return el


def render(editions: list[dict], steps: list[dict], changes_by_step: dict, pair_href, change_anchor) -> bytes:
    """The feed. `editions` and `steps` as report.py reads them; `changes_by_step[(a, b)]` the changes a
    pair page shows; the two functions give a pair page's address and a change's anchor on it."""
    ET.register_namespace("", ATOM)
    dated = [e for e in editions if e["status"] != "copy"]  # a copy is evidence about an edition, no news
    feed = ET.Element(f"{{{ATOM}}}feed")
    _el(feed, "id", _id("feed"))
    _el(feed, "title", "Comprehensive Rules: every edition and what it changed")
    _el(feed, "updated", _stamp(max((e["edition"] for e in dated), default="1970-01-01")))
    _el(_el(feed, "author"), "name", "crdiff")
    _el(feed, "link", rel="self", href="feed.xml", type="application/atom+xml")
    _el(feed, "link", rel="alternate", href="index.html", type="text/html")
    _el(feed, "generator", "crdiff")
    into = {s["to"]: s for s in steps}
    for e in sorted(dated, key=lambda e: e["edition"], reverse=True):
        step = into.get(e["edition"])
        shown = changes_by_step.get((step["from"], step["to"]), []) if step else []
        _entry(feed, e, step, [c for c in shown if c["change"] in SUBSTANTIVE], pair_href, change_anchor)
    ET.indent(feed, space=" ")
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True) + b"\n"


def _entry(feed: ET.Element, e: dict, step: dict | None, changes: list[dict], pair_href, change_anchor) -> None:
    edition = e["edition"]
    entry = _el(feed, "entry")
    _el(entry, "id", _id(f"edition:{edition}"))
    _el(entry, "title", f"Comprehensive Rules of {registry.label(edition)}")
    _el(entry, "updated", _stamp(edition))
    _el(entry, "published", _stamp(edition))
    page = pair_href(step["from"], edition) if step else f"editions/{edition}.html"
    _el(entry, "link", rel="alternate", href=page, type="text/html")
    _el(entry, "link", rel="related", href=f"editions/{edition}.html", type="text/html")
    if e.get("set_code"):
        _el(entry, "category", term=e["set_code"], label=e["set_name"])
    counts = {c: n for c, n in (step["counts"] if step else {}).items() if n}
    said = ", ".join(f"{n:,} {c}" for c, n in counts.items())
    _el(entry, "summary", f"{e['status']} edition; " + (f"since {step['from']}: {said}" if step else
                                                         "the first edition here"))
    _el(entry, "content", _content(e, step, counts, changes, pair_href, change_anchor), type="html")


def _content(e: dict, step: dict | None, counts: dict, changes: list[dict], pair_href, change_anchor) -> str:
    """The entry's HTML (escaped here; the XML writer escapes it once more, as type="html" wants)."""
    edition = e["edition"]
    named = f", with {e['set_name']} ({e['set_code']})" if e.get("set_code") else ""
    out = [Markup("<p>Effective {}{}. {}</p>").format(edition, named, f"Changes since {step['from']}, by class:"
                                                      if step else "The first edition in these reports.")]
    if counts:
        out.append(Markup("<ul>{}</ul>").format(Markup("").join(Markup("<li>{}: {:,}</li>").format(c, n)
                                                                  for c, n in counts.items())))
    if changes:
        page = pair_href(step["from"], edition)
        out.append(Markup("<p>The {:,} substantive changes ({}), each linked to its redline:</p>")
                   .format(len(changes), ", ".join(SUBSTANTIVE)))
        out.append(Markup("<ul>{}</ul>").format(Markup("").join(_change(c, page, change_anchor) for c in changes)))
    return str(Markup("\n").join(out))


def _change(c: dict, page: str, change_anchor) -> Markup:
    """One change: its number(s) linked to it on the pair page (its redline, and a link to its lineage), its
    class. A link to the lineage here too would double the feed (1.3 MB on the archive)."""
    old, new = c["old_rule_id"], c["new_rule_id"]
    numbers = f"{old} → {new}" if old and new and old != new else old or new
    return Markup('<li><a href="{}#{}">{}</a> {}</li>').format(page, change_anchor(old, new), numbers, c["change"])


def _stamp(edition: str) -> str:
    return f"{edition}T00:00:00Z"
