"""What nlp.py reads instead of spaCy's slower attributes is the same: the tokenizer's text is Doc.text,
and spaCy imported without its command line still offers it."""
import subprocess
import sys

from hypothesis import given, settings, strategies as st

from pipeline.segment.nlp import LONG_WORD, MID_LINE, analyse, load, text_of
from conftest import ROOT

PIECES = ["212.1b", "212.2h-k", " ", "  ", "\n", "\t", "word", "(see 408.2d).", "—", " - ", "e.g.", "x" * 30,
          "[CR 204.1a]", "’", "\u00a0", "."]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_the_text_kept_is_doc_text(pieces):
    doc = load()("".join(pieces))
    assert text_of(doc) == doc.text


def test_a_word_tokenized_in_pieces_keeps_its_text():
    text = "Before " + "(" * (3 * LONG_WORD + 7) + " after.  212.3 - Creatures"
    doc = load()(text)
    assert text_of(doc) == doc.text == text


def test_mid_line_entries_are_found_where_the_text_can_hold_one():
    text = "212.3 - Creatures  212.2a - A player may attack.  212.2b – Another."
    assert MID_LINE.search(text)
    assert [s[2] for s in analyse(load()(text)).starts] == ["212.3", "212.2a", "212.2b"]
    assert not MID_LINE.search("See rule 212.2a.  It applies.")  # spaces, but no number before a dash


def test_spacy_comes_without_its_command_line_which_still_loads_when_asked():
    code = ("import sys, pipeline.segment.nlp, spacy\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('requests', 'typer', 'weasel', 'httpx')"
            " or m.startswith('spacy.cli')))\n"
            "import spacy.cli\n"
            "print('spacy.cli.download' in sys.modules, callable(spacy.info))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True True"]
