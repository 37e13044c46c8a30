"""Rules rewritten beyond their characters and sentences, text absorbed into another rule, and
glossary names reworded (issue 10): found by rare words, never on stock wording."""
import pytest

from pipeline.align.body import _gaps
from pipeline.align.glossary import _common, _stems
from pipeline.align.scoring import score_form
from pipeline.align.trace import units
from pipeline.align.match import align
from pipeline.records import Match
from test_align import changes_of, edition

FILLER = [  # common wording, so that the words of the rules under test are the rare ones
    ("100.1", "These rules apply to every game."),
    ("100.2", "Each player needs a deck of cards."),
    ("100.3", "A player may play a land card during a main phase of the turn."),
    ("100.4", "The active player gets priority at the beginning of each step."),
    ("100.5", "A player who has priority may cast a spell."),
    ("100.6", "Third, the active player gets priority."),
    ("100.7", "Third, the active player gets priority."),
    ("100.8", "Third, the active player gets priority."),
    ("100.9", "A spell on the stack is not a permanent."),
]
MULLIGAN = ("A player who is dissatisfied with an opening hand may mulligan: shuffle that hand into the library and "
            "draw seven cards.")
REWRITTEN = ("Each dissatisfied player declares a mulligan; then every player who declared one shuffles the opening "
             "hand into the library and draws one fewer card than before.")
NO_COST = "Some objects have no mana cost. This includes all land cards and cards with no mana symbols on them."
TOKENS = "Tokens have no mana cost unless the effect that creates them specifies otherwise."


def test_a_rule_rewritten_beyond_its_sentences_continues():
    old = edition("2000-01-01", *FILLER, ("101.4", MULLIGAN))
    new = edition("2001-01-01", *FILLER, ("103.4", REWRITTEN))
    found, _ = changes_of(old, new)
    row = found[("101.4", "103.4")]
    assert row.change == "modified" and row.method == "traced"
    assert ("101.4", "") not in found and ("", "103.4") not in found


def test_text_absorbed_under_new_wording_is_merged():
    old = edition("2000-01-01", *FILLER, ("202.1", NO_COST), ("202.2", TOKENS))
    new = edition("2001-01-01", *FILLER, ("202.1", NO_COST[:-1] + ", and tokens (unless the effect creating them "
                                                   "specifies otherwise)."))
    found, _ = changes_of(old, new)
    assert found[("202.2", "202.1")].change == "merged"
    assert found[("202.1", "202.1")].change == "modified"


def test_stock_wording_is_not_absorbed():
    """A rule that was all boilerplate goes; it is not merged into a rule that said the same already."""
    old = edition("2000-01-01", *FILLER, ("100.10", "Fourth, the active player gets priority and may cast spells."))
    new = edition("2001-01-01", *FILLER)
    found, _ = changes_of(old, new)
    assert found[("100.10", "")].change == "removed"


def test_a_fragment_ends_nothing():
    """A fragment lacks most rules: what it lacks is not merged into what it holds."""
    old = edition("2000-01-01", *FILLER, ("202.2", TOKENS))
    new = edition("2001-01-01", ("202.1", "Some objects have no mana cost: land cards, and tokens "
                                          "(unless the effect creating them specifies otherwise)."))
    kinds = {m.method for m in align(old, new, whole=False) if m.old is not None and m.new is not None}
    assert not kinds & {"merge", "traced"}


@pytest.mark.parametrize("a, b, common", [
    ("Ending the Turn", "End the Turn", 2),
    ("Flip a Coin", "Flipping a Coin", 2),
    ("Controlling Another Player's Turn", "Control Another Player's Turn", 4),
    ("Depend On", "Dependency", 1),
    ("Attacked", "Attach", 0),  # near miss: attack is not attach
    ("Instant Type", "Planeswalker Type", 1),  # half of neither name
    ("Enchant Enchantment", "Enchant", 1),  # a word of one name is the counterpart of one word of the other
])
def test_names_reworded(a, b, common):
    assert _common(_stems(a), _stems(b)) == common


# --- the turn's template rules and rules rewritten in their place (issue 21) --------------------------

PRIORITY = "{}, the active player gets priority. (See rule 117, \u201cTiming and Priority.\u201d)"
STEPS = [  # each step: its turn-based actions, then "N-th, the active player gets priority"
    ("505.1", "The main phase has no beginning-of-phase actions that use the stack."),
    ("505.2", "First, the active player puts a lore counter on each Saga they control."),
    ("505.3", PRIORITY.format("Second")),
    ("509.1", "First, the defending player declares blockers."),
    ("509.2", "Second, the active player announces the damage assignment order of each blocked creature."),
    ("509.3", PRIORITY.format("Third")),
]


def test_an_ordinal_template_follows_its_step_not_its_words():
    """A step gains an action and loses another: "Second, ... priority" of the main phase becomes
    "Third, ..." there, and the blockers step's "Third, ..." becomes "Second, ...". The words alone say
    505.3 -> 509.2 (identical text); the place says 505.3 -> 505.4 and 509.3 -> 509.2."""
    old = edition("2000-01-01", *FILLER, *STEPS)
    new = edition("2001-01-01", *FILLER, *STEPS[:2],
                  ("505.3", "Second, the active player rolls to visit their Attractions."),
                  ("505.4", PRIORITY.format("Third")), STEPS[3], ("509.2", PRIORITY.format("Second")))
    found, _ = changes_of(old, new)
    assert found[("505.3", "505.4")].change == "modified"
    assert found[("509.3", "509.2")].change == "modified"
    assert ("509.2", "") in found and ("", "505.3") in found


TOKEN_OWNER = "A token is both owned and controlled by the player under whose control it entered the battlefield."
TOKEN_OWNER_NOW = ("The player who creates a token is its owner. The token enters the battlefield under that player's "
                   "control.")


def test_a_rule_rewritten_between_the_same_neighbours_continues():
    """110.5a -> 111.2 of 2020: its neighbours moved together, one rule ended and one came between
    them, and each keeps a fair share of the other's own words: modified, not removed + added."""
    around = [("110.5", "Some effects put tokens onto the battlefield. A token is a marker used to represent a "
                        "permanent that isn't a card."),
              ("110.5b", "A token's subtypes and name are defined by the effect that created it.")]
    old = edition("2000-01-01", *FILLER, around[0], ("110.5a", TOKEN_OWNER), around[1])
    new = edition("2001-01-01", *FILLER, ("111.1",) + around[0][1:], ("111.2", TOKEN_OWNER_NOW),
                  ("111.3",) + around[1][1:])
    found, _ = changes_of(old, new)
    assert found[("110.5a", "111.2")].change == "modified"


PLANE_ABILITIES = ("Any abilities of a face-up plane card in the command zone function from that zone. The card's "
                   "static abilities affect the game, its triggered abilities may trigger, and its activated "
                   "abilities may be activated.")
PLANE_FACE_DOWN = ("Each plane card is treated as if its text box included \"When you roll {PW}, planeswalk.\" A "
                   "face-up plane card that's turned face down becomes a new object.")
PLANAR_DIE = ("Any time the active player has priority and the stack is empty, but only during a main phase of their "
              "turn, that player may roll the planar die. This is a special action and doesn't use the stack.")


def test_a_rule_rewritten_in_a_hunk_of_added_rules_continues():
    """901.7a of 2011 -> 2013: its neighbours went to neighbours with two added rules between them; the
    one that keeps a fair share of its words continues it (a line of a diff's hunk), the other is added.
    (The whole alignment finds this small case by other means too: the gaps pass is asked alone.)"""
    old = edition("2000-01-01", *FILLER, ("901.7", PLANE_ABILITIES), ("901.7a", PLANE_FACE_DOWN),
                  ("901.8", PLANAR_DIE))
    new = edition("2001-01-01", *FILLER, ("901.7", PLANE_ABILITIES.replace("plane card", "plane or phenomenon card")),
                  ("901.7a", "A face-up plane card or phenomenon card that's turned face down becomes a new object."),
                  ("901.8", "Planechase games have an inherent triggered ability known as the \"planeswalking "
                            "ability.\" This ability has no source and is controlled by the player whose planar die "
                            "roll caused it to trigger."),
                  ("901.9", PLANAR_DIE))
    o, n = list(range(len(old))), list(range(len(new)))
    at = {r.rule_id: k for k, r in enumerate(new)}
    anchors = [Match(i, at[r.rule_id if r.rule_id != "901.8" else "901.9"], 100.0, "fuzzy")
               for i, r in enumerate(old) if r.rule_id != "901.7a"]
    both = (units(old, o, score_form), units(new, n, score_form))
    found = _gaps(old, new, o, n, anchors, [], both, lambda i, j: True)
    assert [(old[m.old].rule_id, new[m.new].rule_id) for m in found] == [("901.7a", "901.7a")]


def test_a_rule_rewritten_and_moved_inside_its_section_continues():
    """508.4 -> 508.5 of 2011: the rule moved after the one that followed it and was reworded; its
    section is the same, it is the only rule of it that ended and the other the only one added."""
    defending = ("Effects from a creature that refer to a defending player refer only to the defending player it's "
                 "attacking (if it's attacking a player) or the controller of the planeswalker it's attacking (if "
                 "it's attacking a planeswalker).")
    reworded = ("If an ability of an attacking creature refers to a defending player, or a spell or ability refers "
                "to both an attacking creature and a defending player, then unless otherwise specified, the "
                "defending player it's referring to is the player that creature was attacking at the time it became "
                "an attacking creature that combat, or the controller of the planeswalker that creature was "
                "attacking at the time it became an attacking creature that combat.")
    onto = ("If a creature is put onto the battlefield attacking, its controller chooses which defending player "
            "it's attacking as it enters the battlefield.")
    old = edition("2000-01-01", *FILLER, ("508.3", "Third, the active player gets priority."),
                  ("508.4", defending), ("508.5", onto))
    new = edition("2001-01-01", *FILLER, ("508.3", "Third, the active player gets priority."),
                  ("508.4", onto), ("508.5", reworded))
    found, _ = changes_of(old, new)
    assert found[("508.4", "508.5")].change == "modified"


def test_text_moved_from_the_glossary_into_the_rules_is_a_split_piece_of_the_entry():
    """July 2009: the glossary's "Exchange" was cut down to "See rule 701.8" and its paragraphs became
    701.8a-b; they are pieces of the entry, not new rules."""
    from test_align import rule
    first = ("A spell or ability may instruct players to exchange something (for example, life totals or control "
             "of two permanents) as part of its resolution. When such a spell or ability resolves, if the entire "
             "exchange can't be completed, no part of the exchange occurs.")
    second = ("When life totals are exchanged, each player gains or loses the amount of life necessary to equal the "
              "other player's previous life total.")
    old = edition("2000-01-01", *FILLER) + [rule("2000-01-01", "Exchange", first + "\n" + second, "glossary")]
    new = edition("2001-01-01", *FILLER, ("701.8", "Exchange"), ("701.8a", first), ("701.8b", second)) \
        + [rule("2001-01-01", "Exchange", "To swap two things, such as life totals. See rule 701.8.", "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Exchange", "701.8a")].change == "split"
    assert found[("Exchange", "701.8b")].change == "split"
    assert found[("Exchange", "Exchange")].change == "modified"



def test_glossary_text_moved_into_the_rules_reworded_is_a_split_piece_of_the_entry():
    """July 2009: the glossary's "Pile" was cut down to "A temporary grouping of cards. See rule 700.3." and
    its text became 700.3b, its first sentence reworded past sentence likeness: the words say where it went
    (most of 700.3b's own words are the entry's, and most of the entry's are in 700.3b)."""
    from test_align import rule
    pile = ("If a player is asked to separate a group of objects into two or more piles, the objects do not leave "
            "the zone they're currently in. If cards in a graveyard are split into piles, the order of the "
            "graveyard must be maintained. A pile can contain zero or more objects.")
    moved = ("Objects grouped into piles don't leave the zone they're currently in. If cards in a graveyard are "
             "split into piles, the order of the graveyard must be maintained.")
    old = edition("2000-01-01", *FILLER, *MANY) + [rule("2000-01-01", "Pile", pile, "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY, ("700.3", "Piles"), ("700.3b", moved)) \
        + [rule("2001-01-01", "Pile", "A temporary grouping of cards. See rule 700.3.", "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Pile", "700.3b")].change == "split"


def test_a_piece_from_the_glossary_is_not_renumbered():
    """A glossary term has no number: its piece in the rules is a split, not a renumbering."""
    from test_align import rule
    text = ("Anything that happens in a game is an event. Multiple events may take place during the resolution of a "
            "spell or ability.")
    old = edition("2000-01-01", *FILLER) + [rule("2000-01-01", "Event", text, "glossary")]
    new = edition("2001-01-01", *FILLER, ("700.1", text)) \
        + [rule("2001-01-01", "Event", "Anything that happens in a game. See rule 700.1.", "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Event", "700.1")].change == "split" and not found[("Event", "700.1")].renumbered


FACE_DOWN = "If a spell or ability tries to turn {} face down, nothing happens."


def test_a_rule_whose_text_lives_on_in_a_rule_that_continues_another_is_merged_into_it():
    """2025: the meld rule "can't be turned face down" went into the double-faced cards' rule, which gained
    "melded" from it; its second sentence was the double-faced rule's template."""
    old = edition("2000-01-01", *FILLER,
                  ("711.10", "Double-faced permanents can't be turned face down. " + FACE_DOWN.format("a double-faced "
                                                                                                        "permanent")),
                  ("712.10", "Meld cards on the battlefield and melded permanents can't be turned face down. "
                   + FACE_DOWN.format("such a permanent")))
    new = edition("2001-01-01", *FILLER,
                  ("712.16", "Melded permanents and other double-faced permanents can't be turned face down. "
                   + FACE_DOWN.format("a double-faced permanent")))
    found, _ = changes_of(old, new)
    assert found[("712.10", "712.16")].change == "merged"
    assert found[("711.10", "712.16")].change == "modified"


def test_a_template_the_ended_rule_shared_with_a_continuing_rule_is_not_a_merge():
    """Typecycling gained nothing from the equip rule that went: two rules on one template stay apart."""
    equip = ("An equip [quality] ability is an equip ability. Any effect that increases or reduces an equip cost will "
             "increase or reduce an equip [quality] cost.")
    cycling = ("Typecycling abilities are cycling abilities. Any effect that increases or reduces a cycling cost will "
               "increase or reduce a typecycling cost.")
    old = edition("2000-01-01", *FILLER, ("702.6d", equip), ("702.29f", cycling))
    new = edition("2001-01-01", *FILLER, ("702.29f", cycling + " Any effect that looks for cycling finds typecycling."))
    found, _ = changes_of(old, new)
    assert found[("702.6d", "")].change == "removed"
    assert ("702.6d", "702.29f") not in found


def test_a_glossary_term_folded_into_another_entry_is_merged_into_it():
    from test_align import rule
    suspended = 'A card is "suspended" if it\'s in the exile zone, has suspend, and has a time counter on it.'
    old = edition("2000-01-01", *FILLER) + [
        rule("2000-01-01", "Suspend", "Suspend is a keyword that represents three abilities. See rule 702.59.",
             "glossary"),
        rule("2000-01-01", "Suspended", suspended, "glossary")]
    new = edition("2001-01-01", *FILLER) + [
        rule("2001-01-01", "Suspend", "A keyword ability that provides an alternate way to cast a card. See rule "
             "702.59. " + suspended, "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Suspended", "Suspend")].change == "merged"
    assert found[("Suspend", "Suspend")].change == "modified"


def test_the_rule_whose_first_sentence_opens_the_merged_rule_continues_it():
    """2025: double-faced cards (711) and meld (712) became one section; 712.8 opens with 711.4's sentence,
    a qualifier inserted, and ends with meld's 712.3 word for word. 711.4 continues; 712.3 is merged."""
    faces = "each has its own set of characteristics."
    old = edition("2000-01-01", *FILLER,
                  ("711.1", "Double-faced cards have a Magic card face on each side."),
                  ("711.4", "Each face of a double-faced card " + faces.replace("each has", "has")),
                  ("712.1", "Meld is a keyword found on some double-faced cards."),
                  ("712.3", "The front face of each meld card and the combined face formed by a meld pair " + faces))
    new = edition("2001-01-01", *FILLER,
                  ("712.1", "Double-faced cards have a Magic card face on each side."),
                  ("712.2", "Meld is a keyword found on some double-faced cards."),
                  ("712.8", "Each face of a transforming or modal double-faced card " + faces.replace("each has", "has")
                   + " The front face of each meld card and the combined face formed by a meld pair " + faces))
    found, _ = changes_of(old, new)
    assert found[("711.4", "712.8")].change == "modified"
    assert found[("712.3", "712.8")].change == "merged"


SAGA = "As a Saga enters the battlefield, its controller puts a lore counter on it."
READ_AHEAD = ("As a Saga with the read ahead ability enters the battlefield, its controller chooses a number from one "
              "to that Saga's final chapter number. That Saga enters the battlefield with the chosen number of lore "
              "counters on it.")


def test_a_rule_kept_whole_at_its_number_continues_there_not_in_a_look_alike():
    """2025: 714.3a kept its sentence and gained read ahead's; 702.155b, read ahead's own rule, is new."""
    old = edition("2000-01-01", *FILLER, ("714.1", "Saga is an enchantment type."), ("714.3a", SAGA))
    new = edition("2001-01-01", *FILLER, ("702.155a", "Read ahead is a static ability found on some Saga cards."),
                  ("702.155b", READ_AHEAD + " See rule 714, Saga Cards."),
                  ("714.1", "Saga is an enchantment type."),
                  ("714.3a", SAGA.replace("a Saga", "a Saga without the read ahead ability") + " " + READ_AHEAD
                   + " (See rule 702.155, Read Ahead.)"))
    found, _ = changes_of(old, new)
    assert found[("714.3a", "714.3a")].change == "modified"
    assert found[("", "702.155b")].change == "added"



def test_of_two_terms_joined_under_a_new_name_the_one_whose_definition_it_keeps_is_renamed():
    """2007: "Spell Type" keeps Instant Type's example; that "Sorcery" shares more letters with "Spell" than
    "Instant" does is no evidence."""
    from test_align import rule
    kind = ('{0} subtypes are always a single word and are listed after a long dash: "{0} - Arcane." {0} '
            'subtypes are also called {1} types. The list of {1} types is as follows: Arcane.')
    old = edition("2000-01-01", *FILLER) + [
        rule("2000-01-01", "Instant Type", kind.format("Instant", "instant"), "glossary"),
        rule("2000-01-01", "Sorcery Type", kind.format("Sorcery", "sorcery"), "glossary")]
    new = edition("2001-01-01", *FILLER) + [
        rule("2001-01-01", "Spell Type", 'Instants and sorceries share the same set of subtypes. These subtypes are '
             'always a single word and are listed after a long dash: "Instant - Arcane." These subtypes are also '
             'called spell types. The list of spell types is as follows: Arcane.', "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Instant Type", "Spell Type")].change == "renamed"
    assert found[("Sorcery Type", "Spell Type")].change == "merged"
    assert found[("Sorcery Type", "Spell Type")].note == ""  # the row names both terms: no "renamed from"


def test_a_term_whose_definition_went_to_a_new_name_is_renamed_there_not_to_its_obsolete_pointer():
    """2006: "Snow-Covered" became "Snow", and "Snow-Covered (Obsolete)" a new pointer to it."""
    from test_align import rule
    old = edition("2000-01-01", *FILLER) + [
        rule("2000-01-01", "Snow-Covered", 'Snow-covered is a supertype. When a card refers to a "snow-covered land," '
             'it means a land with the snow-covered supertype. See rule 205.4e.', "glossary")]
    new = edition("2001-01-01", *FILLER) + [
        rule("2001-01-01", "Snow", 'Snow is a supertype. When a card refers to a "snow permanent," it means a '
             'permanent with the snow supertype. Some older cards were printed with the term "snow-covered." See '
             'rule 205.4e.', "glossary"),
        rule("2001-01-01", "Snow-Covered (Obsolete)", 'Some older cards were printed with the term "snow-covered" '
             'in their rules text. All instances of "snow-covered" are now "snow."', "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Snow-Covered", "Snow")].change == "renamed"
    assert found[("", "Snow-Covered (Obsolete)")].change == "added"


def test_of_a_rule_cut_in_pieces_the_piece_at_its_place_that_opens_with_its_first_sentence_continues_it():
    """2011: lifelink 702.13a became 702.14a, its first sentence, and 702.14b, the rest."""
    first = "Lifelink is a static ability."
    rest = ("Damage dealt by a source with lifelink causes that source's controller, or its owner if it has no "
            "controller, to gain that much life (in addition to any other results that damage causes).")
    old = edition("2000-01-01", *FILLER, ("702.12", "Intimidate"), ("702.12a", "Intimidate is an evasion ability."),
                  ("702.13", "Lifelink"), ("702.13a", first + " " + rest + " See rule 118.9."))
    new = edition("2001-01-01", *FILLER, ("702.13", "Intimidate"), ("702.13a", "Intimidate is an evasion ability."),
                  ("702.14", "Lifelink"), ("702.14a", first), ("702.14b", rest + " See rule 119.3."))
    found, _ = changes_of(old, new)
    assert found[("702.13a", "702.14a")].change == "modified"
    assert found[("702.13a", "702.14b")].change == "split"


STEPS_BEFORE = [("303.1", "First, the active player untaps all permanents. Then the active player gets priority and "
                          "players may play spells and abilities."),
                ("305.1", "First, the active player may play a land. Then the active player gets priority and "
                          "players may play spells and abilities.")]
DRAW_STEP = ("First, the active player draws a card. This game action doesn't use the stack. Then any abilities that "
             "trigger at the beginning of the draw step and any other abilities that have triggered go on the stack. "
             "Then the active player gets priority and players may play spells and abilities.")


def test_the_rest_of_a_split_rule_follows_its_pieces():
    """304.1 of May 2009 -> 504.1-504.3: the draw step's first sentences became 504.1 and 504.2, and its
    last, stock wording printed in every step ("the active player gets priority"), became 504.3 right
    after them: a split piece, not an added rule. The place vouches for what stock words cannot."""
    old = edition("2000-01-01", *FILLER, *STEPS_BEFORE, ("304.1", DRAW_STEP))
    new = edition("2001-01-01", *FILLER, *STEPS_BEFORE,
                  ("504.1", "First, the active player draws a card. This turn-based action doesn't use the stack."),
                  ("504.2", "Second, any abilities that trigger at the beginning of the draw step and any other "
                            "abilities that have triggered go on the stack."),
                  ("504.3", "Third, the active player gets priority. Players may cast spells and activate abilities."))
    found, _ = changes_of(old, new)
    assert found[("304.1", "504.1")].change == "modified"
    assert found[("304.1", "504.3")].change == "split"
    assert ("", "504.3") not in found


# An edition of a realistic size: a word is rare (names something) only among a hundred rules or more.
MANY = [(f"120.{k}", f"The {a} rule of {b} stays as it is.") for k, (a, b) in enumerate(
    ((a, b) for a in ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                      "eleventh", "twelfth") for b in ("spring", "summer", "autumn", "winter", "dawn", "dusk", "noon",
                                                    "night", "rain", "snow")), 1)]


def test_a_rule_on_the_same_pattern_after_a_piece_is_added():
    """701.35a of 2020 (Investigate's Clue) -> 111.10f of 2025, followed by the new Blood token 111.10g
    on the same pattern: each names what the other lacks (Clue, Blood), so the Blood token is added."""
    clue = "Investigate means create a colorless Clue artifact token with {2}, Sacrifice this artifact: Draw a card."
    old = edition("2000-01-01", *FILLER, *MANY, ("701.35", "Investigate"), ("701.35a", clue))
    new = edition("2001-01-01", *FILLER, *MANY, ("111.10", "Some effects create predefined tokens."),
                  ("111.10f", "A Clue token is a colorless Clue artifact token with {2}, Sacrifice this artifact: "
                              "Draw a card."),
                  ("111.10g", "A Blood token is a colorless Blood artifact token with {1}, {T}, Discard a card, "
                              "Sacrifice this artifact: Draw a card."),
                  ("701.35", "Investigate"), ("701.35a", "Investigate means create a Clue token."))
    found, _ = changes_of(old, new)
    assert ("", "111.10g") in found and ("701.35a", "111.10g") not in found


def test_of_two_rules_saying_the_same_each_continues_at_its_own_number():
    """2013 printed the vanguard life modifier twice, as 211.1 and 311.7; 2020 reworded both. The
    sentences both said are evidence for neither, so each continues at its number: 311.7 is not a piece
    of 211.1 (and removed), it is modified."""
    life = ("Each vanguard card has a life modifier printed in its lower right corner. This is a number preceded by "
            "a plus sign, a number preceded by a minus sign, or a zero. This modifier is applied to the starting "
            "life total of the vanguard card's owner (normally 20) to determine how much life that player begins "
            "the game with.")
    reworded = life.split(" This modifier")[0] + (" This modifier is applied as the starting life total of the "
                                                   "vanguard card's owner is determined. See rule 103.3.")
    odd = reworded.replace("is determined.", "(normally 20) to is determined.")
    old = edition("2000-01-01", *FILLER, *MANY, ("211.1", life), ("311.6", "Each vanguard card has a hand modifier."),
                  ("311.7", life), ("311.8", "A vanguard card is never in a zone."))
    new = edition("2001-01-01", *FILLER, *MANY, ("211.1", reworded),
                  ("311.6", "Each vanguard card has a hand modifier."), ("311.7", odd),
                  ("311.8", "A vanguard card is never in a zone."))
    found, _ = changes_of(old, new)
    assert found[("311.7", "311.7")].change == "modified"
    assert found[("211.1", "211.1")].change == "modified"
    assert ("311.7", "") not in found and ("211.1", "311.7") not in found


def test_a_rule_whose_sentence_is_new_word_for_word_in_a_rule_and_whose_words_are_there_is_merged_into_it():
    """400.2 of May 2009 ("... Text itself is never an effect.") -> 608.1 of July 2009, which continues 416.1:
    its last sentence is there word for word, new to 608.1, and its other sentences are there reworded
    (most of its words by rarity), though too little of its text by sentence likeness to count alone."""
    effects = ("When a spell or ability resolves, it may create one or more one-shot or continuous effects. Static "
               "abilities may create one or more continuous effects. Some effects are replacement effects or "
               "prevention effects.")
    text = ("Spells, activated abilities, and triggered abilities generate effects when they resolve. Static "
            "abilities generate continuous effects. Text itself is never an effect.")
    merged = ("An effect is something that happens in the game as a result of a spell or ability. When a spell, "
              "activated ability, or triggered ability resolves, it may create one or more one-shot or continuous "
              "effects. Static abilities may create one or more continuous effects. Text itself is never an effect.")
    common = ("120.200", "Some spells generate nothing when they resolve.")  # words of no rule alone, as in an edition
    old = edition("2000-01-01", *FILLER, *MANY, common, ("400.2", text), ("416.1", effects))
    new = edition("2001-01-01", *FILLER, *MANY, common, ("608.1", merged))
    found, _ = changes_of(old, new)
    assert found[("416.1", "608.1")].change == "modified"
    assert found[("400.2", "608.1")].change == "merged" and ("400.2", "") not in found


def test_a_subrule_whose_rule_ended_may_take_its_place_in_the_section_reworded():
    """506.3a of 2006 -> 506.3 of 2007: the subgame's section was rewritten (more rules than a hunk between
    the rules that stayed), 506.3 (the library becomes the deck) went, and its subrule on the deck's size
    became the rule 506.3, reworded. A subrule whose rule ended is weighed against the rules added in its
    section, as its rule would have been."""
    old = edition("2000-01-01", *FILLER, *MANY, ("506.1", "Some cards allow players to play a Magic subgame."),
                  ("506.2", "Any main-game abilities that trigger while the subgame is in progress aren't put onto "
                            "the stack until the subgame is completed."),
                  ("506.2a", "The subgame proceeds like a normal game. Randomly determine which player goes first."),
                  ("506.3", "To start the subgame, each player removes his or her library from the game face down."),
                  ("506.3a", "A player's deck in the subgame may have less than the minimum number of cards. If a "
                             "player's deck contains less than seven cards, the player will lose the game as soon "
                             "as it starts, even if he or she mulligans."),
                  ("506.4", "All objects in the main game are considered outside the subgame."))
    new = edition("2001-01-01", *FILLER, *MANY, ("506.1", "Some cards allow players to play a Magic subgame."),
                  ("506.1a", "A subgame is a completely separate Magic game created by a card's effect."),
                  ("506.1b", "No effects created in either game have any meaning in the other."),
                  ("506.3", "Any rules regarding the size of a player's deck are ignored for the subgame. However, "
                            "because each player draws seven cards when a game begins, any player with fewer than "
                            "seven cards in his or her deck will lose the subgame when state-based actions are "
                            "checked, regardless of any mulligans."),
                  ("506.4", "All objects in the main game are considered outside the subgame."))
    found, _ = changes_of(old, new)
    assert found[("506.3a", "506.3")].change == "modified"
    assert ("", "506.3") not in found and ("506.3", "") in found


def test_a_rule_whose_subrules_all_went_under_a_rule_that_continues_another_is_merged_into_it():
    """700.8 of 2020 ("Some cards refer to cards with a name originally printed in a particular set") ended
    while its lists 700.8a-b became 206.3a-b under 206.3 of 2025, which continues 206.3 and says the same:
    merged into it, not removed."""
    errata = ("Previously, a spell or ability that affected cards from a particular set checked for that set's "
              "expansion symbol. These cards have received errata in the Oracle card reference to say they affect "
              "cards with a name originally printed in a particular set.")
    arabian = "One card (City in a Bottle) refers to cards with a name originally printed in the Arabian Nights set."
    antiquities = "One card (Golgothian Sylex) refers to permanents with a name originally printed in Antiquities."
    old = edition("2000-01-01", *FILLER, *MANY, ("206.3", errata + " See rule 700.8 for details."),
                  ("700.8", "Some cards refer to cards with a name originally printed in a particular set."),
                  ("700.8a", arabian), ("700.8b", antiquities))
    new = edition("2001-01-01", *FILLER, *MANY, ("206.3", errata), ("206.3a", arabian), ("206.3b", antiquities))
    found, _ = changes_of(old, new)
    assert found[("700.8a", "206.3a")].change in ("unchanged", "renumbered")
    assert found[("700.8", "206.3")].change == "merged" and ("700.8", "") not in found



TIE = ("If an effect could result in a tie, the text of the spell or ability that created the effect will specify "
       "what to do in the event of a tie. The game has no default for ties.")


def test_a_glossary_entry_whose_text_a_continuing_rule_prints_is_merged_into_it():
    """July 2009: the glossary's "Tie" printed rule 413.2j word for word; the entry went and the rule went on
    as 608.5. The entry's text lives on there: merged into it, not removed."""
    from test_align import rule
    old = edition("2000-01-01", *FILLER, *MANY, ("413.2j", TIE)) + [rule("2000-01-01", "Tie", TIE, "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY, ("608.5", TIE))
    found, _ = changes_of(old, new)
    assert found[("413.2j", "608.5")].change == "unchanged"
    assert found[("Tie", "608.5")].change == "merged" and ("Tie", "") not in found


def test_a_rule_whose_text_a_continuing_glossary_entry_prints_is_merged_into_it():
    """July 2009: threshold became an ability word; its rule 502.23a ("Threshold used to be a keyword
    ability ...") went, and the glossary's "Threshold" now says it."""
    from test_align import rule
    said = "Threshold used to be a keyword ability. It is now an ability word and has no rules meaning."
    old = edition("2000-01-01", *FILLER, *MANY, ("502.23", "Threshold"), ("502.23a", said)) + [
        rule("2000-01-01", "Threshold", "An ability word. See rule 502.23.", "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY) + [
        rule("2001-01-01", "Threshold", "An ability word. " + said, "glossary")]
    found, _ = changes_of(old, new)
    assert found[("502.23a", "Threshold")].change == "merged" and ("502.23a", "") not in found


def test_a_rule_whose_only_traced_sentence_is_new_in_a_continuing_rule_is_merged_into_it():
    """214.5 of May 2009 -> 110.6 of July 2009: of "Every permanent has a value in each of three status
    categories: tapped/untapped, flipped/unflipped, and face up/face down ...", only the list of categories
    is found in the new edition, new to 110.6 (which continues 510.1): where its text went, it went. (As in
    a real edition, its words are used by other rules too: none of them names it alone.)"""
    status = [(f"111.{k}", text) for k, text in enumerate((
        "By default, every permanent has one value for each of its three status categories.",
        "For more information on tapped and untapped permanents, see rule 701.",
        "A flipped or unflipped permanent comes into play face up unless an effect says otherwise.",
        "Every face-down permanent comes into play with a default value; see rule 701 for more information.",
        "Three status categories: a permanent may be tapped, flipped or face down."), 1)]
    old = edition("2000-01-01", *FILLER, *MANY, *status,
                  ("214.5", "Every permanent has a value in each of three status categories: tapped/untapped, "
                            "flipped/unflipped, and face up/face down. By default, a permanent comes into play "
                            "untapped, unflipped, and face up. For more information, see rule 510."),
                  ("510.1", "A permanent's status is its physical state."))
    new = edition("2001-01-01", *FILLER, *MANY, *status,
                  ("110.6", "A permanent's status is its physical state. There are four status categories, each "
                            "of which has two possible values: tapped/untapped, flipped/unflipped, face up/face "
                            "down, and phased in/phased out."))
    found, _ = changes_of(old, new)
    assert found[("510.1", "110.6")].change == "modified"
    assert found[("214.5", "110.6")].change == "merged" and ("214.5", "") not in found


def test_a_new_term_named_like_several_ended_terms_alike_is_none_of_them_renamed():
    """2005: "Enchant" replaced "Enchant Artifact", "Enchant Creature", "Enchant Enchantment" ...; its name and
    definition are as near one as another, so it renames none (it was "renamed from Enchant Enchantment")."""
    from test_align import rule
    local = "An enchant {0} is a local enchantment. It can enchant only a permanent that's {1} {0}. See also Local."
    old = edition("2000-01-01", *FILLER) + [
        rule("2000-01-01", f"Enchant {name.title()}", local.format(name, article), "glossary")
        for name, article in (("artifact", "an"), ("creature", "a"), ("enchantment", "an"), ("land", "a"))]
    new = edition("2001-01-01", *FILLER) + [
        rule("2001-01-01", "Enchant", "Enchant is a static ability, written Enchant [permanent or player]. The enchant "
             "ability restricts what an Aura spell can target and what an Aura can enchant. See rule 502.45.",
             "glossary")]
    found, _ = changes_of(old, new)
    assert found[("", "Enchant")].change == "added"
    assert all(found[(f"Enchant {name}", "")].change == "removed" for name in ("Artifact", "Creature", "Enchantment"))


SACRIFICE = ("To sacrifice a permanent, its controller moves it from the in-play zone directly to its owner's "
             "graveyard. A player can't sacrifice something that isn't a permanent.")


def test_a_new_rule_that_copies_what_a_glossary_entry_still_says_of_its_term_is_a_piece_of_it():
    """2007: the keyword actions got rules of their own (501.6a "To sacrifice a permanent ..."), copied from the
    glossary entries, which kept their text: not new text, a piece of the entry."""
    from test_align import rule
    entry = SACRIFICE + " Sacrificing a permanent doesn't destroy it."
    old = edition("2000-01-01", *FILLER, *MANY) + [rule("2000-01-01", "Sacrifice", entry, "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY, ("501.6", "Sacrifice"), ("501.6a", SACRIFICE)) + [
        rule("2001-01-01", "Sacrifice", entry, "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Sacrifice", "501.6a")].change == "split"
    assert found[("Sacrifice", "Sacrifice")].change == "unchanged"


def test_a_new_rule_on_the_pattern_of_an_entry_that_speaks_of_another_thing_is_new():
    """2005: convoke's 502.46b "Convoke can't reduce the cost to play a spell to less than 0." is on the
    pattern of a sentence of the entry "Affinity", which went on; it is convoke's rule, not affinity's text."""
    from test_align import rule
    entry = ("Affinity is a static ability. The affinity ability only reduces generic mana costs. It can't reduce "
             "the cost to play a spell to less than 0.")
    old = edition("2000-01-01", *FILLER, *MANY) + [rule("2000-01-01", "Affinity", entry, "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY, ("502.46", "Convoke"),
                  ("502.46b", "Convoke can't reduce the cost to play a spell to less than 0.")) + [
        rule("2001-01-01", "Affinity", entry, "glossary")]
    found, _ = changes_of(old, new)
    assert found[("", "502.46b")].change == "added"


def test_a_term_under_two_names_goes_on_under_the_one_kept_not_its_obsolete_pointer():
    """2005: "Legend, Legendary" went on as "Legendary" (its sentence word for word); "Legend (Obsolete)"
    is a new pointer for the old creature type. A name the entry was listed under is its name."""
    from test_align import rule
    old = edition("2000-01-01", *FILLER) + [
        rule("2000-01-01", "Legend, Legendary", 'Legendary is a supertype that may apply to any type. Legend is '
             'an old creature type. If two legendary permanents with the same name are in play, all are put into '
             'their owners\' graveyards.', "glossary")]
    new = edition("2001-01-01", *FILLER) + [
        rule("2001-01-01", "Legend (Obsolete)", "Legend was a creature type; cards with it now have the legendary "
             "supertype.", "glossary"),
        rule("2001-01-01", "Legendary", "Legendary is a supertype that may apply to any type. See rule 420.5.",
             "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Legend, Legendary", "Legendary")].change == "renamed"



def test_a_twin_template_of_another_keyword_is_not_merged():
    """Two keywords written on one template name different things: the one that ended is removed, not merged
    into the other, which says nearly all of it."""
    flash = "Flash is a static ability that functions in any zone from which you could cast the spell."
    old = edition("2000-01-01", *FILLER, *MANY, ("702.8a", flash),
                  ("702.72a", flash.replace("Flash", "Changeling")))
    new = edition("2001-01-01", *FILLER, *MANY, ("702.8a", flash))
    found, _ = changes_of(old, new)
    assert found[("702.72a", "")].change == "removed"


def test_a_sentence_on_the_template_of_one_kept_is_a_split_piece_when_it_went_elsewhere():
    """403.5 of May 2009 said the timing of "any time you could play a sorcery" and, on the same template, of
    "... an instant"; July 2009 kept the sorcery sentence in 602.5d and gave the instant one its own rule,
    602.5e. The instant sentence is alike the sorcery one 602.5d kept, but a whole sentence is the
    counterpart of one sentence only: 602.5e is a split piece of 403.5, not added."""
    timing = ('Activated abilities that read "Play this ability only any time you could play {a}" mean the player '
              'must follow the timing rules for playing {b} spell, though the ability is not actually {a}.')
    sorcery, instant = timing.format(a="a sorcery", b="a sorcery"), timing.format(a="an instant", b="an instant")
    cards = [(f"300.{k}", f"Cards of the {k}th kind include instant and sorcery cards.") for k in range(1, 6)]
    old = edition("2000-01-01", *FILLER, *MANY, *cards, ("403.5", sorcery + " " + instant))
    new = edition("2001-01-01", *FILLER, *MANY, *cards, ("602.5d", sorcery.replace("Play this", "Activate this")),
                  ("602.5e", instant.replace("Play this", "Activate this")))
    found, _ = changes_of(old, new)
    assert found[("403.5", "602.5d")].change == "modified"
    assert found[("403.5", "602.5e")].change == "split" and ("", "602.5e") not in found


def test_a_rule_that_speaks_of_a_term_and_holds_some_of_what_its_entry_lost_is_a_piece_of_it():
    """July 2009: the entry "Echo" was cut down, and its sentence on the Urza block's errata went into 702.27b,
    reworded, beside new text: less than half of 702.27b, but as much as makes a piece in the rules (SHARE), in
    a rule that speaks of echo. A split piece of the entry, not added."""
    from test_align import rule
    errata = ("Urza block cards with the echo ability were printed without an echo cost; these cards have been "
              "given errata to have an echo cost equal to their mana cost.")
    entry = ('Echo is a triggered ability. "Echo [cost]" means "At the beginning of your upkeep, if this permanent '
             'came under your control since the beginning of your last upkeep, sacrifice it unless you pay its echo '
             'cost." ')
    piece = ("Urza block cards with the echo ability were printed without an echo cost. These cards have been "
             "given errata in the Oracle card reference; each one now has an echo cost equal to its mana cost. A "
             "permanent that phases in waits for its next upkeep.")
    old = edition("2000-01-01", *FILLER, *MANY) + [rule("2000-01-01", "Echo", entry + errata, "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY, ("702.27b", piece)) + [
        rule("2001-01-01", "Echo", "A keyword ability that makes you pay a cost again. See rule 702.27.", "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Echo", "702.27b")].change == "split" and ("", "702.27b") not in found


def test_a_term_whose_definition_begins_with_an_ended_term_is_that_term_renamed():
    """July 2009: "Game Action" went, and "Turn-Based Action" came, defined as "Game actions that happen
    automatically ...": the ended term under a new name, renamed, not removed and added. A one-word name begins
    too many definitions to tell ("Order" / "The order, announced ...")."""
    from test_align import rule
    old = edition("2000-01-01", *FILLER, *MANY) + [
        rule("2000-01-01", "Game Action", "Several steps contain actions that don't use the stack. These actions are "
             "game actions: untapping, drawing a card, declaring attackers.", "glossary"),
        rule("2000-01-01", "Order", "Putting objects in a sequence, as a player does with triggered abilities.",
             "glossary")]
    new = edition("2001-01-01", *FILLER, *MANY) + [
        rule("2001-01-01", "Turn-Based Action", "Game actions that happen automatically when certain steps or "
             "phases begin. See rule 703.", "glossary"),
        rule("2001-01-01", "Damage Assignment Order", "The order, announced during the declare blockers step, in "
             "which an attacking creature assigns its combat damage.", "glossary")]
    found, _ = changes_of(old, new)
    assert found[("Game Action", "Turn-Based Action")].change == "renamed"
    assert ("Order", "Damage Assignment Order") not in found


def test_a_rule_of_a_mechanic_the_new_edition_lacks_is_not_merged_into_its_model():
    """Station (2026) was written on level up's model: 721.2 says of the station symbol what 711.2 says of the
    level symbol. Compared backwards, into 2025, station's section ends whole: its rules are removed, not
    merged into level up's, however alike."""
    level = ("A level symbol represents a static ability. Any abilities printed within the same text box striation "
             "as a level symbol are part of its static ability, and so is the power and toughness box there.")
    striation = ("The text box striations have no game significance other than showing which abilities are "
                 "associated with which level symbol.")
    old = edition("2000-01-01", *FILLER, *MANY, ("711.1", "Leveler cards have striated text boxes."),
                  ("711.2", level), ("711.3", striation), ("721.1", "Station cards have striated text boxes too."),
                  ("721.2", level.replace("A level", "A station").replace("a level", "a station")),
                  ("721.3", striation.replace("level", "station")))
    new = edition("2001-01-01", *FILLER, *MANY, ("711.1", "Leveler cards have striated text boxes."),
                  ("711.2", level), ("711.3", striation))
    found, _ = changes_of(old, new)
    assert found[("721.2", "")].change == "removed" and found[("721.3", "")].change == "removed"
