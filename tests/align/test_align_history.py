"""Alignment where history is interesting: strong pairs kept, examples that move, splits and
merges traced by sentence, templates, boilerplate, glossary renames, headings, truncated editions."""
import numpy as np

from pipeline.align.match import align
from pipeline.align.scoring import _assign
from pipeline.segment.edition import Edition
from pipeline.align.lineage import build
from pipeline.records import Rule
from conftest import ARCHIVE, needs_archive
from test_align import changes_of, edition, rule


def test_a_strong_pair_is_never_traded_for_two_weak_ones():
    total = np.array([[100.0, 70.0], [70.0, 0.0]], dtype=np.float32)
    eligible = total >= 62
    pairs = {(m.old, m.new) for m in _assign([0, 1], [0, 1], total, eligible)}
    assert pairs == {(0, 0)}  # the sum of the two 70s is larger; the 100 still wins


def test_pairs_under_the_threshold_never_enter_the_assignment():
    total = np.array([[55.0, 0.0], [0.0, 90.0]], dtype=np.float32)
    assert [(m.old, m.new) for m in _assign([0, 1], [0, 1], total, total >= 62)] == [(1, 1)]


PHASING = ("When a permanent phases out, any Auras, Equipment, or Fortifications attached to that permanent phase "
           "out at the same time. This alternate way of phasing out is known as phasing out indirectly.")


def test_a_rule_that_only_lost_its_example_is_the_same_rule():
    old = [rule("2000-01-01", "502.15i", PHASING, examples=("Example: A long example about a creature with an "
                                                            "Aura that phases out with it and back in later.",)),
           rule("2000-01-01", "502.15j", "Phased-out tokens cease to exist as a state-based action.")]
    new = [rule("2001-01-01", "702.23f", PHASING), rule("2001-01-01", "702.23j", old[1].text)]
    found, _ = changes_of(old, new)
    assert found[("502.15i", "702.23f")].change == "modified"  # the example is the change
    assert ("502.15i", "") not in found and ("", "702.23f") not in found


def test_examples_do_not_choose_a_rules_successor():
    example = ("Example: You control three creatures, one of which is phased out. You cast a spell that says "
               "Draw a card for each creature you control. You draw two cards.",)
    old = [rule("2000-01-01", "100.1", PHASING, examples=example),
           rule("2000-01-01", "100.2", "Phased-out tokens cease to exist as a state-based action.")]
    new = [rule("2001-01-01", "100.1", PHASING), rule("2001-01-01", "100.2", old[1].text, examples=example)]
    found, _ = changes_of(old, new)
    assert found[("100.1", "100.1")].change == "modified" and found[("100.2", "100.2")].change == "modified"


LOYALTY = ("Loyalty is a characteristic only planeswalkers have. The loyalty of a planeswalker not in play is "
           "equal to the number printed in its lower right corner. Damage dealt to a planeswalker results in that "
           "many loyalty counters being removed from it. If a planeswalker's loyalty is 0, it's put into its "
           "owner's graveyard as a state-based effect.")


def test_a_rule_cut_in_pieces_records_every_piece_and_lives_on_in_its_head():
    old = edition("2000-01-01", ("212.9d", LOYALTY), ("212.9e", "Planeswalkers can be attacked."))
    new = edition("2001-01-01", ("306.5", "Loyalty is a characteristic only planeswalkers have."),
                  ("306.5a", "The loyalty of a planeswalker not on the battlefield is equal to the number printed "
                             "in its lower right corner."),
                  ("306.6", "Planeswalkers can be attacked."),
                  ("306.9", "Damage dealt to a planeswalker results in that many loyalty counters being removed "
                            "from it."),
                  ("306.10", "If a planeswalker's loyalty is 0, it's put into its owner's graveyard as a "
                             "state-based action."))
    found, history = changes_of(old, new)
    pieces = {n for (o, n), c in found.items() if o == "212.9d" and c.change == "split"}
    continued = [n for (o, n), c in found.items() if o == "212.9d" and c.change not in ("split", "removed")]
    assert len(continued) == 1 and pieces | set(continued) == {"306.5", "306.5a", "306.9", "306.10"}
    assert continued == ["306.5"]  # the piece that holds its first sentence: the head continues the lineage
    assert ("212.9d", "") not in found and not any(c.change == "added" for c in found.values())


def test_two_rules_joined_record_the_merge():
    old = edition("2000-01-01",
                  ("212.6a", "Playing a land card is a special action. The land card doesn't go on the stack, and "
                             "is never a spell, so players can't respond to it with instants or activated abilities."),
                  ("212.6b", "A player who has priority may choose to play a land card from his or her hand during "
                             "a main phase of his or her turn, when the stack is empty."))
    new = edition("2001-01-01",
                  ("305.1", "A player who has priority may play a land card from his or her hand during a main phase "
                            "of his or her turn when the stack is empty. Playing a land card is a special action. "
                            "The land card doesn't go on the stack, and is never a spell, so players can't respond "
                            "to it with instants or activated abilities."))
    found, _ = changes_of(old, new)
    classes = sorted(c.change for c in found.values())
    assert classes == ["merged", "modified"] and {o for o, _ in found} == {"212.6a", "212.6b"}


CONVOKE = ("Convoke is a static ability that functions while the spell with convoke is on the stack. Convoke means "
           "For each colored mana in this spell's total cost, you may tap an untapped creature of that color you "
           "control rather than pay that mana.")
IMPROVISE = ("Improvise is a static ability that functions while the spell with improvise is on the stack. Improvise "
             "means For each generic mana in this spell's total cost, you may tap an untapped artifact you control "
             "rather than pay that mana.")


def test_a_template_copy_of_a_rule_that_still_exists_is_added_with_the_resemblance_noted():
    other = ("702.49b", "Multiple instances of convoke on the same spell are redundant.")
    old = edition("2000-01-01", ("702.49a", CONVOKE), other)
    new = edition("2001-01-01", ("702.50a", CONVOKE), other, ("702.125a", IMPROVISE))
    found, _ = changes_of(old, new)
    added = found[("", "702.125a")]
    assert added.change == "added" and added.note == "resembles 702.49a of 2000-01-01"
    assert not any(c.change == "split" for c in found.values())


def filler(date: str, count: int = 150) -> list[Rule]:
    """Rules about other things, so that word frequencies are an edition's, not a two-rule toy's."""
    def name(k):
        return "".join("bcdfghjklmnp"[int(d)] for d in str(k)) + "ox"
    return edition(date, *[(f"800.{k}", f"A player with priority may cast a spell with {name(k)} during the turn "
                                       f"of the active player, and {name(k)} counters stay on it.")
                           for k in range(1, count + 1)])


def test_a_pattern_about_another_named_thing_is_not_the_same_sentence():
    hideaway_was = ("Hideaway represents a static ability and a triggered ability. Hideaway means This permanent "
                    "enters the battlefield tapped and When this permanent enters the battlefield, look at the top "
                    "four cards of your library. Exile one of them face down and put the rest on the bottom of your "
                    "library in any order.")
    hideaway_is = ("Hideaway is a triggered ability. Hideaway N means When this permanent enters, look at the top N "
                   "cards of your library. Exile one of them face down and put the rest on the bottom of your "
                   "library in a random order.")
    decayed = ("Decayed represents a static ability and a triggered ability. Decayed means This creature can't "
               "block and When this creature attacks, sacrifice it at end of combat.")
    old = filler("2000-01-01") + edition("2000-01-01", ("702.74a", hideaway_was))
    new = filler("2001-01-01") + edition("2001-01-01", ("702.75a", hideaway_is), ("702.147a", decayed))
    found, _ = changes_of(old, new)
    assert found[("702.74a", "702.75a")].change == "modified"
    assert found[("", "702.147a")].change == "added"


STEP = "Then the active player gets priority. Players may cast spells and activate abilities."


def test_boilerplate_is_no_evidence_of_a_merge():
    old = edition("2000-01-01",
                  ("303.1", "As the upkeep step begins, abilities that trigger at the beginning of upkeep go on the "
                            "stack. " + STEP),
                  ("304.1", "First, the active player draws a card. This game action doesn't use the stack. " + STEP),
                  ("311.1", "As the end of combat step begins, all at end of combat abilities trigger. " + STEP),
                  ("115.3", "Priority rules are about who may act. A player with priority may cast a spell."))
    new = edition("2001-01-01",
                  ("503.1", "As the upkeep step begins, abilities that trigger at the beginning of upkeep go on the "
                            "stack."),
                  ("504.1", "First, the active player draws a card. This game action doesn't use the stack."),
                  ("511.1", "As the end of combat step begins, all at end of combat abilities trigger."),
                  ("115.3", "Priority rules are about who may act. A player with priority may cast a spell. " + STEP))
    found, _ = changes_of(old, new)
    assert not any(c.change in ("merged", "split") for c in found.values())


def glossary(date, *terms):
    return [Rule(date, date, term, "glossary", "", term, text, text.lower()) for term, text in terms]


def test_glossary_renames_are_recorded_with_both_names():
    kindred = "A card type. Whether or not a {} is a permanent depends on its other card type. See rule 308."
    old = glossary("2000-01-01", ("Tribal", kindred.format("tribal")),
                   ("Leaves Play", "A permanent leaves play when it moves from the in-play zone to any other zone."),
                   ("Mana Burn", "Unspent mana causes a player to lose life at the end of a phase."))
    new = glossary("2001-01-01", ("Kindred", kindred.format("kindred")),
                   ("Tribal (Obsolete)", "An obsolete card type that has been renamed. See rule 308, Kindreds."),
                   ("Leaves the Battlefield", "A permanent leaves the battlefield when it's moved from the "
                                              "battlefield to another zone."),
                   ("Mana Burn (Obsolete)", "Older versions of the rules stated that unspent mana caused a "
                                            "player to lose life; this was called mana burn."))
    found, _ = changes_of(old, new)
    for a, b in [("Tribal", "Kindred"), ("Leaves Play", "Leaves the Battlefield"),
                 ("Mana Burn", "Mana Burn (Obsolete)")]:
        assert found[(a, b)].change == "renamed" and found[(a, b)].note == f"renamed from {a}"
    assert found[("", "Tribal (Obsolete)")].change == "added"


def test_a_heading_follows_its_rules_not_a_heading_of_the_same_title():
    old = edition("2000-01-01", ("213", "Spells"),
                  ("213.1", "Every nonland card is a spell while it's being played and while it is on the stack."),
                  ("213.2", "A spell's card type, supertype, and subtype are the same as those of its card."))
    new = edition("2001-01-01", ("111", "Casting Things"),
                  ("111.1", old[1].text), ("111.2", old[2].text),
                  ("601", "Spells"), ("601.1", "A completely different rule about how spells are cast in order."))
    found, _ = changes_of(old, new)
    assert found[("213", "111")].change == "modified"  # its title changed; its rules went there
    assert ("213", "601") not in found


def test_a_named_heading_stays_under_its_parent_when_its_one_rule_went_elsewhere():
    """701.35 "Investigate" of 2020 is 701.16 "Investigate" of 2025, under the same chapter 701, though
    its one subrule's Clue token went to the tokens rule 111.10f: a title only one heading of each edition
    has, under the heading its parent became, names the same heading (not merged into chapter 111)."""
    clue = "Investigate means create a colorless Clue artifact token with two, Sacrifice this artifact: Draw a card."
    old = edition("2000-01-01", ("111", "Tokens"), ("111.1", "Some effects put tokens onto the battlefield."),
                  ("701", "Keyword Actions"), ("701.1", "Most actions are described by the rules in this chapter."),
                  ("701.35", "Investigate"), ("701.35a", clue))
    new = edition("2001-01-01", ("111", "Tokens"), ("111.1", "Some effects put tokens onto the battlefield."),
                  ("111.10", "Predefined"),
                  ("111.10f", "A Clue token is a colorless Clue artifact token with two, Sacrifice this artifact: "
                              "Draw a card."),
                  ("701", "Keyword Actions"), ("701.1", "Most actions are described by the rules in this chapter."),
                  ("701.16", "Investigate"), ("701.16a", "Investigate means create a Clue token. See rule 111.10f."))
    found, _ = changes_of(old, new)
    assert found[("701.35", "701.16")].change in ("unchanged", "renumbered")
    assert not any(c.change == "merged" for c in found.values())


def test_a_truncated_edition_never_ends_a_lineage():
    full = [("100.1", "These rules apply to every game of Magic."),
            ("100.2", "Each player needs a deck of at least sixty cards and small items to represent tokens."),
            ("100.3", "The player who wins the game is the player who has won it by the rules.")]
    rules = edition("2000-01-01", *full) + edition("2000-06-01", *full[:2]) + edition("2001-01-01", *full)
    eds = [Edition("2000-01-01", "", ("a",), True, {}, 0), Edition("2000-06-01", "", ("b",), False, {}, 0, True),
           Edition("2001-01-01", "", ("c",), True, {}, 0)]
    history = build(rules, eds)
    classes = {(c.to_edition, c.old_rule_id): c.change for c in history.changes}
    assert classes[("2000-06-01", "100.3")] == "not_covered"
    assert classes[("2001-01-01", "100.3")] == "unchanged" and "removed" not in classes.values()
    lineages = {history.lineage[("2000-01-01", "rule", "100.3", 1)],
                history.lineage[("2001-01-01", "rule", "100.3", 1)]}
    assert len(lineages) == 1


def test_alignment_of_an_edition_with_itself_is_all_same():
    old = edition("2000-01-01", ("212.9d", LOYALTY), ("212.9e", "Planeswalkers can be attacked."))
    new = edition("2001-01-01", ("212.9d", LOYALTY), ("212.9e", "Planeswalkers can be attacked."))
    assert sorted(m.method for m in align(old, new)) == ["same", "same"]


DIGEST = """
import hashlib, sys, tempfile
from pathlib import Path
from pipeline.ingest.discover import ingest
from pipeline.align.lineage import build
from pipeline.segment import read
with tempfile.TemporaryDirectory() as empty:
    docs = [d for d in ingest(Path(empty), [Path(sys.argv[1])]).docs if d.edition in ("2009-05-01", "2009-07-11")]
history = build(*read.editions(docs))
rows = [(c.old_rule_id, c.new_rule_id, c.change, c.method, c.score, c.similarity) for c in history.changes]
print(hashlib.sha256(repr(rows).encode()).hexdigest())
"""


@needs_archive
def test_alignment_does_not_depend_on_the_hash_seed():
    """Ties must not be broken by set order: the same editions give the same history in every process."""
    import os
    import subprocess
    import sys
    digests = {subprocess.run([sys.executable, "-c", DIGEST, str(ARCHIVE)], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1


def test_a_heading_of_a_stock_title_follows_the_heading_its_parent_became():
    """400 "General" of May 2009 opened part 4 "Spells, Abilities, and Effects"; July 2009 made that part 6, and
    its first section 600 "General". Its two rules went elsewhere (400.1 to 112.1a), so its rules say nothing, but
    its place does: the one "General" under the heading its parent became continues it (it was merged into 112).
    The 400 "General" of the new part 4 "Zones" is another heading."""
    old = edition("2000-01-01", ("1", "Game Concepts"), ("100", "General"),
                  ("100.1", "These rules apply to every game of Magic."),
                  ("4", "Spells, Abilities, and Effects"), ("400", "General"),
                  ("400.1", "Abilities are activated abilities, triggered abilities, static abilities or spells."),
                  ("401", "Spells on the Stack"), ("401.1", "A card on the stack is a spell until it resolves."))
    new = edition("2001-01-01", ("1", "Game Concepts"), ("100", "General"),
                  ("100.1", "These rules apply to every game of Magic."),
                  ("112", "Abilities"),
                  ("112.1a", "Abilities are activated abilities, triggered abilities, static abilities, or spells."),
                  ("4", "Zones"), ("400", "General"),
                  ("400.1", "A zone is a place where objects can be during a game."),
                  ("6", "Spells, Abilities, and Effects"), ("600", "General"),
                  ("600.1", "This part tells how spells and abilities are cast, activated, and resolved."),
                  ("601", "Spells on the Stack"), ("601.1", "A card on the stack is a spell until it resolves."))
    found, _ = changes_of(old, new)
    assert found[("400", "600")].change in ("unchanged", "renumbered")
    assert ("400", "112") not in found and ("", "400") in found
