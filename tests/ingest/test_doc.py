"""Word 97-2003 .doc editions: the piece table's text, field codes dropped and Word's special characters
mapped, checked on documents built in code (tests/wordfile.py) and on the two real editions in
../shared/cr-formats against their TXT twins. The hostile ones are in test_hostile_containers.py."""
import re
import shutil

import pytest

from pipeline.errors import SourceError
from pipeline.ingest.discover import read_source
from pipeline.ingest.containers import extract
from pipeline.ingest.containers.msdoc import plain
from conftest import ARCHIVE, FORMATS
from test_formats import _key, _lost_in_txt, _merged, _records, _words
from wordfile import ENCRYPTED, WHICH_TABLE, chain_loop, clx, word_file

needs_formats = pytest.mark.formats
SAMPLES = ["2005-10-01.doc", "2009-05-01.doc"]


def _text(data: bytes) -> str:
    return extract(data, "doc", "built.doc")[0]


@pytest.mark.parametrize("characters, expected", [
    ("a\rb\x0bc\x0cd\x0ee", "a\nb\nc\nd\ne"),  # paragraph, line, page and column breaks
    ("non\x1ebreaking, opti\x1fonal", "non-breaking, optional"),
    ("cell\x07cell\x07\x07", "cell\tcell\t\t"),
    ("picture\x01 drawing\x08 footnote\x02", "picture drawing footnote"),
    ('see \x13 HYPERLINK "http://x.com" \x01\x14x.com\x15.', "see x.com."),
    ("page \x13 PAGE \x14" "7\x15 of 9", "page 7 of 9"),
    ("\x13 IF \x13 PAGE \x147\x15 = 7 \x14yes\x15", "yes"),  # a field in another's instructions
    ("\x13 REF a \x14[\x13 PAGE \x147\x15]\x15", "[7]"),  # a field in another's result
    ("a\x13 TOC \x15b", "ab"),  # a field without a result
    # near misses: marks outside any field are dropped, the text around them kept
    ("a\x14b\x15c", "abc"),
    ("tab\tstays, (parentheses) stay", "tab\tstays, (parentheses) stay"),
])
def test_plain_drops_field_codes_and_maps_special_characters(characters, expected):
    assert plain(characters) == expected


def test_fields_nested_deeply_are_read_in_one_pass():
    assert plain("\x13 A \x14" * 100_000 + "text" + "\x15" * 100_000) == "text"
    assert plain("\x13" * 100_000 + "instructions" + "\x15" * 100_000) == ""


def test_8_bit_and_utf16_pieces():
    data = word_file([b"Caf\xe9 \x93quoted\x94 \x96 \x81\r", ("\u2014 \u0416 \u4e2d \U0001F600\r", False), "end"])
    assert _text(data) == "Caf\xe9 \u201cquoted\u201d \u2013 \x81\n\u2014 \u0416 \u4e2d \U0001F600\nend"


def test_only_the_main_document_is_read():
    """ccpText ends the main document: footnotes, headers and text boxes come after it."""
    assert _text(word_file(["Main text.\rA running head\r"], ccp_text=11)) == "Main text.\n"


def test_table_stream_chosen_by_the_fib():
    assert _text(word_file(["in 0Table\r"], flags=0)) == "in 0Table\n"
    assert _text(word_file(["in 1Table\r"], flags=WHICH_TABLE)) == "in 1Table\n"


def test_property_modifiers_before_the_piece_table_are_skipped():
    table = clx([(5, 1024, True)], modifiers=3)
    assert _text(word_file(["text\r"], table=table)) == "text\n"


@pytest.mark.parametrize("data, message", [
    (word_file(["x\r"], flags=WHICH_TABLE | ENCRYPTED), "an encrypted (password-protected) Word document"),
    (word_file(["x\r"], streams={"1Table": None}), "without a 1Table stream"),
    (word_file(["x\r"], streams={"WordDocument": None, "Workbook": b"x"}), "not a Word document (an Excel"),
    (word_file(["x\r"], chain_edit=chain_loop()), "sector chain of its WordDocument stream loops back on itself"),
    (word_file(["x\r"], stream_size=1 << 20), "sector chain of its WordDocument stream ends early"),
    (word_file(["x\r"])[:3000], "damaged Word 97-2003 file (OLE container"),
    (word_file(["x\r"], ccp_text=5), "its piece table holds 2 of the 5 characters"),
    (word_file(["x\r"], table=clx([(2, 1 << 24, True)])), "a piece of its text lies outside"),
    (word_file(["x\r"], table=clx([(2, 1024, True), (0, 1024, True)])), "positions do not increase"),
    (word_file(["x\r"], table=b"\x02\xff\xff\xff\x7f"), "a piece table of 2,147,483,647 bytes"),
    (word_file(["x\r"], table=b"\x01\x00\x80" * 4), "no piece table in its CLX"),
    (word_file(["x\r"], table=clx([(1, 1024, True)] * 100_001)), "piece table of more than 100,000 pieces"),
    (word_file(["x\r"], table=clx([(2, 1024, True)], modifiers=100_001)), "more than 100,000 entries"),
    (word_file(["x\r"], table=clx([(2**31 - 1, 1024, True)]), ccp_text=2**31 - 1), "characters (32 per byte"),
])
def test_damaged_doc_is_one_line_naming_the_file(data, message):
    with pytest.raises(SourceError) as e:
        extract(data, "doc", "built.doc")
    assert message in str(e.value) and str(e.value).startswith("built.doc: ") and "\n" not in str(e.value)


def test_word_95_is_refused_with_the_reason():
    from wordfile import compound_file, fib
    data = compound_file({"WordDocument": fib(1, 0, 0, n_fib=0x68)})
    with pytest.raises(SourceError, match="a Word 6/95 document"):
        extract(data, "doc", "built.doc")


# --- the real editions ----------------------------------------------------------------------------

@needs_formats
@pytest.mark.parametrize("name", SAMPLES)
def test_same_records_as_the_txt_twin(name, paragraph_cache):
    """Measured: 2005-10-01 100% of 1,329 records identical (every line of the text is the TXT's); 2009-05-01
    1,608 of 1,683 (95.5%): the 75 others are all where the TXT lost a dash as '?' ("cards?even"), as for
    the RTF of that edition, so the .doc is the better text."""
    doc, ours = _records(FORMATS / name, paragraph_cache)
    _, theirs = _records(ARCHIVE / name.replace(".doc", ".txt"), paragraph_cache)
    assert doc.source.format == "doc" and doc.chars_kept + sum(d.size for d in doc.discards) == doc.chars_total
    ours, theirs = {_key(r): r for r in ours}, {_key(r): r for r in theirs}
    assert sorted(ours) == sorted(theirs)  # the same numbers and glossary terms, none lost or added
    differ = [k for k in theirs if _words(ours[k]) != _words(theirs[k])]
    assert all(_lost_in_txt(theirs[k], ours[k]) for k in differ)
    assert len(differ) == {"2005-10-01.doc": 0, "2009-05-01.doc": 75}[name]


@needs_formats
def test_doc_rtf_and_txt_of_one_edition_merge_like_copies(paragraph_cache):
    """The .doc is the cleanest of the three (real typography, nothing lost): its text comes first."""
    rules, merged = _merged((ARCHIVE / "2005-10-01.txt", FORMATS / "2005-10-01.rtf", FORMATS / "2005-10-01.doc"),
                            paragraph_cache)
    assert len(merged) == len(rules) // 3 and not [r for r in merged if "conflict" in r.flags]
    assert {r.source for r in merged} == {"2005-10-01.doc;2005-10-01;2005-10-01.rtf"}


@needs_formats
@pytest.mark.parametrize("name", SAMPLES)
def test_field_codes_and_control_characters_are_not_text(name):
    text = read_source(FORMATS / name, None).text
    assert "HYPERLINK" not in text and "www.wizards.com" in text  # the instruction dropped, the result kept
    assert not re.search(r"[\x00-\x08\x0b-\x1f]", text)


@needs_formats
@pytest.mark.parametrize("suffix", [".rtf", ".txt", ""])
def test_doc_under_another_name_is_read_as_doc(suffix, tmp_path):
    path = tmp_path / f"2005-10-01{suffix}"
    shutil.copyfile(FORMATS / "2005-10-01.doc", path)
    source = read_source(path, None)
    assert (source.format, source.edition, source.encoding) == ("doc", "2005-10-01", "doc (olefile, 20 pieces)")
