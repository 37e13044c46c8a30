import pytest
from hypothesis import given, strategies as st


from pipeline.ingest.clean import (LINE_BREAK, Ledger, compare_form, fold_typography, normalize_newlines,
                                   strip_citations, unwrap)


@pytest.mark.parametrize("text, expected", [
    ("“Equip”", '"Equip"'),
    ("can’t", "can't"),
    # editions space their dashes differently and the TXT ones spell them "--" or " - "
    ("Artifact — Equipment", "Artifact-Equipment"),
    ("Artifact – Equipment", "Artifact-Equipment"),
    ("Artifact -- Equipment", "Artifact-Equipment"),
    ("Artifact - Equipment", "Artifact-Equipment"),
    ("cards—even a card", "cards-even a card"),
    ("(13 – 3)", "(13-3)"),
    ("at <http://gatherer.wizards.com>.", "at http://gatherer.wizards.com."),
    ("the _Odyssey_TM block", "the Odyssey block"),
    ("the Oracle_ card reference", "the Oracle card reference"),
    ("DCI™ Floor Rules", "DCI Floor Rules"),
    ("DCI(TM) Floor Rules", "DCI Floor Rules"),
    ("the _Eighth Edition_ core set", "the Eighth Edition core set"),
    ("who?ve", "who've"),
    ("Artifact ? Equipment", "Artifact-Equipment"),
    # near misses: must not change
    ("snake_case_name", "snake_case_name"),
    ("Is it? Yes.", "Is it? Yes."),
    ("1/1", "1/1"),
    ("non-token", "non-token"),
    ("a <b> tag", "a <b> tag"),
    ("_Magic_", "Magic"),
])
def test_fold_typography(text, expected):
    assert fold_typography(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("a [CompRules 2007/10/01]", "a"),
    ("x [CR 204.1a] y", "x y"),
    ("x {{CR|204.1a} y", "x y"),
    ("x [D'Angelo 2007/10/20]", "x"),
    ("x [Future Sight FAQ 2007/05/01]", "x"),
    ("still a [card type].", "still a [card type]."),  # near miss: rules text in brackets stays
    ("{T}: Add {G}.", "{T}: Add {G}."),
])
def test_strip_citations(text, expected):
    assert strip_citations(text) == expected


def test_newlines():
    assert normalize_newlines("a\r\nb\rc\nd") == "a\nb\nc\nd"


def test_unwrap_joins_and_keeps_hyphenated_words():
    lines = [(1, "characteristic-", True), (2, "defining abilities", False), (3, "New one", True)]
    paragraphs = unwrap(lines)
    assert [p.text for p in paragraphs] == ["characteristic-defining abilities", "New one"]
    assert (paragraphs[0].first_line, paragraphs[0].last_line) == (1, 2)


def test_ledger_charges_line_breaks():
    ledger = Ledger("a\r\n  b  \rc")
    assert ledger.lines == ["a", "  b  ", "c"]
    for no, line in ledger.numbered():
        ledger.keep_stripped(no, line)
    ledger.check("x")
    assert ledger.kept == 3


@given(st.text(alphabet=st.sampled_from("ab \r\n\t"), max_size=30))
def test_newlines_as_the_line_break_pattern_says(text):
    assert normalize_newlines(text) == LINE_BREAK.sub("\n", text)


@pytest.mark.parametrize("text, lines, breaks", [
    ("", [], 0), ("a", ["a"], 0), ("a\n", ["a"], 1), ("\n", [""], 1), ("a\r\n\r\nb", ["a", "", "b"], 4),
    ("a\rb\n\n", ["a", "b", ""], 3),
])
def test_ledger_lines_and_one_count_of_line_breaks(text, lines, breaks):
    """Each line once, as a scan of the breaks gives them; the breaks charged in one count, not a row per line."""
    ledger = Ledger(text)
    assert ledger.lines == lines
    assert ledger.discards == ([] if not breaks else [ledger.discards[0]])
    assert sum(d.size for d in ledger.discards if d.reason == "line breaks") == breaks
    for no, line in ledger.numbered():
        ledger.keep_stripped(no, line)
    ledger.check("x")


@given(st.text())
def test_compare_form_is_idempotent(text):
    assert compare_form(compare_form(text)) == compare_form(text)


@given(st.text(alphabet=st.sampled_from("ab “”‘’–—-'\"_ \t?x"), max_size=40))
def test_fold_never_leaves_curly_quotes_or_long_dashes(text):
    folded = compare_form(text)
    assert not set(folded) & set("“”‘’–—")
