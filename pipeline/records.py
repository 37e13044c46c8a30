"""The records that flow between stages. Frozen: a stage makes new records, never edits old ones."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple, get_args

Kind = Literal["part", "chapter", "section", "rule", "subrule", "ruling", "glossary", "commentary", "fragment"]
Change = Literal["unchanged", "cosmetic", "reference", "modified", "renamed", "added", "removed", "split", "merged",
                 "first_seen", "not_covered"]
Method = Literal["same", "moved", "fuzzy", "override", "traced", "renamed", "split", "merge", "resembles",
                 "unmatched"]
KINDS, CHANGES, METHODS = get_args(Kind), get_args(Change), get_args(Method)
HEADINGS = ("part", "chapter", "section")  # the kinds that head other rules

# Source kinds a manifest may declare ("official" needs no entry: it is recognised by content).
SOURCE_KINDS = ("official rules", "rulings page", "commentary", "copy")
# Languages of the sites people copy rules from: what a manifest may declare, and what the copy adapter
# tells apart (a short, fixed set keeps detection fast and sure).
COPY_LANGUAGES = ("EN", "RU", "UK", "DE", "FR", "ES", "IT", "PT", "PL", "NL", "CS", "JA", "ZH", "KO")


@dataclass(frozen=True, slots=True)
class SourceDoc:
    """One decoded source file and what is known about it before cleaning."""

    source_id: str  # file name without extension
    path: Path
    format: str  # official | rulings-text | rulings-html | copy | wiki-text | wiki-html | markdown
    kind: str  # one of SOURCE_KINDS
    text: str  # decoded, original line endings kept
    encoding: str
    sha256: str
    n_bytes: int
    edition: str | None = None  # ISO date the text reflects (start of a range)
    edition_end: str | None = None  # end of a date range, when only a range is known
    language: str = "en"
    url: str = ""
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A run of kept source text, unwrapped; `role` says where it sits in the source."""

    text: str
    first_line: int  # 1-based line numbers in the source file
    last_line: int
    role: str = "rules"  # rules | glossary-term | glossary | commentary | heading | caption


@dataclass(frozen=True, slots=True)
class Discard:
    """Characters of a source that are not kept, and why."""

    line: int  # 0 when the discard is not on one line (HTML markup)
    reason: str
    text: str
    n_chars: int | None = None  # for discards counted rather than quoted (HTML markup)

    @property
    def size(self) -> int:
        return len(self.text) if self.n_chars is None else self.n_chars


@dataclass(frozen=True, slots=True)
class CleanDoc:
    """A source after cleaning: the kept paragraphs and the ledger of everything else."""

    source: SourceDoc
    paragraphs: tuple[Paragraph, ...]
    discards: tuple[Discard, ...]
    chars_total: int
    chars_kept: int
    edition: str | None
    warnings: tuple[str, ...] = ()
    wrapped: bool = False
    complete: bool = False  # a whole edition (official) rather than a fragment

    @property
    def content(self) -> str:
        """The kept text: paragraphs joined by newlines. Records tile exactly this string."""
        return "\n".join(p.text for p in self.paragraphs)

    def discarded_by_reason(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for d in self.discards:
            totals[d.reason] = totals.get(d.reason, 0) + d.size
        return dict(sorted(totals.items()))


@dataclass(frozen=True, slots=True)
class Citation:
    """A tag naming where a text comes from: [CompRules 2007/10/01], [CR 204.1a], [D'Angelo 2007/10/20]."""

    source: str  # CompRules | CR | D'Angelo | Future Sight FAQ ...
    value: str  # a date (ISO) or a rule number
    text: str  # the tag as printed
    part: str = "text"  # "text", or "example 1", "example 2", ... for a tag at the end of an example


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule (or heading, glossary entry, ruling, commentary note) of one edition."""

    edition: str
    source: str  # source id(s), ";"-joined
    rule_id: str
    kind: Kind
    parent: str
    title: str
    text: str  # readable, unwrapped, original typography, citation tags removed
    compare: str  # comparison form of `text`
    examples: tuple[str, ...] = ()
    sentences: tuple[str, ...] = ()
    references: tuple[str, ...] = ()  # rule ids it points to, ranges expanded
    citations: tuple[Citation, ...] = ()
    flags: tuple[str, ...] = ()  # partial | truncated | duplicate | conflict | placeholder | orphan
    line_start: int = 0
    line_end: int = 0
    occurrence: int = 1  # 2 for the second printing of a duplicated number
    variants: tuple[str, ...] = ()  # other sources' differing text, when flagged conflict
    pieces: tuple[tuple[int, int], ...] = field(default=(), compare=False)  # offsets into CleanDoc.content


@dataclass(frozen=True, slots=True)
class Edition:
    edition: str  # ISO date
    edition_end: str  # end of the date range when the sources only give a range, else ""
    sources: tuple[str, ...]
    complete: bool  # at least one source is a whole official edition
    counts: dict[str, int]  # records by kind
    conflicts: int
    truncated: bool = False  # an official text that stops early (no complete copy of it): a fragment
    observes: str = ""  # a copy's: the complete official edition in force on its date, which it is evidence about


def edition_status(e: Edition) -> str:
    """complete, truncated (an official text that stops early), copy (observes an edition) or fragment."""
    return "complete" if e.complete else "truncated" if e.truncated else "copy" if e.observes else "fragment"


def rule_key(r: Rule) -> tuple[str, str, str, int]:
    """A rule's identity within a run: edition, kind, number, occurrence (the rules table's key)."""
    return (r.edition, r.kind, r.rule_id, r.occurrence)


@dataclass(frozen=True, slots=True)
class Match:
    """Old record `old` (index into the old list) is new record `new` (index into the new list).

    One side is None for a rule that was removed or added. `method` says how it was found:
    same (number and words), moved (same words, new number), fuzzy, override, traced (the piece
    that kept most of a rule's text), renamed (a glossary term), split, merge, resembles (a new
    rule written on the model of an old one that still exists).
    """

    old: int | None
    new: int | None
    score: float  # 0-100: similarity of the words (plus structural evidence, capped at 100)
    method: Method
    review: bool = False  # a borderline match a person should look at


@dataclass(frozen=True, slots=True)
class RuleChange:
    """How one rule changed between two editions: diffs are data; reports only render them."""

    from_edition: str
    to_edition: str
    lineage_id: str
    old_rule_id: str
    new_rule_id: str
    kind: Kind
    change: Change
    renumbered: bool
    similarity: float  # 0-100, how alike the two texts are (comparison forms, examples included)
    review: bool
    method: Method
    score: float = 0.0  # the alignment's score: similarity plus structural evidence, capped at 100
    ops: tuple = ()  # word operations: (tag, old_start, old_end, new_start, new_end, old_text, new_text)
    title_ops: tuple = ()
    example_ops: tuple = ()  # one tuple of operations per example position
    substitutions: tuple[tuple[str, str], ...] = ()  # wording swaps seen: ("play", "cast")
    note: str = ""  # what a person should know: "renamed from Leaves Play", "resembles 702.51 (template)"


@dataclass(frozen=True, slots=True)
class Rejection:
    """A file the run could not use, and why. Written to sources.csv; the run goes on."""

    path: Path
    reason: str
    sha256: str = ""
    n_bytes: int = 0
    source_id: str = ""


@dataclass(frozen=True, slots=True)
class Ingested:
    """What ingest gives segment: the cleaned sources and the files it could not use."""

    docs: list[CleanDoc] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class History:
    """What the alignment makes of the editions (pipeline/align/lineage.py builds it)."""

    changes: list[RuleChange] = field(default_factory=list)
    lineage: dict[tuple, str] = field(default_factory=dict)  # rule_key -> lineage id
    last_changed: dict[tuple, str] = field(default_factory=dict)  # rule_key -> edition of last wording change
    chain: list[str] = field(default_factory=list)  # editions in the order they were walked
    observations: list[dict] = field(default_factory=list)  # what each copy's record shows of its edition


@dataclass(frozen=True, slots=True)
class Aligned:
    """What the export needs of the alignment: the history (changes, lineage ids, last changes),
    the renumbering runs, the lineages that commentary citations point to and what copies observe."""

    changes: list[RuleChange]
    lineage: dict[tuple, str]
    last_changed: dict[tuple, str]
    renumberings: list[dict]
    cited: dict[tuple, tuple]
    observations: list[dict] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Loaded:
    """What export wrote of a run's records (pipeline/publish/load.py reads it): the rules, where each
    sits in the history (by rule_key), and every change."""

    rules: list[Rule] = field(default_factory=list)
    lineage: dict[tuple, str] = field(default_factory=dict)  # rule_key -> lineage id
    last_changed: dict[tuple, str] = field(default_factory=dict)  # rule_key -> edition
    changes: list[RuleChange] = field(default_factory=list)


class Analysis(NamedTuple):
    """What segmentation needs from one paragraph, as character offsets into its text (spaCy's
    analysis in pipeline/segment/nlp.py; identify's plain-line reading in pipeline/segment/fragment.py)."""

    starts: tuple[tuple[int, int, str], ...]  # (start of number, start of text after it, rule id)
    example: bool  # the paragraph is an "Example:" paragraph
    sentences: tuple[tuple[int, int], ...]
    references: tuple[tuple[int, int, tuple[str, ...]], ...]  # (start, end, rule ids pointed to)
    citations: tuple[tuple[int, int, str, str], ...]  # (start, end, source, value)
