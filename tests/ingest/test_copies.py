"""A copy (rulings page, foreign-site copy, wiki, Markdown export) is evidence about the official edition in
force on its date, never a step of the history: its records join that edition's lineages as observations."""
from dataclasses import replace

from pipeline.segment.edition import Edition, observing
from pipeline.align.lineage import build
from test_align import edition

RULES = [("212.1c", "Some objects have more than one card type, for example an artifact creature."),
         ("212.2d", "Artifacts have no colored mana symbols in their mana costs, so they are colorless."),
         ("212.3a", "A creature can attack and block; it has power and toughness.")]


def official(date, rules=RULES):
    return edition(date, *rules), Edition(date, "", (date,), True, {}, 0)


def copy(date, rules):
    return [replace(r, source="page") for r in edition(date, *rules)], Edition(date, "", ("page",), False, {}, 0)


def test_a_copy_between_two_official_editions_observes_the_first_and_makes_no_step():
    (a, ea), (b, eb) = official("2008-02-01"), official("2008-05-01")
    dropped = [(RULES[0][0], RULES[0][1]), (RULES[1][0], RULES[1][1].replace(" symbols", "")),
               ("212.8.Ruling.1", "A ruling that only the rulings page gives.")]
    c, ec = copy("2008-03-17", dropped)
    eds = observing([ea, ec, eb])
    assert [e.observes for e in eds] == ["", "2008-02-01", ""]
    history = build(a + c + b, eds)
    assert {(x.from_edition, x.to_edition) for x in history.changes} == {("2008-02-01", "2008-05-01")}
    assert {x.change for x in history.changes} == {"unchanged"}  # the page dropped "symbols": not a change of the rules
    seen = {o["rule_id"]: o for o in history.observations}
    assert seen["212.2d"]["agreement"] == "differs" and seen["212.2d"]["differences"] == 'without "symbols"'
    assert seen["212.1c"]["agreement"] == "same" and seen["212.1c"]["observes"] == "2008-02-01"
    assert seen["212.8.Ruling.1"]["agreement"] == "absent" and seen["212.8.Ruling.1"]["official_rule_id"] == ""
    lineage = history.lineage
    assert lineage[("2008-03-17", "subrule", "212.2d", 1)] == lineage[("2008-02-01", "subrule", "212.2d", 1)]
    assert history.last_changed[("2008-05-01", "subrule", "212.2d", 1)] == "2008-02-01"  # official editions only


def test_a_copy_that_lost_an_example_says_so():
    (a, ea), (b, eb) = official("2008-02-01"), official("2008-05-01")
    a[0] = replace(a[0], examples=("Example: Ornithopter is an artifact creature.",))
    b[0] = replace(b[0], examples=a[0].examples)
    c, ec = copy("2008-03-17", RULES[:1])
    history = build(a + c + b, observing([ea, ec, eb]))
    assert history.observations[0]["differences"] == "1 example missing"
    assert all(x.change == "unchanged" for x in history.changes)  # not lost and regained


def test_without_an_official_edition_copies_stand_in_for_their_editions():
    (c1, e1), (c2, e2) = copy("2006-07-15", RULES), copy("2008-03-17", RULES[:2] + [("212.3a", "A creature fights.")])
    eds = observing([e1, e2])
    assert [e.observes for e in eds] == ["", ""]
    history = build(c1 + c2, eds)
    assert history.observations == []
    assert {(x.from_edition, x.to_edition) for x in history.changes} == {("2006-07-15", "2008-03-17")}


def test_a_copy_older_than_every_official_edition_stands_in_for_its_own():
    (c, ec), (a, ea) = copy("2002-01-01", RULES), official("2003-10-01")
    eds = observing([ec, ea])
    assert eds[0].observes == ""
    history = build(c + a, eds)
    assert {(x.from_edition, x.to_edition) for x in history.changes} == {("2002-01-01", "2003-10-01")}


def test_a_copy_after_the_last_official_edition_observes_it():
    (a, ea), (c, ec) = official("2025-06-06"), copy("2025-09-01", RULES[:1])
    history = build(a + c, observing([ea, ec]))
    assert history.changes == [] and history.observations[0]["observes"] == "2025-06-06"


def test_a_truncated_official_text_is_not_a_copy():
    (a, ea) = official("2000-01-01")
    t = edition("2000-06-01", *RULES[:1])
    eds = observing([ea, Edition("2000-06-01", "", ("t",), False, {}, 0, True)])
    assert eds[1].observes == ""
    assert {x.to_edition for x in build(a + t, eds).changes} == {"2000-06-01"}


