"""The datasets' schema, written once: column order for the exports, the Frictionless Data
Package descriptor (processed/datapackage.json) and the data dictionary (processed/README.md)."""
from __future__ import annotations

from dataclasses import dataclass

TITLE = "Magic: The Gathering Comprehensive Rules, rule by rule and edition by edition"
DESCRIPTION = ("Rules, their lineages across editions, every change with word-level operations, references, "
               "citations, glossary, terminology and the sources' character accounting.")
LICENCE = "The rules texts are Wizards of the Coast's, used under its Fan Content Policy."


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str  # Frictionless type (string | integer | number | boolean | date | array), or edition:
    # an edition's identifier, its date as YYYY-MM-DD text in every format (a string to filter and join on)
    description: str


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    description: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = ()  # (fields, table, fields)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def _cols(*specs: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*spec) for spec in specs)


EDITION_FK = ((("edition",), "editions", ("edition",)),)
LINEAGE_FK = ((("lineage_id",), "lineages", ("lineage_id",)),)

TABLES = (
    Table("rules", "One row per rule (heading, glossary entry, ruling, commentary note) per edition.", _cols(
        ("edition", "edition", "Date of the edition the record belongs to (a range's start for a dated range)."),
        ("source", "string", "Source id(s), ';'-joined; the first is the one the text and lines come from."),
        ("rule_id", "string", "Number as printed, without a trailing period; glossary: the term; commentary: "
                              "<source>.c<n>."),
        ("occurrence", "integer", "1, or 2 for the second printing of a number printed twice."),
        ("kind", "string", "part, chapter, section, rule, subrule, ruling, glossary, commentary or fragment."),
        ("parent", "string", "The rule_id it belongs under (212.2a -> 212.2 -> 212 -> 2)."),
        ("lineage_id", "string", "The rule's identity across editions: where it first appeared (edition:rule_id)."),
        ("last_changed", "edition", "Edition of the lineage's last wording change (or its first edition)."),
        ("title", "string", "Heading title or glossary term."),
        ("text", "string", "Readable text, unwrapped, original typography, citation tags removed."),
        ("examples", "array", "Every example, in order (JSON list of strings)."),
        ("sentences", "array", "The sentences of `text` (of `title` when `text` is empty) as character offsets: "
                               "JSON list of [start, end] (Python's text[start:end]); a sentence that is not a "
                               "piece of it, as its own string. Datasette's canned query `sentences` spells them out."),
        ("references", "array", "Rule ids the text points to, ranges expanded (JSON list)."),
        ("citations", "array", "Citation tags: JSON list of {source, value, text, part}."),
        ("rule_flags", "array", "partial, truncated, duplicate, conflict, placeholder, orphan (JSON list); not "
                                "`flags`, which would hide pandas' `DataFrame.flags`."),
        ("variants", "array", "Other sources' differing texts, when flagged conflict (JSON list)."),
        ("line_start", "integer", "First line of the record in its source file."),
        ("line_end", "integer", "Last line of the record in its source file."),
    ), ("edition", "kind", "rule_id", "occurrence"), EDITION_FK + LINEAGE_FK),
    Table("changes", "One row per matched or unmatched rule per pair of editions, but for a rule that goes on "
                     "word for word under the same number (unchanged, method same): the rules table says that by "
                     "its lineage_id in both editions; the database's view changes_all has those rows too "
                     "(processed/README.md: how to get them).", _cols(
        ("from_edition", "edition", "Edition the old text comes from."),
        ("to_edition", "edition", "Edition the new text comes from."),
        ("lineage_id", "string", "Lineage of the rule (for a merge, the lineage that ends)."),
        ("old_rule_id", "string", "Number in the old edition (empty when added)."),
        ("new_rule_id", "string", "Number in the new edition (empty when removed)."),
        ("kind", "string", "Kind of the record (in the new edition when there is one)."),
        ("change", "string", "unchanged, cosmetic, reference, modified, renamed (a glossary term), added, removed, "
                             "split (a new rule made of this old rule's text; one row per source), merged (an ended "
                             "rule whose text lives on in the new one), not_covered (a truncated edition lacks it; "
                             "the lineage goes on) or first_seen."),
        ("renumbered", "boolean", "The number changed."),
        ("similarity", "number", "0-100: how alike the old and new texts are (comparison forms, examples included)."),
        ("score", "number", "0-100: the alignment's score, similarity plus structural evidence."),
        ("review", "boolean", "A borderline match a person should check."),
        ("method", "string", "How the match was found: same, moved, fuzzy, override, traced (sentence tracing), "
                             "renamed, split, merge, unmatched."),
        ("ops", "array", "Word operations on the text: "
                         "[tag, old_start, old_end, new_start, new_end, old_text, new_text]."),
        ("title_ops", "array", "Word operations on the title."),
        ("example_ops", "array", "Word operations per example position."),
        ("substitutions", "array", "Short wording swaps seen: [[old, new], ...]."),
        ("note", "string", "What a person should know: the old name of a renamed term, the rule an added rule "
                           "resembles."),
    ), ("from_edition", "to_edition", "lineage_id", "old_rule_id", "new_rule_id", "change"), LINEAGE_FK),
    Table("lineages", "One row per lineage: a rule followed through every edition it lived in. The numbers it "
                      "carried, edition by edition, are the rows of `rules` with its lineage_id (not stored here a "
                      "second time: processed/README.md shows the query).", _cols(
        ("lineage_id", "string", "Identity: the edition and number where it first appeared."),
        ("kind", "string", "Kind in its latest edition."),
        ("first_edition", "edition", "First edition it appears in."),
        ("last_edition", "edition", "Last edition it appears in."),
        ("editions", "integer", "How many editions carry it."),
        ("current_rule_id", "string", "Its number in its last edition."),
        ("status", "string", "alive (in the latest complete edition), removed, merged, or unknown "
                             "(only in fragments)."),
        ("ended", "edition", "Edition that removed it or merged it away (empty while alive)."),
        ("last_changed", "edition", "Edition of its last wording change."),
        ("modifications", "integer", "How many times its wording changed."),
    ), ("lineage_id",)),
    Table("editions", "One row per edition.", _cols(
        ("edition", "edition", "Date of the edition (effective date stated in its text)."),
        ("date", "date", "The same date typed as a date, for date arithmetic (`edition` is the identifier)."),
        ("edition_end", "edition", "End of the date range, when only fragments of unknown date give it."),
        ("set_code", "string", "Code of the set the edition came with (M10, DSK), from the project's edition "
                               "registry (pipeline/data/sets.csv); empty when the registry has none at its date."),
        ("set_name", "string", "Name of that set (Magic 2010)."),
        ("status", "string", "complete (a whole official edition), truncated (an official text that stops early: "
                             "rules it lacks are not_covered, not removed), copy (an unofficial copy of the "
                             "edition in `observes`: it makes no step of the history) or fragment (a copy no "
                             "official edition of the run covers: it stands in for its edition)."),
        ("observes", "edition", "For a copy: the official edition in force on its date, which it is evidence about."),
        ("sources", "array", "Source ids that give it (JSON list)."),
        ("records", "integer", "Records of every kind."),
        ("parts", "integer", "Parts (1. Game Concepts)."),
        ("chapters", "integer", "Chapters (205. Type Line)."),
        ("sections", "integer", "Numbered headings inside chapters (212.2 Artifacts)."),
        ("rules", "integer", "Numbered rules with text (rules + sections = the CR's own count of rules)."),
        ("subrules", "integer", "Lettered subrules."),
        ("rulings", "integer", "Rulings (212.8.Ruling.1)."),
        ("glossary", "integer", "Glossary entries."),
        ("commentary", "integer", "Commentary notes."),
        ("examples", "integer", "Examples attached to numbered records."),
        ("conflicts", "integer", "Records whose sources disagree."),
    ), ("edition",)),
    Table("sources", "One row per source file, with the character accounting.", _cols(
        ("source_id", "string", "File name without extension (with it for a PDF, DOCX or RTF: 2026-01-16.pdf)."),
        ("path", "string", "The file, under the name of the folder it was found in (raw/..., cr-archive/...)."),
        ("format", "string", "official (a TXT edition), pdf, docx or rtf (an edition in that format; all four "
                             "recognised by content), rulings-text, rulings-html, copy, wiki-text, wiki-html or "
                             "markdown."),
        ("kind", "string", "official rules, rulings page, commentary or copy."),
        ("edition", "edition", "Edition it reflects."),
        ("edition_end", "edition", "End of its date range, if only a range is known."),
        ("encoding", "string", "Encoding it was decoded with; for a PDF, DOCX or RTF the reader and code page "
                               "(pdf (pypdfium2), rtf (mac_roman)); '(repaired)' after damaged UTF-16 was "
                               "re-synchronised."),
        ("sha256", "string", "SHA-256 of the file's bytes."),
        ("bytes", "integer", "File size."),
        ("chars_total", "integer", "Characters after decoding."),
        ("chars_kept", "integer", "Characters kept in records."),
        ("chars_discarded", "integer", "Characters discarded (chars_kept + chars_discarded = chars_total)."),
        ("discarded_by_reason", "object", "Discarded characters by reason (JSON object)."),
        ("paragraphs", "integer", "Paragraphs kept."),
        ("records", "integer", "Records drawn from it."),
        ("wrapped", "boolean", "Hard-wrapped lines were joined back into paragraphs."),
        ("complete", "boolean", "A whole official edition."),
        ("warnings", "array", "Warnings (JSON list)."),
        ("rejection", "string", "Why the file was not used (empty when it was)."),
        ("url", "string", "Where it was published: the address `fetch` got it from (fetched.json), or the "
                          "manifest's url."),
    ), ("source_id", "path")),
    Table("discards", "One row per discarded passage (line breaks, blank lines and indentation are only "
                      "counted).", _cols(
        ("source_id", "string", "Source id."),
        ("line", "integer", "Line in the source (0 for HTML markup)."),
        ("reason", "string", "Why it was discarded."),
        ("chars", "integer", "Characters discarded."),
        ("text", "string", "The discarded text."),
    )),
    Table("references", "One row per rule-to-rule reference, per edition.", _cols(
        ("edition", "edition", "Edition."),
        ("rule_id", "string", "The referring record."),
        ("kind", "string", "Its kind."),
        ("occurrence", "integer", "Its occurrence."),
        ("target", "string", "The rule id referred to (a part number for 'section 3')."),
        ("target_exists", "boolean", "The target exists in the same edition (false: a dangling reference)."),
        ("target_kind", "string", "The target's kind, when it exists."),
    ), ("edition", "kind", "rule_id", "occurrence", "target"), EDITION_FK),
    Table("citations", "One row per citation tag ([CompRules 2007/10/01], [CR 204.1a], [D'Angelo 2007/10/20]).", _cols(
        ("edition", "edition", "Edition of the record carrying the tag."),
        ("source", "string", "Its source."),
        ("rule_id", "string", "The record carrying the tag."),
        ("n", "integer", "Position of the tag within the record."),
        ("part", "string", "text, or example N: what the tag is attached to."),
        ("cited_by", "string", "The tag's source: CompRules, CR, D'Angelo, Future Sight FAQ ..."),
        ("value", "string", "The tag's date (ISO) or cited rule number."),
        ("text", "string", "The tag as printed."),
        ("lineage_id", "string", "Lineage of the cited rule (CR) or of the tagged rule."),
        ("linked_by", "string", "number, quoted text (commentary matched by its words) or tagged rule."),
        ("last_changed", "edition", "For a date tag: the computed edition of the tagged rule's last wording change."),
        ("agrees", "string", "yes / no / unknown: does the tag's date fall where the computed history puts the "
                             "change."),
        ("rule_in_cited_edition", "string", "For a CR tag: the cited rule, when that edition is in the run."),
        ("rule_in_latest_edition", "string", "The lineage's number in the latest edition that has it."),
    ), ("edition", "rule_id", "n"), EDITION_FK + LINEAGE_FK),
    Table("glossary", "One row per glossary entry per edition.", _cols(
        ("edition", "edition", "Edition."),
        ("term", "string", "The term."),
        ("occurrence", "integer", "1, or 2 for a term printed twice."),
        ("definition", "string", "Its definition (paragraphs joined by newlines)."),
        ("examples", "array", "Examples (JSON list)."),
        ("references", "array", "Rules it points to (JSON list)."),
        ("lineage_id", "string", "The entry's identity across editions."),
        ("source", "string", "Source id(s)."),
        ("line_start", "integer", "First line in the source."),
        ("line_end", "integer", "Last line in the source."),
    ), ("edition", "term", "occurrence"), EDITION_FK + LINEAGE_FK),
    Table("terminology", "For each pair of editions, how often each wording substitution was seen in its "
                         "changes.", _cols(
        ("from_edition", "edition", "Old edition."),
        ("to_edition", "edition", "New edition."),
        ("old", "string", "Wording replaced (lower case)."),
        ("new", "string", "Wording that replaced it."),
        ("count", "integer", "Times seen."),
    ), ("from_edition", "to_edition", "old", "new")),
    Table("renumberings", "Runs of renumbered rules summarised as ranges.", _cols(
        ("from_edition", "edition", "Old edition."),
        ("to_edition", "edition", "New edition."),
        ("scope", "string", "The chapter (rule runs) or rule (subrule runs) the run sits in."),
        ("first_old", "string", "First number of the run in the old edition."),
        ("last_old", "string", "Last number of the run in the old edition."),
        ("first_new", "string", "First number in the new edition."),
        ("last_new", "string", "Last number in the new edition."),
        ("shift", "integer", "Numbers (or subrule letters) moved by."),
        ("count", "integer", "Rules in the run."),
        ("summary", "string", "The run in words: 702.11–702.82 shifted +1."),
    ), ("from_edition", "to_edition", "scope", "first_old")),
    Table("observations", "What each record of a copy (rulings page, foreign-site copy, wiki, Markdown export) "
                          "shows of the official edition in force on its date: a copy is evidence about an "
                          "edition, never a step of the history.", _cols(
        ("edition", "edition", "The copy's own date (its records' edition in `rules`)."),
        ("source", "string", "The copy's source id."),
        ("kind", "string", "Kind of the copy's record."),
        ("rule_id", "string", "Number (or term) in the copy."),
        ("occurrence", "integer", "1, or 2 for the second printing of a number."),
        ("observes", "edition", "The official edition it is evidence about (the one in force on its date)."),
        ("official_rule_id", "string", "The rule of that edition it copies (empty when that edition has none)."),
        ("lineage_id", "string", "The lineage of that rule (the copy's record joins it)."),
        ("agreement", "string", "same (word for word), typography (quotes, dashes, symbols only), references "
                                "(only cited numbers differ), differs (words dropped, added or changed; examples "
                                "lost) or absent (the edition has no such rule: a ruling, a rule of another date)."),
        ("similarity", "number", "0-100: how alike the copy and the official text are."),
        ("differences", "string", "Where the copy departs from the official text, in words: "
                                  "without \"symbols\"; 2 examples missing."),
    ), ("edition", "kind", "rule_id", "occurrence"), EDITION_FK),
    Table("texts", "Each distinct wording of a rule (its text, examples and sentences) once: the CSV and "
                   "database rows of `rules` and `glossary` name theirs by `text_id`.", _cols(
        ("text_id", "string", "The first 16 hex digits of the SHA-256 of [text, examples, sentences] as compact JSON."),
        ("text", "string", "The text (a glossary entry's definition)."),
        ("examples", "array", "Every example, in order (JSON list of strings)."),
        ("sentences", "array", "The sentences as offsets, as the rules table's `sentences` (JSON list)."),
    ), ("text_id",)),
)
BY_NAME = {t.name: t for t in TABLES}

# The CSV and the database do not compress, and most rules keep their wording from edition to
# edition (2% of the rule rows of 110 simulated editions are distinct texts): there these columns
# are one text_id into `texts`, each wording stored once. The Parquet twins compress repeats away
# themselves, so they keep the columns in place and read in one line.
WORDING = {"rules": ("text", "examples", "sentences"), "glossary": ("definition", "examples")}
TEXT_ID = Column("text_id", "string", "Key of the row's text, examples and sentences in `texts`.")
TEXTS_FK = ((("text_id",), "texts", ("text_id",)),)


def flat(table: Table) -> Table:
    """The table as the CSV and the database store it: its wording columns one text_id."""
    moved = WORDING.get(table.name, ())
    if not moved:
        return table
    columns = tuple(TEXT_ID if c.name == moved[0] else c for c in table.columns if c.name not in moved[1:])
    return Table(table.name, table.description, columns, table.primary_key, table.foreign_keys + TEXTS_FK)


# The database's own columns, after the CSV's: each change's old and new wording by key, filled in
# by pipeline/publish/database.py from the rules the change names, so that a change shows both texts with
# no join per page (Datasette labels a key with its text). Declared here, so the data dictionary
# and Datasette's metadata describe them.
DATABASE_ONLY = {"changes": (
    Column("old_text_id", "string", "Database only: key in `texts` of the old rule's wording (empty when added)."),
    Column("new_text_id", "string", "Database only: key in `texts` of the new rule's wording (empty when removed)."),
)}


def in_database(table: Table) -> Table:
    """The table as the database stores it: the CSV's columns (`flat`), then its own, each a key into `texts`."""
    table = flat(table)
    extra = DATABASE_ONLY.get(table.name, ())
    if not extra:
        return table
    keys = tuple(((c.name,), "texts", ("text_id",)) for c in extra)
    return Table(table.name, table.description, table.columns + extra, table.primary_key, table.foreign_keys + keys)
