"""The rules reader's text handling: references become links, everything else is escaped."""
import pytest

from pipeline.report import editionpages as reader

IDS = {"402.9", "702.19", "702.19b", "113", "114", "8", "212.2h", "212.9c"}


@pytest.mark.parametrize("text, links", [
    ("See rule 402.9.", ["402.9"]),
    ("as described in rule 702.19b, with one exception", ["702.19b"]),
    ("See rules 113 and 114.", ["113", "114"]),
    ("See section 8, “Multiplayer Rules.”", ["8"]),
    ("rules 212.2h-k apply", ["212.2h"]),  # a range links to its first rule
    ("without causing Rule 212.9c to remove them", ["212.9c"]),
    ("see 702.19 and rule 999.1", ["702.19"]),  # 999.1 does not exist: left as text
    # near misses: numbers that are not references
    ("A player with 100 life or more", []),
    ("Deal 113 damage", []),
    ("version 402.9x is not a rule", []),
    ("sections 10 to 12", []),
])
def test_references_become_links(text, links):
    counts = [0, 0]
    html = str(reader.linked(text, IDS, counts=counts))
    found = [h for h in __import__("re").findall(r'<a href="#([^"]+)">', html)]
    assert found == links
    assert counts[1] == len(links)


def test_linked_text_is_escaped_and_reads_the_same():
    text = 'A <script>x</script> & "rule 402.9" _Magic_ here'
    html = str(reader.linked(text, IDS))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<a href="#402.9">402.9</a>' in html and "<i>Magic</i>" in html
    import re
    assert re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") \
        .replace("&#34;", '"') == text.replace("_Magic_", "Magic")


def test_edition_page_orders_parts_before_their_chapters_and_anchors_everything():
    rows = [dict(rule_id=n, kind=k, title=t, text=x, examples=e, lineage_id=f"L:{n}", line_start="0")
            for n, k, t, x, e in [
                ("1", "part", "Game Concepts", "", []), ("2", "part", "Parts of a Card", "", []),
                ("100", "chapter", "General", "", []), ("100.1", "rule", "", "See rule 200.", ["Example: rule 100.1"]),
                ("200", "chapter", "Parts", "", []), ("Summoning Sickness", "glossary", "Summoning Sickness", "x", []),
                ("100.1", "rule", "", "printed twice", [])]]
    page = reader.edition_page({"edition": "2001-01-01"}, rows, lambda lineage: f"lineage/{lineage}.html")
    ids = [e["id"] for e in page["entries"]]
    assert ids == ["1", "100", "100.1", "100.1~2", "2", "200", "Summoning_Sickness"]
    assert [e["id"] for e in page["toc"]] == ["1", "100", "2", "200"]
    assert page["entries"][2]["examples"][0]["id"] == "100.1-ex1"
    assert page["references"] == {"seen": 2, "linked": 2}


def test_a_text_seen_again_links_only_what_its_edition_has():
    text = "See rules 113 and 114, and rule 402.9."
    for ids, links in [(IDS, ["113", "114", "402.9"]), ({"114"}, ["114"]), (set(), []), (IDS, ["113", "114", "402.9"])]:
        counts = [0, 0]
        html = str(reader.linked(text, ids, counts=counts))
        assert __import__("re").findall(r'<a href="#([^"]+)">', html) == links
        assert counts == [3, len(links)]
