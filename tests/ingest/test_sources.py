
import pytest

from pipeline.errors import NotRulesError, SourceError
from pipeline.ingest.discover import ingest, read_source
from pipeline.ingest.manifest import Entry, read_manifest
from pipeline.ingest.adapters import ADAPTERS
from pipeline.ingest.adapters.copy import language_of
from pipeline.ingest.adapters.official import effective_date
from pipeline.segment import read
from conftest import ARCHIVE, DATA, RAW, SEEDS, archive_files, needs_archive

ARCHIVE_DATES = {p: p for p in ("2003-10-01", "2005-10-01", "2006-07-15", "2007-10-01", "2008-02-01",
                                "2009-05-01", "2009-07-11", "2011-06-17", "2020-06-01", "2025-06-06",
                                "2026-01-16")} | {"2013-04-29": "2013-05-01"}


def clean_seed(key):
    path = RAW / f"{SEEDS[key]}.txt"
    entry = read_manifest(RAW)[path.resolve()]
    return read.clean(path, entry)


def clean_fixture(name, fmt, kind="rulings page"):
    path = DATA / name
    return read.clean(path, Entry(path.resolve(), fmt, kind, "2008-03-17", None, "en", "", "", 1))


def kept_text(clean):
    return clean.content


def dropped(clean, reason):
    return [d.text for d in clean.discards if d.reason == reason]


@pytest.mark.parametrize("key", sorted(SEEDS))
def test_every_seed_character_is_accounted_for(key):
    clean = clean_seed(key)
    assert clean.chars_total == len(clean.source.text)
    assert clean.chars_kept + sum(d.size for d in clean.discards) == clean.chars_total


@needs_archive
@pytest.mark.parametrize("path", archive_files(), ids=lambda p: p.stem)
def test_archive_edition_dates_and_accounting(path):
    doc = read_source(path, None)
    clean = ADAPTERS["official"](doc)
    assert clean.edition == ARCHIVE_DATES[path.stem]
    assert clean.chars_kept + sum(d.size for d in clean.discards) == clean.chars_total == len(doc.text)
    assert clean.complete
    if path.stem == "2013-04-29":
        assert any("file name says 2013-04-29" in w for w in doc.warnings)
    # front matter, contents and credits are told apart from the rules
    reasons = clean.discarded_by_reason()
    assert {"table of contents", "credits and legal notices"} <= set(reasons)
    assert clean.paragraphs[0].text[:2] == "1."


@pytest.mark.parametrize("text, expected", [
    ("These rules are effective as of June 17, 2011.", "2011-06-17"),
    ("These rules are current as of October 1, 2003.", "2003-10-01"),
    ("This page is current as of Comprehensive Rules June 2011.", None),
    ("effective as of Sept. 31, 2011", None),
])
def test_effective_date(text, expected):
    assert effective_date(text) == expected


def test_not_rules_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("Shopping list\n\n1. Milk\n2. Eggs\n", encoding="utf-8")
    with pytest.raises(SourceError, match="not a Comprehensive Rules edition"):
        read_source(path, None)


def test_rejections_do_not_stop_the_run(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
    (tmp_path / "notes.txt").write_text("not rules", encoding="utf-8")
    result = ingest(RAW, [tmp_path])
    reasons = {r.path.name: r.reason for r in result.rejections}
    assert reasons == {"empty.txt": "empty file", "image.png": "binary file (NUL bytes), not text",
                       "notes.txt": reasons["notes.txt"]}
    assert "not a Comprehensive Rules edition" in reasons["notes.txt"]
    assert len(result.docs) == 5


def test_official_recognised_by_content_whatever_the_name(tmp_path):
    text = ("Magic: The Gathering Comprehensive Rules\r\rThese rules are effective as of May 1, 2009.\r\r"
            "1. Game Concepts\r\r100. General\r\r100.1. These Magic rules apply.\r\rGlossary\r\r"
            "Ability\rText on an object.\r\rCredits\r\rSomeone\r")
    path = tmp_path / "cr_2006-07-15.txt"
    path.write_text(text, encoding="utf-8", newline="")
    doc = read_source(path, None)
    assert doc.edition == "2009-05-01"
    assert doc.warnings == ("file name says 2006-07-15 but the text is effective 2009-05-01: using 2009-05-01",)
    clean = ADAPTERS["official"](doc)
    assert [p.text for p in clean.paragraphs] == ["1. Game Concepts", "100. General", "100.1. These Magic rules apply.",
                                                 "Ability", "Text on an object."]


def test_not_rules_error_type():
    path = DATA / "wiki_page.html"
    doc = read_source(path, Entry(path.resolve(), "wiki-html", "commentary", None, None, "en", "", "", 1))
    with pytest.raises(NotRulesError):
        ADAPTERS["official"](doc)


# --- 000: the rulings-search page ------------------------------------------------------------

def test_rulings_text_drops_banner_and_table_residue():
    clean = clean_seed("000")
    assert len(dropped(clean, "page header/footer")) == 2
    assert all(set(t) <= {"|", " "} for t in dropped(clean, "table residue"))
    assert "This search based on" not in kept_text(clean)
    assert "212.3 - Creatures  212.2a - A player" in kept_text(clean)  # segmentation splits it, by number


def test_rulings_html_fixture_matches_the_text_form():
    clean = clean_fixture("rulings_page.html", "rulings-html")
    content = kept_text(clean)
    assert "<br>" not in content and "&quot;" not in content and "doSearch" not in content
    assert "212.1a - Cards, tokens, permanents, and spells can all have card types, supertypes, and subtypes." \
        in content
    assert "Abilities don't have card types" in content  # &#39; decoded
    assert 'long dash: "Artifact — Equipment."' in content  # &#8212; decoded
    assert dropped(clean, "table header") == ["Next  Rules"]
    assert clean.chars_kept + sum(d.size for d in clean.discards) == clean.chars_total == len(clean.source.text)


# --- 001/003: copies with a foreign-language interface -----------------------------------------

def test_copy_drops_the_interface_by_language():
    clean = clean_seed("001")
    interface = dropped(clean, "foreign-language interface (ru)")
    assert "Добавить отзыв" in interface and len(interface) == 4
    assert dropped(clean, "interface residue (no words)") == ["0", "×"]
    assert not any("\u0400" <= ch <= "\u04ff" for ch in kept_text(clean))
    assert kept_text(clean).startswith("Example: An ability reads")


def test_copy_keeps_short_english_headings():
    clean = clean_seed("003")
    assert "212.5. Instants" in kept_text(clean)
    assert clean.discarded_by_reason() == {"line breaks": 60}


@pytest.mark.parametrize("text, expected", [
    ("Добавить отзыв", "ru"),
    ("Fügen Sie eine Bewertung hinzu und teilen Sie Ihre Meinung", "de"),
    ("212.5. Instants", "en"),  # near miss: short English is not French
    ("Example: An ability reads, “All lands are 1/1 creatures.”", "en"),
    ("0", None),
    ("×", None),
])
def test_language_of(text, expected):
    assert language_of(text, "en") == expected


# --- 002: the wiki page ----------------------------------------------------------------------

def test_wiki_text_strips_chrome_keeps_commentary():
    clean = clean_seed("002")
    content = kept_text(clean)
    for chrome in ("Banner.png", "Jump to: navigation, search", "Personal tools", "Toolbox",
                   "updated by Nightcrawler", "From Rules"):
        assert chrome not in content
    assert "[CR 204.1a]" in content and "{{CR|204.1a}" in content and "[CR 300.2a]" in content
    assert "Example. An animated Opal Acrolith" in content
    assert "Opal Acrolith" in dropped(clean, "card image captions")
    assert [p.text for p in clean.paragraphs if p.role == "heading"] == ["General"]


def test_wiki_html_fixture():
    clean = clean_fixture("wiki_page.html", "wiki-html", kind="commentary")
    content = kept_text(clean)
    for chrome in ("Personal tools", "Toolbox", "Jump to", "[edit]", "updated by", "Retrieved from",
                   "Categories", "What links here", "last modified", "client-js", "Opal Acrolith.jpg"):
        assert chrome not in content
    assert [p.text for p in clean.paragraphs if p.role == "heading"] == ["General"]
    assert "{{CR|204.1a}" in content and "[CR 300.2a]" in content
    roles = [p.role for p in clean.paragraphs]
    assert roles.count("example-cont") == 1  # the paragraph after the example, before the card image
    assert clean.chars_kept + sum(d.size for d in clean.discards) == clean.chars_total


# --- 004: the Markdown export ----------------------------------------------------------------

def test_markdown_strips_markup_keeps_rules():
    clean = clean_seed("004")
    content = kept_text(clean)
    assert not content.startswith("#") and "*Chapter" not in content and "\n---" not in content
    assert content.startswith("205. Type Line")
    assert dropped(clean, "export metadata (breadcrumb)") == ["*Chapter: Parts of a Card*"]
    basic = [p for p in clean.paragraphs if p.text.startswith("Cards printed in sets prior to the Eighth")]
    assert len(basic) == 1  # the indented paragraph stays a paragraph of its own (inside 205.4c)


@needs_archive
def test_corpus_with_odd_names_duplicates_and_a_mislabelled_file(tmp_path):
    from pipeline import run as stages
    corpus = tmp_path / "my rules"
    corpus.mkdir()
    (corpus / "zzz.txt").write_bytes((ARCHIVE / "2008-02-01.txt").read_bytes())
    (corpus / "CompRules copy (2).TXT").write_bytes((ARCHIVE / "2008-02-01.txt").read_bytes())
    (corpus / "2006-07-15.txt").write_bytes((ARCHIVE / "2003-10-01.txt").read_bytes())
    result = stages.run_datasets(RAW, [corpus], tmp_path / "processed", quiet=True)
    eds = {e.edition: e for e in result.editions}
    assert eds["2008-02-01"].sources == ("CompRules copy (2)", "zzz") and eds["2008-02-01"].complete
    assert eds["2003-10-01"].sources == ("2006-07-15",)
    mislabelled = next(d for d in result.ingested.docs if d.source.source_id == "2006-07-15")
    assert mislabelled.warnings == ("file name says 2006-07-15 but the text is effective 2003-10-01: using 2003-10-01",)
    dup = [r for r in result.rules if r.edition == "2008-02-01" and r.rule_id == "212.1b"]
    assert len(dup) == 1 and dup[0].source == "CompRules copy (2);zzz" and "conflict" not in dup[0].flags
