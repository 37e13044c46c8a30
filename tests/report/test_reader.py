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
    found = [h for h in __import__("re").findall(r'<a href=#([^>]+)>', html)]
    assert found == links
    assert counts[1] == len(links)


def test_linked_text_is_escaped_and_reads_the_same():
    text = 'A <script>x</script> & "rule 402.9" _Magic_ here'
    html = str(reader.linked(text, IDS))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<a href=#402.9>402.9</a>' in html and "<i>Magic</i>" in html
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
        assert __import__("re").findall(r'<a href=#([^>]+)>', html) == links
        assert counts == [3, len(links)]


def test_a_source_line_the_edition_page_shows_word_for_word_is_written_once():
    import re
    """Lines shown word for word on the edition page (a rule, its example, a glossary term and its definition,
    a heading) link there from the source page; a line that differs in any character keeps its text."""
    from pipeline.report.sourcepages import _lines_html
    rows = [dict(rule_id=n, kind=k, title=t, text=x, examples=e, lineage_id="", source="s;other", line_start=a,
                 line_end=b) for n, k, t, x, e, a, b in [
                ("1", "part", "Game Concepts", "", [], "1", "1"),
                ("100.1", "rule", "", "See <rule> 200.", ["Example: _it_ works."], "2", "3"),
                ("100.1a", "subrule", "", "Misprinted.", [], "4", "4"),
                ("100.1", "rule", "", "Printed twice.", [], "5", "5"),
                ("Ability Word", "glossary", "Ability Word", "An italicized word.\nSee rule 100.1.", [], "7", "9")]]
    printed = reader.printed_lines(rows)
    assert set(printed) == {"s"}
    lines = ["1. Game Concepts", "100.1. See <rule> 200.", "Example: _it_ works.", "100. 1a Misprinted.",
             "100.1 Printed twice.", "", "Ability Word", "An italicized word.", "See rule 100.1.", "100.1 Unshown."]
    html = str(_lines_html([{"no": i, "text": t, "why": "", "now": "", "label": ""} for i, t in enumerate(lines, 1)],
                           printed["s"]))
    assert "\n" not in html and re.split(r"(?=<(?:a|span) id=L)", html)[1:] == [
        "<a id=L1 href=#1>1.</a>", "<a id=L2 href=#100.1>100.1.</a>", "<a id=L3 href=#100.1-ex1>Example:</a>",
        "<span id=L4>100. 1a Misprinted.</span>", "<a id=L5 href=#100.1~2>100.1</a>", "<a id=L6></a>",
        "<a id=L7 href=#Ability_Word>Ability</a>", "<a id=L8 href=#Ability_Word>An</a>",
        "<a id=L9 href=#Ability_Word>See</a>", "<span id=L10>100.1 Unshown.</span>"]


@pytest.mark.parametrize("value, html", [("205.1a", "205.1a"), ("../lineage/2003-10-01_212.1b.html",
                                          "../lineage/2003-10-01_212.1b.html"), ("#100.1~2", "#100.1~2"),
                                         ('a "b" <c>', '"a &#34;b&#34; &lt;c&gt;"'), ("x=1", '"x=1"'), ("", '""')])
def test_an_attribute_is_bare_only_when_it_can_be(value, html):
    assert str(reader.bare(value)) == html


def test_the_glossary_is_one_list_that_a_term_with_examples_leaves_and_enters_again():
    """Terms are <dt>/<dd> of one <dl> (no </dt>, </dd>); a term's examples stand outside it, as before; no
    rule, subrule or example has a class."""
    from pipeline.report import build
    rows = [dict(rule_id=n, kind=k, title=t, text=x, examples=e, lineage_id=f"L:{n}", line_start=str(i))
            for i, (n, k, t, x, e) in enumerate([
                ("100.1", "rule", "", "A rule.", []), ("100.1a", "subrule", "", "A subrule.", ["Example: one."]),
                ("Absorb", "glossary", "Absorb", "A keyword.", []),
                ("Activate", "glossary", "Activate", "To put onto the stack.", ["Example: two."]),
                ("Active Player", "glossary", "Active Player", "Whose turn it is.", [])], 1)]
    entries = reader.edition_page({"edition": "2001-01-01"}, rows, lambda lineage: f"lineage/{lineage}.html")["entries"]
    html = str(build._body(entries, build._entry_renderer(build.environment().get_template("edition_entry.html"))))
    assert "</dt>" not in html and "</dd>" not in html  # implied by the next <dd>, <dt> or </dl>
    assert __import__("re").findall(r"<h2 id=glossary>|<dl class=term>|</dl>|<dt id=[^>]+>|<dd>|<p[^>]*>", html) == [
        "<p id=100.1>", "<p id=100.1a>", "<p id=100.1a-ex1>", "<h2 id=glossary>", "<dl class=term>",
        "<dt id=Absorb>", "<dd>", "<dt id=Activate>", "<dd>", "</dl>", "<p id=Activate-ex1>", "<dl class=term>",
        "<dt id=Active_Player>", "<dd>", "</dl>"]
