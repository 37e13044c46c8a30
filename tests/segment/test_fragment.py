"""Reading a fragment for `identify`: what it is, sniffed from its text, and its paragraphs' rule numbers
read without spaCy where spaCy would read them the same way."""
import pytest

from conftest import RAW, SEEDS, archive_files, needs_archive
from pipeline.segment.fragment import RULE_LINES, quick_analysis, sniff


@pytest.mark.parametrize("text, expected", [
    ("702.98. Evolve\n\n702.98a Evolve is a triggered ability.\n", RULE_LINES),
    ("Example: a line first.\n212.1e If an instruction requires choosing a subtype, you must.\n", RULE_LINES),
    ("212.1e Если ... \n212.1f Some text.\n", "copy"),  # a foreign-language site's interface around the rules
    ("# 205. Type Line\n\n205.1. The type line is printed.\n", "markdown"),
    ("<table><tr><td>212.1a - Cards can all have card types.</td></tr></table>", "rulings-html"),
    ('<div id="mw-content-text"><p>Cards have types.</p></div>', "wiki-html"),
    ("== Artifacts ==\nSee {{CR|301.1}} for artifacts.\n", "wiki-text"),
    ("Card Types\n\nFrom Rules\nJump to: navigation, search\nText.\n", "wiki-text"),
    ("212 - Card Type\n  212.1a - Cards, tokens.\n  212.1b - When an object's type changes.\n", "rulings-text"),
    # near misses: prose that cites rules is no rule line, a year is no rule number
    ("See rule 409. for the details.\n", None),
    ("In 2009 the rules changed.\nNothing else.\n", None),
    ("", None),
])
def test_sniff(text, expected):
    assert sniff(text) == expected


def test_sniff_the_seeds_as_their_manifest_says():
    # 003 is copy in the manifest, but holds nothing of the site around the rules: plain rule lines
    expected = {"000": "rulings-text", "001": "copy", "002": "wiki-text", "003": RULE_LINES, "004": "markdown"}
    for key, fmt in expected.items():
        assert sniff((RAW / f"{SEEDS[key]}.txt").read_text(encoding="utf-8")) == fmt, key


@pytest.mark.parametrize("text, starts, example", [
    ("702.98a Evolve is a triggered ability.", ((0, 8, "702.98a"),), False),
    ("702.98. Evolve", ((0, 8, "702.98"),), False),
    ("100. General", ((0, 5, "100"),), False),
    ("212.1b.  When", ((0, 9, "212.1b"),), False),
    ("Example: A player casts a spell.", (), True),
    ("A continuation of the rule before.", (), False),
])
def test_quick_analysis(text, starts, example):
    a = quick_analysis(text)
    assert (a.starts, a.example) == (starts, example)


@pytest.mark.parametrize("text", [
    "1. The Game",  # a part heading, only when a short title follows
    "606. 8b Players",  # a stray space inside the number
    "212.3 - Creatures",  # a rulings page's number and dash
    "General  212.1a - Cards",  # a mid-line entry
    "2009 was the year.",  # a number that is not one
    "Examples, and more.",
])
def test_quick_analysis_leaves_what_it_is_not_sure_of_to_spacy(text):
    assert quick_analysis(text) is None


@needs_archive
def test_quick_analysis_agrees_with_spacy_on_every_paragraph_of_the_archive():
    from pipeline.segment.nlp import analyse, load
    from pipeline.segment.rules import UNANALYSED
    from pipeline.segment import read
    texts = set()
    for path in archive_files():
        texts |= {p.text for p in read.clean(path).paragraphs if p.role not in UNANALYSED}
    nlp, unsure, differ = load(), 0, []
    with nlp.select_pipes(disable=["citations", "rule_references"]):
        for text, doc in zip(sorted(texts), nlp.pipe(sorted(texts), batch_size=512)):
            quick = quick_analysis(text)
            if quick is None:
                unsure += 1
                continue
            a = analyse(doc)
            if (quick.starts, quick.example) != (a.starts, a.example):
                differ.append((text[:60], quick.starts, a.starts))
    assert not differ
    assert unsure < 0.02 * len(texts)  # 156 of 14,487 paragraphs: part headings, mid-line entries
