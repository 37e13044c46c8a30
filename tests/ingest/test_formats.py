"""PDF, DOCX and RTF editions (DOC: test_doc.py): recognised by content, page furniture dropped, and the same records
as the TXT of the same edition (tested on every pair in ../shared/cr-formats)."""
import re
from pathlib import Path

import pytest

from pipeline.ingest.clean import compare_form, unwrap
from pipeline.segment.edition import merge
from pipeline.errors import SourceError
from pipeline.ingest.discover import read_source
from pipeline.segment import read
from pipeline.segment.rules import ParagraphCache
from pipeline.ingest.containers import sniff
from pipeline.ingest.adapters.official import _starts_dense
from pipeline.ingest.containers.pdf import furniture
from conftest import ARCHIVE, FORMATS

needs_formats = pytest.mark.formats
TWINS = ["2003-10-01.pdf", "2009-07-11.pdf", "2026-01-16.pdf", "2013-04-29.docx", "2026-01-16.docx",
         "2005-10-01.rtf", "2009-05-01.rtf"]


@pytest.mark.parametrize("head, expected", [
    (b"%PDF-1.6\n%\xe2\xe3", "pdf"),
    (b"PK\x03\x04\x14\x00\x06\x00", "docx"),
    (b"{\\rtf1\\mac\\ansicpg10000", "rtf"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00", "doc"),
    # near misses: text that only mentions the formats
    (b"Magic: The Gathering Comprehensive Rules (PDF-1.4 version)", None),
    (b"PK is not a zip", None),
    (b"{rtf} in braces", None),
])
def test_sniff_by_content(head, expected):
    assert sniff(head) == expected


@pytest.mark.parametrize("data, fmt, message", [
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "doc", "a damaged Word 97-2003 file (OLE container"),
    (b"%PDF-1.4\nthis is not really a pdf", "pdf", "PDF"),
    (b"PK\x03\x04 broken zip", "docx", "Word document"),
])
def test_damaged_or_unsupported_containers_are_clear_errors(data, fmt, message, tmp_path):
    path = tmp_path / "edition.bin"
    path.write_bytes(data)
    with pytest.raises(SourceError, match=re.escape(message)) as e:
        read_source(path, None)
    assert str(path) in str(e.value)


def test_pdf_furniture_running_heads_and_page_numbers():
    pages = []
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    for n in range(1, 7):
        pages += ["Magic: The Gathering Comprehensive Rules", f"{100 + n}. Chapter {words[n - 1]}",
                  f"{100 + n}.1. A rule that wraps at the end of", f"the {words[n - 1]} line.", str(n), "\f"]
    dropped = furniture(pages)
    kept = [line for i, line in enumerate(pages) if i not in dropped]
    assert {dropped[i] for i in dropped} == {"running heads and footers", "page numbers", "page breaks"}
    assert kept[:3] == ["101. Chapter alpha", "101.1. A rule that wraps at the end of", "the alpha line."]
    assert len(kept) == 18


def test_pdf_furniture_near_miss_repeated_headings_stay():
    pages = []
    for n in range(1, 7):  # every page opens with a chapter heading "N00. General": never furniture
        pages += [f"{n}00. General", f"{n}00.1. Text.", "\f"]
    assert all(reason == "page breaks" for reason in furniture(pages).values())


@pytest.mark.parametrize("previous, text, expected", [
    ("101. The Magic Golden Rules", "101.1. Whenever a card's text", True),
    ("the game.", "2. Parts of the Game", True),
    ("the game ends.", "104.3a A player can concede", True),
    # near misses: a wrapped line that begins with a cross-reference is no new rule
    ("it means a source. See rule", '419.8 "Sources of Damage."', False),
    ("as described in rules 502.2 and", "502.3.", False),
    ("(see 702.19b,", "702.19c)", False),
    ("a deck of at least", "100 cards.", False),
])
def test_dense_paragraph_starts(previous, text, expected):
    assert _starts_dense(text, previous) is expected


@pytest.mark.parametrize("parts, expected", [
    (["“Artifact —", "Equipment.”"], "“Artifact — Equipment.”"),
    (["trigger only once—the next time it occurs—", "unless"], "trigger only once—the next time it occurs—unless"),
    (["[-", "N] means"], "[-N] means"),
    (["state-", "based"], "state-based"),
    (["A", "B"], "A B"),
])
def test_unwrap_joins_dashes_as_printed(parts, expected):
    assert unwrap([(i, p, i == 0) for i, p in enumerate(parts)])[0].text == expected


def _records(path: Path, cache: ParagraphCache):
    doc = read.clean(path)
    return doc, read.rules([doc], cache)


def _merged(paths, cache: ParagraphCache) -> tuple[list, list]:
    """The records of `paths` (files of one edition), and what merging them as copies of it gives."""
    docs, rules = [], []
    for path in paths:
        doc, records = _records(path, cache)
        docs.append(doc)
        rules += records
    return rules, merge(rules, docs)


def _key(r):
    return r.kind, compare_form(r.rule_id) if r.kind == "glossary" else r.rule_id, r.occurrence


def _words(r):
    return " ".join([r.compare] + [compare_form(e) for e in r.examples])


def _lost_in_txt(txt_rule, other_rule) -> bool:
    """The TXT printed '?' where it lost a dash or quote ("cards?even"): equal once those spots are."""
    spot = re.compile(r"[\s'?\-]+")
    return "?" in txt_rule.text + "".join(txt_rule.examples) and \
        spot.sub("", _words(txt_rule)) == spot.sub("", _words(other_rule))


def _paragraph_break(txt_rule, other_rule) -> bool:
    """Only where a definition's paragraphs break differs (a PDF has no blank lines to go by)."""
    return " ".join(_words(txt_rule).split()) == " ".join(_words(other_rule).split())


@needs_formats
@pytest.mark.parametrize("name", TWINS)
def test_same_records_as_the_txt_twin(name, paragraph_cache):
    doc, ours = _records(FORMATS / name, paragraph_cache)
    _, theirs = _records(ARCHIVE / (name.rsplit(".", 1)[0] + ".txt"), paragraph_cache)
    assert doc.chars_kept + sum(d.size for d in doc.discards) == doc.chars_total
    ours, theirs = {_key(r): r for r in ours}, {_key(r): r for r in theirs}
    assert sorted(ours) == sorted(theirs)  # the same numbers and glossary terms, none lost or added
    differ = [k for k in theirs if _words(ours[k]) != _words(theirs[k])]
    lost = [k for k in differ if _lost_in_txt(theirs[k], ours[k])]
    breaks = [k for k in differ if k not in lost and _paragraph_break(theirs[k], ours[k])]
    assert [k for k in differ if k not in lost and k not in breaks] == []
    assert len(breaks) <= 0.01 * len(theirs)
    # >= 99% identical, unless the TXT itself is the damaged file (2009-05-01 lost ~70 dashes as "?")
    assert len(differ) <= 0.01 * len(theirs) or len(lost) == len(differ) - len(breaks)


@needs_formats
def test_pdf_pages_and_furniture_are_in_the_ledger():
    doc = read.clean(FORMATS / "2003-10-01.pdf")
    source = doc.source
    assert source.format == "pdf" and source.source_id == "2003-10-01.pdf" and source.edition == "2003-10-01"
    assert doc.discarded_by_reason()["page breaks"] == 95  # one per page
    assert doc.chars_kept + sum(d.size for d in doc.discards) == doc.chars_total


@needs_formats
def test_formats_of_one_edition_merge_like_duplicate_copies(paragraph_cache):
    rules, merged = _merged((ARCHIVE / "2026-01-16.txt", FORMATS / "2026-01-16.pdf", FORMATS / "2026-01-16.docx"),
                            paragraph_cache)
    assert len(merged) == len(rules) // 3
    assert not [r for r in merged if "conflict" in r.flags]
    assert {r.source for r in merged} == {"2026-01-16.docx;2026-01-16;2026-01-16.pdf"}  # cleanest first


@needs_formats
def test_pdf_source_lines_are_shown_as_page_and_line():
    from pipeline.report.build import _lines
    lines = _lines(read.clean(FORMATS / "2003-10-01.pdf"))
    contents = next(line for line in lines if line["text"] == "Contents")
    assert contents["label"] == "2:1" and contents["why"] == "table of contents"
    assert [line["why"] for line in lines if line["text"] == "\f"] == ["page breaks"] * 95
