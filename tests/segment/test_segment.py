import re
import shutil
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from pipeline import run as stages
from pipeline.ruleid import expand_range
from pipeline.segment.nlp import analyse, load
from pipeline.records import CleanDoc, Paragraph, SourceDoc
from pipeline.segment.rules import ParagraphCache, previous_rule_id, segment
from conftest import RAW, SEEDS, needs_archive

SECTION_TITLES = {"212.1": "General", "212.2": "Artifacts", "212.3": "Creatures", "212.4": "Enchantments",
                  "212.5": "Instants", "212.6": "Lands", "212.7": "Sorceries", "212.8": "Tribals",
                  "212.9": "Planeswalkers"}


def by_source(result, key):
    return [r for r in result.rules if SEEDS[key] in r.source.split(";")]


def make_doc(paragraphs, source_id="t", complete=True, role="rules"):
    paras = tuple(Paragraph(t, i + 1, i + 1, role) for i, t in enumerate(paragraphs))
    text = "\n".join(paragraphs) + "\n"
    source = SourceDoc(source_id, None, "official", "official rules", text, "utf-8", "", len(text), "2020-01-01")
    return CleanDoc(source, paras, (), len(text), len(text), "2020-01-01", complete=complete)


def records(paragraphs, **kw):
    doc = make_doc(paragraphs, **kw)
    cache = ParagraphCache()
    cache.analyse(p.text for p in doc.paragraphs)
    return segment(doc, cache), doc


def nlp_analysis(text):
    return analyse(load()(text))


# --- the spaCy pipeline --------------------------------------------------------------------

def test_pipeline_components_are_registered_by_name():
    assert load().pipe_names == ["rule_boundaries", "citations", "sentencizer", "rule_references"]


@pytest.mark.parametrize("text", ["212.1b", "702.19b", "212.2h-k", "212.8.Ruling.1", "100.1"])
def test_tokenizer_keeps_rule_numbers_whole(text):
    assert [t.text for t in load().make_doc(f"see rule {text}, then")][2] == text


def tokenizer_set_in_turn():
    """The tokenizer as load() once made it: spaCy's default, each setting changed afterwards."""
    import spacy
    from spacy.util import compile_infix_regex
    from pipeline.segment.nlp import RULE_TOKEN, PiecewiseTokenizer, _tail_search
    nlp = spacy.blank("en")
    nlp.tokenizer.token_match = RULE_TOKEN.match
    infixes = list(nlp.Defaults.infixes) + [r"\|", r"(?<=[a-z])/(?=\d)"]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    nlp.tokenizer.prefix_search = nlp.tokenizer.prefix_search.__self__.match
    nlp.tokenizer.suffix_search = _tail_search(nlp.tokenizer.suffix_search)
    return PiecewiseTokenizer(nlp.tokenizer)


def test_the_tokenizer_built_at_once_tokenizes_as_one_set_in_turn():
    texts = [p.read_text(encoding="utf-8") for p in sorted(RAW.glob("*.txt"))]
    texts = [line for text in texts for line in text.splitlines()] + [
        "don't (see rule 212.2h-k), U.S. e.g. 2003/10/01 [CR 204.1a] 1st|2nd a/1 https://x.org/a. ...!",
        "(" * 1500 + "x" + ")" * 1500 + " 100.1a."]
    before = tokenizer_set_in_turn()
    assert [[t.text for t in load().tokenizer(x)] for x in texts] == [[t.text for t in before(x)] for x in texts]
    assert load().tokenizer.tokenizer.rules == before.tokenizer.rules


@pytest.mark.parametrize("text, expected", [
    ("See rule 409. Then more.", ("409",)),
    ("(See rule 502.33, “Equip”).", ("502.33",)),
    ("Rule 212.2h through Rule 212.2k apply.", ("212.2h", "212.2i", "212.2j", "212.2k")),
    ("see rules 702.5a-c.", ("702.5a", "702.5b", "702.5c")),
    ("rules 212.2h-k apply", ("212.2h", "212.2i", "212.2j", "212.2k")),
    ("see section 3, “Card Types.”", ("3",)),
    ("(see 408.2d).", ("408.2d",)),
    ("See rules 100.2b and 100.4b.", ("100.2b", "100.4b")),
    ("printed in 2003, with 20 life", ()),  # a year and a number are not rules
    ("[CR 204.1a]", ()),  # a citation is not a reference
    ("a 1/1 creature with 409 counters", ()),
])
def test_references(text, expected):
    found = tuple(t for _, _, targets in nlp_analysis(text).references for t in targets)
    assert found == expected


@pytest.mark.parametrize("text, starts", [
    ("212.1b. When an object's card type changes", [("212.1b", 8)]),
    ("100.1. These Magic rules", [("100.1", 7)]),
    ("606. 8b Players win and lose", [("606.8b", 8)]),
    ("212.3 - Creatures  212.2a - A player who", [("212.3", 8), ("212.2a", 28)]),
    ("212.8.Ruling.1 - Tribal is not a permanent type.", [("212.8.Ruling.1", 17)]),
    ("1. The Game", [("1", 3)]),
    # near misses
    ("See rule 409. Then the player", []),
    ("1. Text on an object that explains what it does.", []),
    ("2003 was the year", []),
    ("as in rule 212.3 - the creature rules", []),
])
def test_boundaries(text, starts):
    assert [(rule_id, text_start) for _, text_start, rule_id in nlp_analysis(text).starts] == starts


def test_sentences_do_not_break_at_rule_numbers_or_eg():
    a = nlp_analysis("Equip moves it (see rule 502.33, “Equip”), e.g. onto a creature. Then it stops.")
    assert len(a.sentences) == 2


@pytest.mark.parametrize("first, last, expected", [
    ("702.5a", "702.5c", ("702.5a", "702.5b", "702.5c")),
    ("704.5k", "704.5p", ("704.5k", "704.5m", "704.5n", "704.5p")),  # no l, no o
    ("212.2h", "212.2h", ("212.2h",)),
])
def test_expand_range(first, last, expected):
    assert expand_range(first, last) == expected


@pytest.mark.parametrize("rule_id, expected", [("212.1e", "212.1d"), ("704.5m", "704.5k"), ("212.1a", ""),
                                               ("212.1", "")])
def test_previous_rule_id(rule_id, expected):
    assert previous_rule_id(rule_id) == expected


# --- records from hand-made documents -------------------------------------------------------

def test_duplicates_trailing_periods_placeholders_and_continuations():
    rules, _ = records([
        "1. Game Concepts", "100. General", "100.1. These rules apply.", "100.1a. A subrule.",
        "Example: An example.", "Indented continuation paragraph.", "100.1a Printed twice.",
        "211. [This section has been intentionally left blank to preserve the ordering of other rules.]",
        "212.1. General",
    ])
    got = {(r.rule_id, r.occurrence): r for r in rules}
    assert got[("1", 1)].kind == "part" and got[("1", 1)].title == "Game Concepts"
    assert got[("100", 1)].kind == "chapter" and got[("100", 1)].parent == "1"
    assert got[("100.1", 1)].kind == "rule" and got[("100.1", 1)].text == "These rules apply."
    first, second = got[("100.1a", 1)], got[("100.1a", 2)]
    assert first.text == "A subrule.\nIndented continuation paragraph." and first.examples == ("Example: An example.",)
    assert "duplicate" in first.flags and "duplicate" in second.flags and second.text == "Printed twice."
    assert got[("211", 1)].flags == ("placeholder",)
    assert got[("212.1", 1)].kind == "section" and got[("212.1", 1)].title == "General"


SHARED = [  # the same paragraphs in other company: what a record is made of is worked out once per distinct draft
    ["100.1a. A subrule.", "Example: An example.", "100.1b. Another.", "306.b. A misprint."],
    ["100.1a. A subrule.", "100.1b. Another.", "Example: An example.", "306.b. A misprint.", "100.1a. A subrule."],
    ["Example: An example.", "100.1b. Another.", "306.3a. Before.", "306.b. A misprint.", "100.1a. A subrule."],
]


def test_records_from_a_shared_cache_are_those_of_a_fresh_one():
    docs = [make_doc(paragraphs, source_id=f"t{i}") for i, paragraphs in enumerate(SHARED)]
    shared = ParagraphCache()
    shared.analyse(p.text for d in docs for p in d.paragraphs)
    alone = [records(paragraphs, source_id=f"t{i}")[0] for i, paragraphs in enumerate(SHARED)]
    together = [segment(d, shared) for d in docs]
    assert together == alone and [[r.pieces for r in rules] for rules in together] == \
        [[r.pieces for r in rules] for rules in alone]
    assert [r.flags for r in together[1]] == [("duplicate",), ("number-review",), ("duplicate",)]
    assert together[0][1].text == "Another.\n306.b. A misprint."  # no number it can be after 100.1b
    assert (together[2][3].rule_id, together[2][3].flags) == ("306.3b", ("number-repaired (printed 306.b)",))
    assert together[2][0].flags == ("partial", "duplicate") and together[2][0].examples == ("Example: An example.",)


@given(st.lists(st.sampled_from([
    "100.1. A rule.", "100.1a A subrule, see rule 409.", "Example: Something happens.", "Continuation text.",
    "212.3 - Creatures  212.2a - A player [CompRules 2007/10/01]", "205. Type Line", "1. Game Concepts",
    "Orphan text before any number.", "",
]), min_size=1, max_size=12).filter(lambda ps: all(ps)))
@settings(max_examples=60, deadline=None)
def test_records_tile_the_content_exactly(paragraphs):
    rules, doc = records(paragraphs, complete=False)
    pieces = sorted(p for r in rules for p in r.pieces)
    assert "".join(doc.content[a:b] for a, b in pieces) == doc.content


@given(st.lists(st.sampled_from([
    "100.1. A rule.", "100.1a A subrule, see rule 409.", "Example: Something happens.", "Continuation text.",
    "212.3 - Creatures  212.2a - A player [CompRules 2007/10/01]", "205. Type Line", "100.1a. A subrule.",
    "[This rule has been intentionally left blank.]", "Example: Another [CR 100.1].",
]), min_size=1, max_size=10))
@settings(max_examples=40, deadline=None)
def test_a_draft_seen_before_gives_the_same_record(paragraphs):
    """Records are worked out once per distinct draft (segment._body), then reused: a later edition of
    the same paragraphs gives what a fresh cache gives, without working any out again."""
    cache = ParagraphCache()
    first = make_doc(paragraphs)
    cache.analyse(p.text for p in first.paragraphs)
    segment(first, cache)
    later = CleanDoc(first.source, first.paragraphs, (), 0, 0, "2021-01-01", complete=True)
    fresh = ParagraphCache()
    fresh.analyse(p.text for p in later.paragraphs)
    expected = segment(later, fresh)
    with pytest.MonkeyPatch.context() as m:
        m.setattr("pipeline.segment.rules._body", lambda d: pytest.fail("worked out again"))
        assert segment(later, cache) == expected


# --- the seeds ------------------------------------------------------------------------------

def test_a_citation_tag_is_never_cut_between_sentences():
    """"See Rule 420.5. [CompRules 2007/10/01] Next." was two sentences "See Rule 420.5. [" and
    "CompRules 2007/10/01]": the tag belongs to the sentence it ends, and the next one starts after it."""
    (rule,), _ = records(["212.9c Text. See Rule 420.5. [CompRules 2007/10/01] Next one. [D'Angelo 2007/10/20]"])
    assert rule.sentences == ("Text.", "See Rule 420.5.", "Next one.")
    (rule,), _ = records(["204.1a Or spell types) {{CR|204.1a}. If it is removed (see rule 205.1) [CR 205.1] too."])
    assert rule.sentences == ("Or spell types).", "If it is removed (see rule 205.1) too.")  # a tag mid-sentence


def test_seeds_sentences_hold_no_piece_of_a_tag(seeds_run):
    result, _ = seeds_run
    for r in result.rules:
        for s in r.sentences:
            assert s.count("[") == s.count("]"), (r.rule_id, s)  # "[card type]" is text, half a tag is not


def test_seeds_tile_their_content(seeds_run):
    result, _ = seeds_run
    cache = ParagraphCache()
    for doc in result.ingested.docs:
        cache.analyse(p.text for p in doc.paragraphs if p.role not in ("glossary-term", "heading"))
        pieces = sorted(p for r in segment(doc, cache) for p in r.pieces)
        assert "".join(doc.content[a:b] for a, b in pieces) == doc.content


def test_seed_000_rulings_page(seeds_run):
    result, _ = seeds_run
    rules = by_source(result, "000")
    subrules = [r for r in rules if r.kind == "subrule"]
    assert len(subrules) == 64
    assert all(r.parent == r.rule_id[:5] for r in subrules)
    assert {r.rule_id: r.title for r in rules if r.kind == "section"} == SECTION_TITLES
    (chapter,) = [r for r in rules if r.kind == "chapter"]
    assert (chapter.rule_id, chapter.title) == ("212", "Card Type, Supertype, and Subtype")
    rulings = {r.rule_id: r for r in rules if r.kind == "ruling"}
    assert sorted(rulings) == ["212.8.Ruling.1", "212.9.Ruling.1", "212.9.Ruling.2"]
    assert rulings["212.9.Ruling.1"].parent == "212.9"
    assert [c.text for c in rulings["212.8.Ruling.1"].citations] == ["[Future Sight FAQ 2007/05/01]"]
    assert rulings["212.9.Ruling.2"].citations[0].source == "D'Angelo"
    for r in subrules:  # every rule and every example carries its own tag
        parts = [c.part for c in r.citations]
        assert parts == ["text"] + [f"example {i}" for i in range(1, len(r.examples) + 1)], r.rule_id
        assert "[CompRules" not in r.text and not any("[CompRules" in e for e in r.examples)
    r = {x.rule_id: x for x in rules}
    assert r["212.1c"].citations[1].value == "2007-10-01" and r["212.1d"].citations[1].value == "2003-07-01"
    assert r["212.2a"].text.startswith("A player who has priority may play an artifact card")
    assert r["212.2m"].references[:4] == ("212.2h", "212.2i", "212.2j", "212.2k")
    assert r["212.1b"].text.endswith("Removing an object's subtype doesn't affect its card types at all.")


def test_seeds_001_003_are_one_edition(seeds_run):
    result, _ = seeds_run
    rules = [r for r in result.rules if r.edition == "2006-07-15"]
    ids = [r.rule_id for r in rules]
    assert len(ids) == len(set(ids))
    both = {r.rule_id for r in rules if r.source == f"{SEEDS['001']};{SEEDS['003']}"}
    expected = {f"212.{s}{c}" for s, letters in (("2", "ghijk"), ("3", "abcd"), ("4", "abcd")) for c in letters}
    assert both == expected | {"212.3", "212.4"}
    r = {x.rule_id: x for x in rules}
    assert r["212.1d"].flags == ("partial",) and r["212.1d"].text == ""
    assert r["212.1d"].examples[0].startswith("Example: An ability reads, “All lands are 1/1 creatures")
    assert r["212.6a"].flags == ("truncated",)
    assert not any(re.search("[\u0400-\u04ff]", x.text + "".join(x.examples)) for x in rules)
    (edition,) = [e for e in result.editions if e.edition == "2006-07-15"]
    assert (edition.edition_end, edition.complete) == ("2007-04-30", False)


def test_copies_that_disagree_are_flagged(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    path = raw / f"{SEEDS['003']}.txt"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("puts it into play under his or her control.\n\n212.3c",
                                 "puts it onto the battlefield.\n\n212.3c"), encoding="utf-8")
    result = stages.run_datasets(raw, [], tmp_path / "processed", quiet=True)
    r = {x.rule_id: x for x in result.rules if x.edition == "2006-07-15"}
    assert r["212.3b"].flags == ("conflict",)
    assert r["212.3b"].text.endswith("under his or her control.")  # 001 comes first; nothing is resolved
    assert r["212.3b"].variants == (f"{SEEDS['003']}: When a creature spell resolves, its controller puts it "
                                    "onto the battlefield.",)
    assert r["212.3a"].flags == ()


def test_seed_002_commentary(seeds_run):
    result, _ = seeds_run
    rules = by_source(result, "002")
    assert {r.kind for r in rules} == {"commentary"} and all(r.edition == "2011-06-17" for r in rules)
    cited = Counter(c.value for r in rules for c in r.citations)
    assert set(cited) == {"204.1a", "204.1b", "204.4b", "204.3d", "300.2a"}
    broken = [r for r in rules if any(c.text == "{{CR|204.1a}" for c in r.citations)]
    assert len(broken) == 1 and broken[0].references == ("204.1a",)
    assert all("[CR" not in r.text for r in rules)
    assert not any(r.kind in ("rule", "subrule") for r in result.rules if r.edition == "2011-06-17")
    first = next(r for r in rules if "When an object's card type changes" in r.text)
    assert len(first.examples) == 1 and "5/7 creature with 2 damage" in first.examples[0]


def test_seed_004_markdown(seeds_run):
    result, _ = seeds_run
    r = {x.rule_id: x for x in by_source(result, "004")}
    assert r["205"].kind == "chapter" and r["205"].title == "Type Line"
    assert len([x for x in r.values() if x.kind == "subrule"]) == 29
    assert "Cards printed in sets prior to the Eighth Edition core set" in r["205.4c"].text
    assert "\n" not in r["205.3m"].text and r["205.3m"].text.endswith("Zombie, and Zubera.")
    assert "Zubera" not in r["205.3n"].text


# --- the official editions ------------------------------------------------------------------

@needs_archive
def test_archive_counts(archive_run):
    result, _ = archive_run
    counts = {e.edition: e.counts for e in result.editions}
    c = counts["2026-01-16"]
    assert (c["part"], c["chapter"], c["rule"] + c["section"], c["subrule"], c["glossary"]) == (9, 146, 1157, 1957, 725)
    c = counts["2008-02-01"]
    assert c["rule"] + c["section"] + c["subrule"] == 1132
    rules_2026 = [r for r in result.rules if r.edition == "2026-01-16" and r.kind not in ("glossary", "commentary")]
    assert sum(len(r.examples) for r in rules_2026) == 276
    assert sum(1 for r in rules_2026 if r.examples) == 214


@needs_archive
def test_archive_every_numbered_line_is_a_record(archive_run):
    result, _ = archive_run
    from pipeline.ingest.clean import normalize_newlines
    for doc in result.ingested.docs:
        if doc.source.format != "official":
            continue
        text = normalize_newlines(doc.source.text)
        printed = Counter(m[1].replace(" ", "") for m in re.finditer(r"(?m)^\s*(\d{3}\.\s?\d+[a-z]?)\.? ", text))
        found = Counter(r.rule_id for r in result.rules if doc.source.source_id in r.source.split(";")
                        and r.kind in ("rule", "section", "subrule"))
        missing = printed - found
        if doc.source.source_id == "2003-10-01":  # wrapped cross-references "See rule\n103.4." are not rules
            assert missing == Counter({"103.4": 1, "419.8": 1})
        else:
            assert missing == Counter(), doc.source.source_id
        assert found - printed == Counter(), doc.source.source_id


@needs_archive
def test_archive_old_edition_quirks(archive_run):
    result, _ = archive_run
    r = {(x.edition, x.rule_id): x for x in result.rules}
    assert r[("2005-10-01", "606.8b")].text.startswith("Players win and lose")  # "606. 8b" stray space
    assert r[("2008-02-01", "212.1b")].text.startswith("When an object's card type changes")  # "212.1b."
    assert "placeholder" in r[("2008-02-01", "211")].flags
    assert r[("2003-10-01", "413.2d")].text.count("\n") == 1  # an indented continuation paragraph
    assert "See rule 103.4. If a player" in r[("2003-10-01", "413.2d")].text
    assert r[("2026-01-16", "Abandon")].kind == "glossary"


@needs_archive
def test_archive_glossary_term_without_a_blank_line_before_it(archive_run):
    """2020-06-01 prints "Concede" right under Companion's definition, no blank line between."""
    result, _ = archive_run
    r = {(x.edition, x.kind, x.rule_id): x for x in result.rules}
    assert r[("2020-06-01", "glossary", "Companion")].text.endswith("See rule 702.138, “Companion.”")
    assert r[("2020-06-01", "glossary", "Concede")].text.startswith("To quit the game.")


GLOSSARY = """Glossary

Companion
A keyword ability. See rule 702.138, “Companion.”
Concede
To quit the game. See rule 104, “Ending the Game.”

Control
The player who controls an object.
Usually the player who cast it:
A Listed Case
Another paragraph of Control.

Credits
"""


def test_a_term_right_under_a_finished_definition_starts_an_entry():
    from pipeline.ingest.clean import Ledger
    from pipeline.ingest.adapters.glossary import glossary_paragraphs
    ledger = Ledger(GLOSSARY)
    got = glossary_paragraphs(ledger, 1, len(ledger.lines) - 1, "blank", lambda line, text, previous: True)
    terms = [p.text for p in got if p.role == "glossary-term"]
    assert terms == ["Companion", "Concede", "Control"]
    text = {p.first_line: p.text for p in got if p.role == "glossary"}
    assert text[6] == "To quit the game. See rule 104, “Ending the Game.”"
    assert "A Listed Case" in text.values()  # under a colon: not a term


@pytest.mark.parametrize("misprint, expected, flag", [
    ("306.b", "306.3b", "number-repaired (printed 306.b)"),  # a digit dropped
    ("306.3.b", "306.3b", "number-repaired (printed 306.3.b)"),  # a dot added
    ("3063b", "306.3b", "number-repaired (printed 3063b)"),  # a dot dropped
    ("306,3b", "306.3b", "number-repaired (printed 306,3b)"),  # a comma for the dot
])
def test_misprinted_numbers_are_repaired_when_the_sequence_leaves_one_choice(misprint, expected, flag):
    rules, _ = records(["306.3. Planeswalker subtypes are always a single word.",
                        "306.3a Each word after the dash is a separate subtype.",
                        f"{misprint} Planeswalkers may have multiple subtypes.",
                        "306.4. If two or more planeswalkers share a type, all are put into graveyards."])
    assert [r.rule_id for r in rules] == ["306.3", "306.3a", expected, "306.4"]
    assert rules[2].flags == (flag,) and rules[2].text == "Planeswalkers may have multiple subtypes."


@pytest.mark.parametrize("line", [
    "306.c Planeswalkers may have multiple subtypes.",  # 306.3c? 306.3b? a slip either way: not certain
    "307.b Planeswalkers may have multiple subtypes.",  # not next to 306.3a
])
def test_an_uncertain_misprint_is_flagged_for_review_not_guessed(line):
    rules, _ = records(["306.3a Each word after the dash is a separate subtype.", line])
    assert [r.rule_id for r in rules] == ["306.3a"] and "number-review" in rules[0].flags


@pytest.mark.parametrize("line", [
    "See rule 306.3b for more.",  # a reference, not a number at the start
    "2009 Magic Core Set rules changed much.",  # a year
    "306.3 Things are going on.",  # not a misprint of what follows 306.3a (a real number, handled as usual)
])
def test_near_misses_are_not_repaired(line):
    rules, _ = records(["306.3a Each word after the dash is a separate subtype.", line])
    assert not any(f.startswith("number-repaired") for r in rules for f in r.flags)
