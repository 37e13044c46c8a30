from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.ingest.clean import compare_form
from pipeline.align.diff import apply_ops, classify_text, substitutions, word_ops
from pipeline.segment.edition import Edition
from pipeline.errors import ManifestError
from pipeline.align.lineage import build, cascades, rule_key
from pipeline.align.overrides import Overrides, read_overrides
from pipeline.records import Rule
from pipeline.segment.rules import kind_of, parent_of
from conftest import needs_archive


def rule(edition, rule_id, text, kind=None, examples=()):
    if kind is None and "." in rule_id and not rule_id[-1].isalpha():
        kind = "section" if len(text.split()) == 1 else "rule"
    kind = kind or kind_of(rule_id, text, False)
    title, body = (text, "") if kind in ("part", "chapter", "section") else ("", text)
    return Rule(edition, edition, rule_id, kind, parent_of(rule_id, kind), title, body, compare_form(text),
                examples=tuple(examples))


def edition(date, *pairs):
    return [rule(date, rid, text) for rid, text in pairs]


def eds(*dates):
    return [Edition(d, "", (d,), True, {}, 0) for d in dates]


def changes_of(old, new, overrides=Overrides()):
    history = build(old + new, eds(old[0].edition, new[0].edition), overrides)
    return {(c.old_rule_id, c.new_rule_id): c for c in history.changes}, history


OLD = [
    ("100.1", "These rules apply to every game of Magic."),
    ("100.2", "Each player needs a deck of at least sixty cards, and small items to represent tokens."),
    ("100.3", "A player may play a land card from his or her hand during a main phase of his or her turn."),
    ("100.4", "An Equipment comes into play just like any other artifact (see rule 100.2)."),
    ("100.5", "The player who wins the game is the player who has won."),
]


@pytest.mark.parametrize("new_text, expected", [
    (OLD[0][1], "unchanged"),
    ("These rules apply to every game of Magic!", "cosmetic"),
    ("These rules apply to every game of “Magic.”", "cosmetic"),
    ("These rules apply, to every game of Magic.", "cosmetic"),  # a comma
    ("These rules apply to every single game of Magic.", "modified"),
])
def test_change_classes_same_number(new_text, expected):
    new = edition("2001-01-01", ("100.1", new_text), *OLD[1:])
    found, _ = changes_of(edition("2000-01-01", *OLD), new)
    assert found[("100.1", "100.1")].change == expected


def test_reference_only_change():
    new = edition("2001-01-01", *OLD[:3], ("100.4", "An Equipment comes into play just like any other artifact "
                                                    "(see rule 100.9)."), OLD[4])
    found, _ = changes_of(edition("2000-01-01", *OLD), new)
    assert found[("100.4", "100.4")].change == "reference"


def test_renumbered_added_removed():
    new = edition("2001-01-01", ("100.1", "A brand new first rule about something else entirely."),
                  ("100.2", OLD[0][1]), ("100.3", OLD[1][1]), ("100.4", OLD[2][1]), ("100.5", OLD[3][1]))
    found, history = changes_of(edition("2000-01-01", *OLD), new)
    assert found[("100.1", "100.2")].change == "unchanged" and found[("100.1", "100.2")].renumbered
    assert found[("", "100.1")].change == "added"
    assert found[("100.5", "")].change == "removed"
    runs = cascades(history.changes)
    assert [r["summary"] for r in runs] == ["100.1–100.4 shifted +1"]


def test_terminology_is_recorded_and_scored_through():
    new = edition("2001-01-01", *OLD[:2], ("100.3", "A player may play a land card from their hand during a main "
                                                    "phase of their turn."), *OLD[3:])
    found, _ = changes_of(edition("2000-01-01", *OLD), new)
    c = found[("100.3", "100.3")]
    assert c.change == "modified" and c.substitutions == (("his or her", "their"), ("his or her", "their"))


def test_split_and_merge():
    long = ("If a spell would be countered, it is put into its owner's graveyard instead of resolving. "
            "A countered ability simply ceases to exist on the stack without any effect at all.")
    old = edition("2000-01-01", ("100.1", long), ("100.2", OLD[1][1]))
    new = edition("2001-01-01", ("100.1", "If a spell would be countered, it is put into its owner's graveyard "
                                          "instead of resolving."),
                  ("100.1a", "A countered ability simply ceases to exist on the stack without any effect at all."),
                  ("100.2", OLD[1][1]))
    found, _ = changes_of(old, new)
    assert found[("100.1", "100.1a")].change == "split"
    merged_old = edition("2000-01-01", ("100.1", "If a spell would be countered, it is put into its owner's "
                                                 "graveyard instead of resolving."),
                         ("100.1a", "A countered ability simply ceases to exist on the stack without any effect."),
                         ("100.2", OLD[1][1]))
    merged_new = edition("2001-01-01", ("100.1", long), ("100.2", OLD[1][1]))
    found, _ = changes_of(merged_old, merged_new)
    assert found[("100.1a", "100.1")].change == "merged"


def test_twins_are_not_swapped_when_renumbered():
    old = edition("2000-01-01",
                  ("212.5", "Instants"), ("212.5a", "A player may play an instant card from his or her hand."),
                  ("212.5b", "When an instant spell resolves, the actions stated in its rules text are followed. "
                             "Then it's put into its owner's graveyard."),
                  ("212.7", "Sorceries"), ("212.7a", "A player may play a sorcery card from his or her hand."),
                  ("212.7b", "When a sorcery spell resolves, the actions stated in its rules text are followed. "
                             "Then it's put into its owner's graveyard."))
    new = edition("2001-01-01",
                  ("307", "Sorceries"), ("307.1", "A player may cast a sorcery card from his or her hand."),
                  ("307.2", "When a sorcery spell resolves, the actions stated in its rules text are followed. "
                            "Then it's put into its owner's graveyard."),
                  ("304", "Instants"), ("304.1", "A player may cast an instant card from his or her hand."),
                  ("304.2", "When an instant spell resolves, the actions stated in its rules text are followed. "
                            "Then it's put into its owner's graveyard."))
    found, _ = changes_of(old, new)
    assert ("212.5b", "304.2") in found and ("212.7b", "307.2") in found
    assert ("212.5", "304") in found and ("212.7", "307") in found


def test_overrides_force_and_forbid(tmp_path):
    old = edition("2000-01-01", *OLD)
    new = edition("2001-01-01", *OLD)
    force = Overrides(force=frozenset({("2000-01-01", "2001-01-01", "100.1", "100.5")}))
    found, _ = changes_of(old, new, force)
    assert found[("100.1", "100.5")].method == "override"
    forbid = Overrides(forbid=frozenset({("2000-01-01", "2001-01-01", "100.2", "100.2")}))
    reworded = edition("2001-01-01", *OLD[:1], ("100.2", OLD[1][1] + " Really."), *OLD[2:])
    found, _ = changes_of(old, reworded, forbid)
    assert ("100.2", "100.2") not in found and found[("100.2", "")].change == "removed"
    (tmp_path / "overrides.toml").write_text('[[force]]\nfrom = "2000-01-01"\nto = "2001-01-01"\nold = "1"\n'
                                             'new = "2"\nwhy = "x"\n', encoding="utf-8")
    with pytest.raises(ManifestError, match="unknown key 'why'") as e:
        read_overrides(tmp_path)
    assert e.value.line == 6


texts = st.text(alphabet=st.sampled_from("abc xyz.,'’“”-—\n"), max_size=60)


@given(texts, texts)
@settings(max_examples=300)
def test_applying_word_ops_gives_the_new_text(a, b):
    assert apply_ops(a, word_ops(a, b)) == b


@given(st.lists(st.sampled_from([t for _, t in OLD]), min_size=1, max_size=5, unique=True))
@settings(max_examples=30, deadline=None)
def test_an_edition_against_itself_is_all_unchanged(chosen):
    pairs = [(f"100.{i + 1}", t) for i, t in enumerate(chosen)]
    found, _ = changes_of(edition("2000-01-01", *pairs), edition("2001-01-01", *pairs))
    assert {c.change for c in found.values()} == {"unchanged"} and not any(c.renumbered for c in found.values())


@pytest.mark.parametrize("a, b, expected", [
    ("comes into play", "enters the battlefield", (("comes into play", "enters the battlefield"),)),
    ("see rule 212.2h.", "see rule 301.5c.", ()),  # numbers are references, not wording
    ("tribal spell", "kindred spell", (("tribal", "kindred"),)),
])
def test_substitutions(a, b, expected):
    assert substitutions(word_ops(a, b)) == expected


def test_classify_reference_and_cosmetic():
    assert classify_text("see rule 212.2h.", "see rule 301.5c.") == "reference"
    assert classify_text("can’t", "can't") == "cosmetic"
    assert classify_text("{oT}: Add {oG} to your mana pool.", "{T}: Add {G} to your mana pool.") == "cosmetic"
    assert classify_text("{oT}: Add {oG}.", "{T}: Add {W}.") == "modified"
    # a placeholder is not the words it stands for (2025: cards say "this creature" now)
    assert classify_text('Cycling means "Discard [this card]."', 'Cycling means "Discard this card."') == "modified"


# --- the archive ---------------------------------------------------------------------------

CHAINS = [("212.1b", "204.1a", "205.1a"), ("212.1d", "204.4b", "205.4b"), ("212.1e", "204.3d", "205.3e")]


@needs_archive
@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: "->".join(c))
def test_archive_chains_come_out_whole(archive_run, chain):
    result, _ = archive_run
    lineage = {(k[0], k[2]): v for k, v in result.history.lineage.items() if k[1] not in ("glossary",)}
    ids = {lineage[("2009-05-01", chain[0])], lineage[("2009-07-11", chain[1])], lineage[("2011-06-17", chain[1])],
           lineage[("2013-05-01", chain[2])], lineage[("2026-01-16", chain[2])], lineage[("2003-10-01", chain[0])]}
    assert len(ids) == 1


@needs_archive
def test_archive_twins_and_headings(archive_run):
    result, _ = archive_run
    pairs = {(c.old_rule_id, c.new_rule_id): c for c in result.history.changes
             if (c.from_edition, c.to_edition) == ("2009-05-01", "2009-07-11")}
    assert ("212.5b", "304.2") in pairs and ("212.7b", "307.2") in pairs
    assert ("212.5b", "307.2") not in pairs and ("212.7b", "304.2") not in pairs
    assert pairs[("212", "204")].change == "merged"  # 212 became 204 "Type Line" (with old 205) and 301-308
    assert ("205", "204") in pairs and ("212.2", "301") in pairs


def test_a_chapter_that_became_a_part_of_its_title_continues_in_it():
    """July 2009: chapter 217 "Zones" became part 4 "Zones", its rules spread over chapters 400-408."""
    stay = [("200", "General"), ("200.1", "The parts of a card are name, mana cost, and type line."),
            ("200.2", "Some cards have no mana cost."), ("201", "Name"), ("201.1", "The name of a card is printed on "
                                                                             "its upper left corner."),
            ("201.2", "Two objects have the same name if their names are identical.")]
    old = edition("2009-05-01", ("2", "Parts of the Game"), *stay, ("217", "Zones"),
                  ("217.1", "A zone is a place where objects can be during a game."),
                  ("217.2", "The library is where a player's draw pile is kept."),
                  ("217.3", "The graveyard is a player's discard pile."))
    new = edition("2009-07-11", ("2", "Parts of the Game"), *stay, ("4", "Zones"), ("400", "General"),
                  ("400.1", "A zone is a place where objects can be during a game."), ("401", "Library"),
                  ("401.1", "The library is where a player's draw pile is kept."), ("404", "Graveyard"),
                  ("404.1", "The graveyard is a player's discard pile."))
    found, _ = changes_of(old, new)
    assert found[("217", "4")].change == "unchanged" and found[("217", "4")].renumbered
    assert ("217", "") not in found


@needs_archive
def test_archive_every_record_has_a_lineage(archive_run):
    result, _ = archive_run
    keyed = result.history.lineage
    assert all(rule_key(r) in keyed for r in result.rules if r.kind != "commentary")
    assert all(result.history.last_changed[rule_key(r)] <= r.edition for r in result.rules if r.kind != "commentary")


# --- the pairs cache ------------------------------------------------------------------------

def _three_editions():
    """Unchanged rules (one with examples), a renumbering, a rewording, a split and an added rule."""
    long = ("If a spell would be countered, it is put into its owner's graveyard instead of resolving. "
            "A countered ability simply ceases to exist on the stack without any effect at all.")
    first = edition("2000-01-01", *OLD, ("100.6", long)) + [rule("2000-01-01", "100.7", "Shuffle.", examples=(
        "Example: A player shuffles.", "Example: Another."))]
    second = edition("2001-01-01", ("100.1", OLD[0][1]), ("100.2", OLD[2][1].replace("his or her", "their")),
                     ("100.3", OLD[1][1]), ("100.4", OLD[3][1]), ("100.6", long[:88]), ("100.6a", long[89:]),
                     ("100.8", "A new rule about something else entirely.")) + [first[-1]]
    second[-1] = replace(second[-1], edition="2001-01-01")
    third = [replace(r, edition="2002-01-01") for r in second]
    return first + second + third, eds("2000-01-01", "2001-01-01", "2002-01-01")


def test_pairs_from_the_cache_are_what_aligning_gives(tmp_path):
    """A cached pair (unchanged rows stored as null, rebuilt from the records) gives the same history;
    the cache is keyed by content, so the second walk aligns nothing."""
    from pipeline.cache import Cache
    rules, editions = _three_editions()
    fresh = build(rules, editions)
    cache = Cache(tmp_path / "c.sqlite", "pairs", "code")
    assert build(rules, editions, cache=cache).changes == fresh.changes
    stored = [v for (v,) in cache.db.execute("SELECT value FROM entries")]
    assert len(stored) == 2 and all("null" in v for v in stored)
    with pytest.MonkeyPatch.context() as m:
        m.setattr("pipeline.align.lineage.align", lambda *a: pytest.fail("aligned again"))
        again = build(rules, editions, cache=cache)
    assert again.changes == fresh.changes and again.lineage == fresh.lineage


def test_independent_pairs_are_aligned_beforehand_in_forked_workers(tmp_path, monkeypatch):
    """With two cores, the pairs of consecutive complete editions are aligned in forked processes before
    the walk, which finds them in the cache: the same history, and the walk aligns nothing itself."""
    import os
    from pipeline.align import lineage
    from pipeline.cache import Cache
    rules, editions = _three_editions()
    fresh = build(rules, editions)
    parent, real = os.getpid(), lineage.align

    def only_in_workers(*args):
        if os.getpid() == parent:
            pytest.fail("aligned in the walk")
        return real(*args)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(lineage, "align", only_in_workers)
    again = build(rules, editions, cache=Cache(tmp_path / "c.sqlite", "pairs", "code"))
    assert again.changes == fresh.changes and again.lineage == fresh.lineage


def test_a_pair_is_keyed_by_what_alignment_reads():
    from pipeline.align.lineage import Digests
    rules, _ = _three_editions()
    digests = Digests()
    base = digests.of(rules[:3])
    assert Digests().of(list(rules[:3])) == base  # the same content, whatever the objects
    for change in ({"edition": "1999-01-01"}, {"flags": ("partial",)}, {"text": "x"}, {"examples": ("e",)}):
        assert digests.of([replace(rules[0], **change)] + rules[1:3]) != base
    assert digests.of([replace(rules[0], line_start=99, source="elsewhere")] + rules[1:3]) == base


def test_the_unchanged_shortcut_is_what_the_diff_gives():
    from pipeline.align.diff import change_between
    from pipeline.align.lineage import _same_words, _unchanged
    from pipeline.records import Match
    rules, _ = _three_editions()
    rules += [rule(e, name, "A term, defined.", kind="glossary") for e in ("2000-01-01", "2001-01-01")
              for name in ("Tribal", "Kindred")]
    assert not _same_words(rules[-4], rules[-1])  # a renamed term is noted, not unchanged
    for a in rules:
        for b in rules:
            if a.edition < b.edition and _same_words(a, b):
                m = Match(0, 0, 97.5, "moved", True)
                assert _unchanged(a, b, m) == change_between(a, b, "", m)


@settings(max_examples=200, deadline=None)
@given(*[st.text(alphabet="ab .,’'\n", max_size=30)] * 4,
       st.lists(st.text(alphabet="ab .", max_size=12), max_size=3), st.lists(st.text(alphabet="ab .", max_size=12),
                                                                             max_size=3))
def test_the_redlines_of_a_change_are_those_of_its_records(title_a, title_b, text_a, text_b, examples_a, examples_b):
    """redlines(old, new, change) reads the change's operations: the lines worked out from the records."""
    from pipeline.align.diff import change_between, redlines
    from pipeline.records import Match
    old = replace(rule("2000-01-01", "100.1", text_a, kind="rule", examples=examples_a), title=title_a)
    new = replace(rule("2001-01-01", "100.1", text_b, kind="rule", examples=examples_b), title=title_b)
    change = change_between(old, new, "", Match(0, 0, 90.0, "fuzzy"))
    assert redlines(old, new, change) == redlines(old, new)
