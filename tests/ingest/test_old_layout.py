"""The pre-2003 layout (1999-04-23, 2002-10-07): separator lines, indented blocks, an index after the
glossary, symbol lists inside it; a title in capitals; the date wherever the text states it."""
from collections import Counter

import pytest

from pipeline.segment import read
from pipeline.ingest.adapters.official import effective_date, looks_official
from test_formats import FORMATS, needs_formats

# Counted by hand with grep over each file's rules (lines opening with "N. ", "NNN. ", "NNN.N ",
# "NNN.Na ") and glossary (terms at the left margin after a blank line, less the 2002 table heading
# "Expansions and Editions"). Rules and sections are both "NNN.N" numbers: together 195 and 254.
OLD_EDITIONS = {
    "1999-04-23.txt": ("1999-04-23", {"part": 5, "chapter": 63, "rule+section": 195, "subrule": 151, "glossary": 175}),
    "2002-10-07.txt": ("2002-10-07", {"part": 5, "chapter": 66, "rule+section": 254, "subrule": 246, "glossary": 213}),
}


@needs_formats
@pytest.mark.parametrize("name", sorted(OLD_EDITIONS))
def test_pre_2003_counts(name):
    doc = read.clean(FORMATS / name)
    source, rules = doc.source, read.rules([doc])
    kinds = Counter(r.kind for r in rules)
    kinds["rule+section"] = kinds.pop("rule", 0) + kinds.pop("section", 0)
    date, expected = OLD_EDITIONS[name]
    assert source.edition == date and doc.complete
    assert dict(kinds) == expected
    assert not [r for r in rules if "---" in r.text + r.title]  # separator lines are not text
    terms = {r.rule_id for r in rules if r.kind == "glossary"}
    assert {"Ability", "Zone"} <= terms and not terms & {"Index", "Expansions and Editions", "Abilities, 402"}
    assert "index, credits and legal notices" in doc.discarded_by_reason() or name == "2002-10-07.txt"


@needs_formats
def test_indented_blocks_unwrap_into_one_subrule():
    rule = next(r for r in read.rules([read.clean(FORMATS / "1999-04-23.txt")]) if r.rule_id == "502.9e")
    assert rule.text == ("Assigning damage from a creature with trample considers only the actual toughness "
                         "of a blocking creature, not any abilities or effects that might change the final "
                         "amount of damage dealt.")


TITLE_IN_CAPITALS = "COMPREHENSIVE\nRULES\n\n1. The Game\n\n100. General\n\n100.1. These rules apply.\n"


def test_title_check_ignores_case_and_line_breaks():
    assert looks_official(TITLE_IN_CAPITALS)
    assert not looks_official(TITLE_IN_CAPITALS.replace("RULES", "RULINGS"))  # near miss


@pytest.mark.parametrize("text, expected", [
    ("COMPREHENSIVE RULES                                04/23/99\n", "1999-04-23"),
    ("Comprehensive Rules 10/07/2002\n", "2002-10-07"),
    ("x\n" * 30000 + "These rules are effective as of June 17, 2011.", "2011-06-17"),  # stated far down
    ("COMPREHENSIVE RULES\nrule 13/45/99\n", None),  # near miss: no date beside the title
])
def test_effective_date_wherever_stated(text, expected):
    assert effective_date(text) == expected
