"""The rules reader: one page per edition with the whole text, an anchor per rule (its number),
example and glossary term (app.js also answers Yawgatog's `#R7023b`), every rule reference in the text
a link. The stable page per rule number is pipeline/report/rulepages.py's.

Text is escaped here, piece by piece, and handed to the templates as Markup: the only tags in it
are the links and italics this module writes.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from markupsafe import Markup, escape

from pipeline.ruleid import sort_key as natural_key

# A rule reference in running text, as the rules print them:
#   "rule 402.9" / "Rule 212.9c" / "rules 113 and 114" / "rules 702.19b-c" / "section 8" / a bare "702.19".
# A bare three-digit number is a rule only after "rule(s)" ("100 life" is not).
NUMBER = r"\d{3}(?:\.\d+[a-z]?(?:[-–][a-z])?)?"
REFERENCE = re.compile(
    rf"\b(?P<list>[Rr]ules?\s+{NUMBER}(?:(?:,\s*|,?\s+(?:and|or|through|to)\s+(?:rules?\s+)?){NUMBER})*)"
    r"|\b[Ss]ections?\s+(?P<section>[1-9])\b"
    r"|(?<![\w.])(?P<dotted>\d{3}\.\d+[a-z]?(?:[-–][a-z])?)(?![\w])")
NUMBER_ONLY = re.compile(NUMBER)
ITALICS = re.compile(r"(?<![\w])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w])")  # "_Magic_" as printed in some editions


def anchor(rule_id: str, kind: str) -> str:
    """An element id: the rule number itself, or a glossary term with its spaces as underscores."""
    return re.sub(r"\s+", "_", rule_id.strip()) if kind == "glossary" else rule_id


def change_anchor(old: str, new: str) -> str:
    """The id of a change on a pair page: c-212.1b-204.1a (c--204.1a added, c-212.1b- removed)."""
    return re.sub(r"\s+", "_", f"c-{old}-{new}")


SAFE_BARE = re.compile(r"[\w.~/#:-]+")  # what an attribute's value may hold unquoted (no space, quote, =, <, >, `)


def bare(value: str) -> Markup:
    """An attribute's value, unquoted if it can be (`id=205.1a`, `href=../lineage/2003-10-01_212.1b.html`),
    else quoted and escaped: two bytes of each of the 700,000 such values of an archive's edition pages."""
    value = str(value)
    return Markup(value) if SAFE_BARE.fullmatch(value) else Markup('"%s"') % value


def content(text: str) -> Markup:
    """A text escaped for an element's content (never an attribute's value), where only &, < and > can
    make markup: quotes stay quotes, not markupsafe's 5-byte entities (3% of an edition page's bytes)."""
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


@lru_cache(maxsize=1 << 14)  # most texts repeat from edition to edition: each is escaped once
def plain(text: str) -> Markup:
    """Text escaped for an element's content, with `_italics_` shown as italics."""
    out, last = [], 0
    for m in ITALICS.finditer(text):
        out += [content(text[last:m.start()]), Markup("<i>"), content(m[1]), Markup("</i>")]
        last = m.end()
    out.append(content(text[last:]))
    return Markup("").join(out)


def target_of(number: str) -> str:
    """"702.19b-c" -> "702.19b": a range links to its first rule."""
    return re.split(r"[-–]", number)[0]


def _href(number: str) -> str:
    return f"#{number}"


def linked(text: str, ids: set[str], href=_href, counts: list[int] | None = None) -> Markup:
    """`text` escaped, with every reference to a rule in `ids` a link. `counts` (if given) gets
    [references seen, references linked] added to it."""
    targets = _targets(text)
    links = frozenset(t for t in targets if t in ids)
    if counts is not None:
        counts[0] += len(targets)
        counts[1] += sum(t in links for t in targets)
    return _linked(text, links, href)


@lru_cache(maxsize=1 << 14)
def _targets(text: str) -> tuple[str, ...]:
    """The rule each reference of `text` points to, in order (a range: its first rule)."""
    return tuple(target_of(number) for _start, _end, number in _pieces(text))


def _pieces(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, number) of each reference in `text`: a list gives one per number."""
    for m in REFERENCE.finditer(text):
        if m["section"]:
            yield m.start("section"), m.end("section"), m["section"]
        else:
            base = m.start("list") if m["list"] else m.start("dotted")
            yield from ((base + n.start(), base + n.end(), n[0]) for n in NUMBER_ONLY.finditer(m[0]))


@lru_cache(maxsize=1 << 14)  # by text and the numbers it can link: ~92% of an archive's rows repeat one
def _linked(text: str, links: frozenset[str], href) -> Markup:
    out, last = [], 0
    for start, end, number in _pieces(text):
        out += [plain(text[last:start])]
        if target_of(number) in links:
            out += [Markup("<a href=%s>") % bare(href(target_of(number))), escape(number), Markup("</a>")]
        else:
            out.append(escape(number))
        last = end
    out.append(plain(text[last:]))
    return Markup("").join(out)


def edition_page(edition: dict, records: list[dict], lineage_href, placed=None) -> dict:
    """The context of one edition's page: its table of contents and every record, in print order,
    with anchors, linked references and a link to its lineage. `records` are rules.csv rows; `placed`,
    if given, is `list(anchored(records))` (made once for the edition's page and its sources' pages)."""
    ids = {r["rule_id"] for r in records if r["kind"] != "glossary"}
    counts = [0, 0]
    entries = []
    for r, rid in placed if placed is not None else anchored(records):
        examples = [{"id": f"{rid}-ex{i}", "html": linked(e, ids, counts=counts)}
                    for i, e in enumerate(r["examples"] or [], 1)]
        entries.append({"id": rid, "number": r["rule_id"], "kind": r["kind"], "title": plain(r["title"]),
                        "html": linked(r["text"], ids, counts=counts), "examples": examples,
                        "history": lineage_href(r["lineage_id"]) if r["lineage_id"] else ""})
    toc = [e for e in entries if e["kind"] in ("part", "chapter")]
    return {"edition": edition, "entries": entries, "toc": toc,
            "glossary": any(e["kind"] == "glossary" for e in entries),
            "references": {"seen": counts[0], "linked": counts[1]}}


def anchored(records: list[dict]) -> Iterator[tuple[dict, str]]:
    """Each record in print order with its anchor on the edition page: its number, or, for a number
    printed twice, the second copy's `~2`."""
    used = set()
    for r in sorted(records, key=print_order):
        rid = anchor(r["rule_id"], r["kind"])
        while rid in used:
            rid += "~2"
        used.add(rid)
        yield r, rid


def printed_lines(records: list[dict], placed=None) -> dict[str, dict[int, list[tuple[str, tuple[str, ...]]]]]:
    """{source id: {line number: [(anchor, the forms of a line the page shows at that anchor)]}}: for each
    line an entry of these `records` came from, what the edition page shows word for word: the entry's
    "103.4. Text" or "103.4a Text" (a heading's "1. Title") and each of its examples; a glossary term and
    each line of its definition. A source page need
    not repeat a line that is one of these forms (sourcepages.py); one that differs in any character (a
    misprinted "702. 37a", spaces, a line wrapped into the next) is shown there. (The page shows the
    `_Magic_` of a plain-text edition as <i>Magic</i>; `plain` changes nothing else.)"""
    out: dict[str, dict[int, list]] = {}
    for r, rid in placed if placed is not None else anchored(records):
        if not r["source"] or not r["line_start"]:
            continue
        number, body = r["rule_id"], r["text"] if not r["title"] else r["title"] if not r["text"] else ""
        if r["kind"] == "glossary":  # its term's line, then its definition's lines
            shown = [(rid, (r["title"], *r["text"].split("\n")))]
        else:
            shown = [(rid, (f"{number} {body}", f"{number}. {body}"))] if body else []
        shown += [(f"{rid}-ex{i}", (e,)) for i, e in enumerate(r["examples"] or [], 1)]
        lines = out.setdefault(r["source"].split(";")[0], {})
        for line in range(int(r["line_start"]), int(r["line_end"] or r["line_start"]) + 1):
            lines.setdefault(line, []).extend(shown)
    return out


def print_order(r: dict) -> tuple:
    """The order of the printed rules: each part before its chapters (rules.csv lists all parts
    first), then the glossary, then anything else (commentary) in its file order."""
    number = r["rule_id"]
    if r["kind"] == "glossary":
        return (1, (), int(r["line_start"] or 0))
    if r["kind"] == "commentary" or not number[:1].isdigit():
        return (2, (), int(r["line_start"] or 0))
    return (0, (number[0],) + natural_key(number), int(r["line_start"] or 0))


def by_edition(rules: Iterable[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rules:
        out.setdefault(r["edition"], []).append(r)
    return out
