"""Damaged files recovered with a warning: a UTF-16 edition whose byte-order mark was mangled into
EF BF BD EF BF BD and which lost single bytes in ~570 places; a glossary term glued to its definition."""
import random
import re

import pytest

from pipeline.ingest.decode import decode_with_repairs
from pipeline.segment import read
from pipeline.segment.rules import ParagraphCache
from conftest import ARCHIVE, needs_archive

MANGLED = b"\xef\xbf\xbd\xef\xbf\xbd"


def damage(body: bytes, n: int, seed: int, zeros_only: bool) -> bytes:
    """Drop n single bytes (only zero bytes, or any) at seeded random places; mangle the BOM."""
    rng = random.Random(seed)
    places = [i for i in range(100, len(body) - 100) if body[i] == 0 or not zeros_only]
    cuts = set(rng.sample(places, n))
    return MANGLED + bytes(b for i, b in enumerate(body) if i not in cuts)


def keyed(path, cache):
    doc = read.clean(path)
    return doc.source, {(r.kind, r.rule_id, r.occurrence): r for r in read.rules([doc], cache)}


@pytest.mark.parametrize("text", ["Hello\r\nWorld, “quoted” 100.1a", "ab" * 50])
@pytest.mark.parametrize("order", ["utf-16-be", "utf-16-le"])
def test_lost_zero_bytes_are_recovered_exactly(text, order):
    body = text.encode(order)
    zeros = [i for i, b in enumerate(body) if b == 0]
    for cut in zeros[3:6]:
        damaged = MANGLED + body[:cut] + body[cut + 1:]
        got, encoding, warnings = decode_with_repairs(damaged)
        assert got == text and encoding == f"{order} (repaired)"
        assert "re-synchronised at 1 places, 0 characters lost" in warnings[1]


def test_mangled_bom_without_utf16_is_a_clear_error():
    with pytest.raises(Exception, match="mangled byte-order mark but is not UTF-16"):
        decode_with_repairs(MANGLED + b"plain ASCII text with a stray zero byte\x00 " * 20)


@pytest.fixture(scope="module")
def edition_2013(tmp_path_factory):
    cache = ParagraphCache()
    _, records = keyed(ARCHIVE / "2013-04-29.txt", cache)
    return (ARCHIVE / "2013-04-29.txt").read_bytes()[2:], records, cache, tmp_path_factory.mktemp("damaged")


@needs_archive
def test_570_lost_zero_bytes_every_rule_recovered(edition_2013):
    body, original, cache, folder = edition_2013
    path = folder / "2013-damaged.txt"
    path.write_bytes(damage(body, 570, seed=2, zeros_only=True))
    source, records = keyed(path, cache)
    assert source.encoding == "utf-16-be (repaired)"
    assert source.text == body.decode("utf-16-be")
    assert any("mangled" in w for w in source.warnings)
    assert re.search(r"re-synchronised at 57\d places, 0 characters lost", " ".join(source.warnings))
    assert records.keys() == original.keys()
    assert all(records[k].compare == original[k].compare for k in original)


@needs_archive
@pytest.mark.parametrize("order", ["utf-16-be", "utf-16-le"])
def test_570_lost_bytes_of_any_kind_are_marked_and_counted(edition_2013, order):
    body, original, cache, folder = edition_2013
    if order == "utf-16-le":
        body = body.decode("utf-16-be").encode("utf-16-le")
    path = folder / f"2013-damaged-{order}.txt"
    path.write_bytes(damage(body, 570, seed=1, zeros_only=False))
    source, records = keyed(path, cache)
    m = re.search(r"re-synchronised at (\d+) places, (\d+) characters lost", " ".join(source.warnings))
    assert 560 <= int(m[1]) <= 575
    # A lost text byte loses its character: marked U+FFFD, counted, never silently wrong.
    assert source.text.count("\ufffd") == int(m[2]) > 0
    # in step again after every loss: no runs of CJK-looking characters, hardly a character missing
    assert abs(len(source.text) - len(body.decode(order))) <= 5 and not re.search("[\u3400-\u9fff]", source.text)
    recovered = [k for k in original if k in records]
    assert len(recovered) >= 0.99 * len(original)


GLUED = ("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of May 1, 2013.\n\n"
         "1. Game Concepts\n\n100. General\n\n"
         "100.1. These Magic rules apply to any Magic game" + " and so on" * 20 + ".\n\n"
         "Glossary\n\nAbility1. Text on an object that explains what that object does.\n"
         "2. An activated or triggered ability on the stack.\n\nAttack\nTo declare a creature as an attacker.\n\n"
         "Credits\n\nDesign: someone\n")


def test_a_term_glued_to_its_definition_is_split(tmp_path):
    path = tmp_path / "glued.txt"
    path.write_text(GLUED, encoding="utf-8")
    doc = read.clean(path)
    glossary = {r.rule_id: r.text for r in read.rules([doc]) if r.kind == "glossary"}
    assert glossary == {"Ability": "1. Text on an object that explains what that object does.\n"
                                   "2. An activated or triggered ability on the stack.",
                        "Attack": "To declare a creature as an attacker."}
    assert doc.chars_kept + sum(d.size for d in doc.discards) == doc.chars_total
