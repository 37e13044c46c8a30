"""The spaCy pipeline: a blank English tokenizer taught rule numbers, plus registered components.

    nlp.pipe_names == ["rule_boundaries", "citations", "sentencizer", "rule_references"]

Each paragraph is analysed once and reduced to plain offsets (`Analysis`), cached by its text,
so the ~95% of paragraphs that recur from edition to edition are never tokenized again.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy

from pipeline.segment import withoutcli  # noqa: F401  (first: spaCy imported without its command line)

import spacy
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.matcher import Matcher
from spacy.tokens import Doc, Span
from spacy.tokenizer import Tokenizer
from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

from pipeline.patterns import CHAPTER_NUMBER, CITATION, DOTTED_NUMBER, LETTER_RANGE, PART_DIGIT, RULE_NUMBER
from pipeline.records import Analysis
from pipeline.ruleid import RuleId, expand_range

# One token per rule number: 212 | 212.1 | 212.1b | 212.2h-k | 212.8.Ruling.1 (never a year: 2003).
RULE_TOKEN = RULE_NUMBER  # one pattern for a printed rule number (pipeline/patterns.py)
DOTTED = rf"^{DOTTED_NUMBER}(?:{LETTER_RANGE})?$"  # a reference needs no "rule" before it: "(see 408.2d)"
CHAPTER = rf"^{CHAPTER_NUMBER}$"  # ... but a bare "409" does: "rule 409"
PART = re.compile(rf"^{PART_DIGIT}$")
AFTER_STRAY_SPACE = re.compile(r"\d+[a-z]?")  # "8b" of "606. 8b": RULE_PART (patterns.py) after its dot and space
TITLE_MAX_WORDS = 9
HAS_DIGIT = re.compile(r"\d")
MID_LINE = re.compile(r"\s\d{3}\S*\s?[-–—]")  # what a mid-line entry needs at least: a space, a number, a dash
MAY_REFER = re.compile(r"\d{3}\.\d|(?:rule|section)s?\s*\d", re.I)  # what a reference needs, at least

for name in ("rule_id", "title"):
    if not Span.has_extension(name):
        Span.set_extension(name, default="")
if not Span.has_extension("targets"):
    Span.set_extension("targets", default=())
if not Doc.has_extension("example"):
    Doc.set_extension("example", default=False)


@lru_cache(maxsize=1)
def load() -> Language:
    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": TOKENIZER}}})
    nlp.add_pipe("rule_boundaries")
    nlp.add_pipe("citations")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("rule_references")
    return nlp


TOKENIZER = "crdiff.rule_tokenizer.v1"


@spacy.registry.tokenizers(TOKENIZER)
def _rule_tokenizer():
    """spaCy's English tokenizer with every setting below given at once: each one set afterwards reloaded
    its 1,300 special cases (0.3 s of every start of `compare`), and the default one built first was
    thrown away. The same tokenizer as setting them on `spacy.blank("en").tokenizer` in turn."""
    def make(nlp: Language) -> PiecewiseTokenizer:
        defaults = nlp.Defaults
        infixes = list(defaults.infixes) + [r"\|", r"(?<=[a-z])/(?=\d)"]
        return PiecewiseTokenizer(Tokenizer(
            nlp.vocab, rules=defaults.tokenizer_exceptions,
            # A prefix matched at a word's start only: every alternative of spaCy's prefix regex starts
            # with ^, so the same match as its search, which tried every position.
            prefix_search=compile_prefix_regex(defaults.prefixes).match,
            suffix_search=_tail_search(compile_suffix_regex(defaults.suffixes).search),
            infix_finditer=compile_infix_regex(infixes).finditer,
            token_match=RULE_TOKEN.match, url_match=defaults.url_match))
    return make


# spaCy splits a word's punctuation off one piece at a time, searching the whole rest of the word for the
# next prefix and suffix each time: time quadratic in a word of many (20,000 ")" took 70 s).
AFFIX_WINDOW = 64  # characters a suffix is first looked for in: spaCy's are at most a few, but runs of dots
LOOKBEHIND = 8  # characters a suffix rule may look at before its match (spaCy's: 2, "°F.")
LONG_WORD = 1_000  # characters: a longer run without spaces is tokenized a piece at a time (rules text: 79)
LONG_RUN = re.compile(rf"(?<!\S)\S{{{LONG_WORD + 1},}}")


def _tail_search(search):
    """`search` (a regex whose alternatives all end with $) tried on the last AFFIX_WINDOW characters, then
    on twice as many while the match found starts too near the window's start to be known whole; the
    same length of match as searching all of the text, since the only suffixes longer than a few
    characters are runs of dots, whose every tail is one too."""
    def find(text: str):
        size = AFFIX_WINDOW
        while size < len(text):
            match = search(text[-size:])
            if match is None or match.start() >= LOOKBEHIND:
                return match
            size *= 2
        return search(text)
    return find


class PiecewiseTokenizer:
    """spaCy's tokenizer, given a word longer than LONG_WORD characters LONG_WORD characters at a time (its
    tokens never span two pieces); any other text is tokenized exactly as spaCy does."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> Doc:
        cuts = [cut for m in LONG_RUN.finditer(text) for cut in range(m.start() + LONG_WORD, m.end(), LONG_WORD)]
        if not cuts:
            doc = self.tokenizer(text)
        else:
            bounds = [0, *cuts, len(text)]
            doc = Doc.from_docs([self.tokenizer(text[a:b]) for a, b in zip(bounds, bounds[1:])],
                                ensure_whitespace=False)
        doc.user_data[TEXT] = text
        return doc


TEXT = "crdiff.text"  # the text a Doc was made from, in its user_data


def text_of(doc: Doc) -> str:
    """doc.text without Doc.text, which joins every token anew (a Token object made per token: a third of
    spaCy's time on a pair): the text the tokenizer was given, the same string (spaCy's tokenization
    loses no character, and the pieces of a long word are joined without adding a space)."""
    text = doc.user_data.get(TEXT)
    return doc.text if text is None else text


@Language.component("rule_boundaries")
def rule_boundaries(doc: Doc) -> Doc:
    """Spans where a numbered entry begins: at the paragraph's start, or mid-line after a gap
    ("212.3 - Creatures  212.2a - A player ..."): a number followed by a dash, after a space run."""
    spans = []
    first = _leading_number(doc)
    if first:
        spans.append(first)
    text = text_of(doc)
    # A mid-line entry needs a run of spaces before it, and a space, a number and a dash in the text (the
    # loop makes a Token per token): most paragraphs have neither.
    if "  " in text and MID_LINE.search(text):
        for i in range(1, len(doc) - 1):
            if doc[i - 1].is_space and RULE_TOKEN.match(doc[i].text) and doc[i + 1].text in ("-", "–", "—"):
                span = Span(doc, i, i + 2, label="RULE")
                span._.rule_id = doc[i].text
                spans.append(span)
    doc.spans["boundaries"] = spans
    doc._.example = len(doc) > 1 and doc[0].lower_ in ("example", "examples") and doc[1].text in (":", ".")
    return doc


def _leading_number(doc: Doc) -> Span | None:
    """The number a paragraph starts with: "212.1b", "212.1b.", "100.1.", "212.3 -", "606. 8b"
    (a stray space), "1. The Game" (a part heading, only when what follows is a short title)."""
    if not len(doc):
        return None
    t0 = doc[0].text
    end, rule_id = 1, t0
    if RULE_TOKEN.match(t0):
        if (len(doc) > 3 and re.fullmatch(CHAPTER_NUMBER, t0) and doc[1].text == "."
                and AFTER_STRAY_SPACE.fullmatch(doc[2].text)):
            end, rule_id = 3, f"{t0}.{doc[2].text}"  # "606. 8b" is 606.8b
        if end < len(doc) and doc[end].text in (".", "-", "–", "—"):
            end += 1
    elif PART.match(t0) and len(doc) > 2 and doc[1].text == "." and _title_like(doc[2:].text):
        end = 2
    else:
        return None
    span = Span(doc, 0, end, label="RULE")
    span._.rule_id = rule_id
    return span


def _title_like(text: str) -> bool:
    return 0 < len(text.split()) <= TITLE_MAX_WORDS and not text.rstrip().endswith((".", ":", ";")) \
        and text[:1].isupper()


@Language.factory("rule_references")
def make_references(nlp: Language, name: str):
    matcher = Matcher(nlp.vocab)
    rule_word = {"LOWER": {"IN": ["rule", "rules"]}}
    matcher.add("RANGE", [[{"TEXT": {"REGEX": DOTTED}}, {"LOWER": {"IN": ["through", "to"]}},
                           {**rule_word, "OP": "?"}, {"TEXT": {"REGEX": DOTTED}}]])
    matcher.add("DOTTED", [[{"TEXT": {"REGEX": DOTTED}}]])
    matcher.add("CHAPTER", [[rule_word, {"TEXT": {"REGEX": CHAPTER}}],
                            [rule_word, {"TEXT": {"REGEX": DOTTED}}, {"LOWER": {"IN": ["and", "or", ","]}},
                             {"TEXT": {"REGEX": CHAPTER}}]])
    matcher.add("SECTION", [[{"LOWER": {"IN": ["section", "sections"]}}, {"TEXT": {"REGEX": PART.pattern}}]])

    def rule_references(doc: Doc) -> Doc:
        if not _may_refer(doc):  # the matcher's regex on every token was the costliest step of analysis
            doc.spans["references"] = []
            return doc
        taken = {i for key in ("boundaries", "citations") for span in doc.spans[key]
                 for i in range(span.start, span.end)}
        found = []
        for match_id, start, end in sorted(matcher(doc), key=lambda m: (m[1], -m[2])):
            if any(i in taken for i in range(start, end)):
                continue
            label = nlp.vocab.strings[match_id]
            span = Span(doc, start, end, label=label)
            span._.targets = _targets(label, [t.text for t in span])
            taken.update(range(start, end))
            found.append(span)
        doc.spans["references"] = found
        return doc

    return rule_references


def _may_refer(doc: Doc) -> bool:
    """Whether the text outside the rule numbers and citations holds what every pattern needs (a dotted
    number, or "rule"/"section" then a digit): when it does not, no match could be kept."""
    text = text_of(doc)
    if not HAS_DIGIT.search(text):
        return False
    spans = [(span.start_char, span.end_char) for key in ("boundaries", "citations") for span in doc.spans[key]]
    return bool(MAY_REFER.search(_blanked(text, spans)))


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span's characters replaced by spaces, built once (a copy of the text per span
    was quadratic in a paragraph's citations)."""
    pieces, done = [], 0
    for start, end in sorted(spans):
        start = max(start, done)
        if end > start:
            pieces += [text[done:start], " " * (end - start)]
            done = end
    return "".join(pieces + [text[done:]])


def _targets(label: str, words: list[str]) -> tuple[str, ...]:
    numbers = [w for w in words if w[:1].isdigit()]
    if label == "RANGE":
        return expand_range(numbers[0], numbers[-1])
    return tuple(t for n in numbers for t in expand_range(*_split_suffix_range(n)))


def _split_suffix_range(number: str) -> tuple[str, str]:
    """"212.2h-k" -> ("212.2h", "212.2k"); "212.2h" -> ("212.2h", "212.2h"). Cut from the text as printed, not
    re-written from the parsed parts (RuleId.expand would write "212.02h-h" as 212.2h)."""
    parsed = RuleId.parse(number)
    if parsed and parsed.shape == "range" and parsed.letter:  # not "212.2-k": no first letter, no range
        return number[:-2], number[:-3] + number[-1]
    return number, number


@Language.component("citations")
def citations(doc: Doc) -> Doc:
    """[CompRules 2007/10/01], [CR 204.1a], [D'Angelo 2007/10/20], and the broken {{CR|204.1a}."""
    spans = []
    text = text_of(doc)
    sent_starts: dict[int, bool] = {}
    for m in CITATION.finditer(text):
        span = doc.char_span(m.start(), m.end(), label="CITATION", alignment_mode="expand")
        if span is None:
            continue
        span._.rule_id = m["tval"] or m["val"]
        span._.title = "CR" if m["tval"] else m["src"]
        spans.append(span)
        _keep_whole(doc, text, span, sent_starts)
    _set_sent_starts(doc, sent_starts)
    doc.spans["citations"] = spans
    return doc


def _keep_whole(doc: Doc, text: str, span, sent_starts: dict[int, bool]) -> None:
    """A tag is never cut between sentences (the sentencizer, which runs next, keeps what is set here):
    it ends the sentence before it, and what follows a tag after a finished sentence starts the next."""
    for i in range(span.start + (span.start == 0), span.end):
        sent_starts[i] = False
    if span.end < len(doc) and _last_before(text, span.start_char) in (".", "!", "?", ":", ";"):
        sent_starts[span.end] = True


def _set_sent_starts(doc: Doc, sent_starts: dict[int, bool]) -> None:
    """token.is_sent_start = value for each token, written at once: the setter looks through the whole
    Doc for a parse each time, quadratic in a paragraph's citations."""
    if not sent_starts:
        return
    values = doc.to_array(SENT_START).astype(numpy.int64)
    for i, start in sent_starts.items():
        values[i] = 1 if start else -1
    doc.from_array([SENT_START], values.astype(numpy.uint64))


def _last_before(text: str, end: int) -> str:
    """text[:end].rstrip().rstrip("\"”')]")[-1:], without copying text[:end] (once per citation: quadratic)."""
    i = end
    while i and text[i - 1].isspace():
        i -= 1
    while i and text[i - 1] in "\"”')]":
        i -= 1
    return text[i - 1:i]


def analyse(doc: Doc) -> Analysis:
    """Reduce a processed Doc to offsets (picklable, small, cacheable); a component that did not run
    (`ParagraphCache(skip=...)`) leaves its analysis empty."""
    starts = []
    text = text_of(doc)
    for span in doc.spans["boundaries"]:
        text_start = span.end_char
        while text_start < len(text) and text[text_start] == " ":
            text_start += 1
        starts.append((span.start_char, text_start, span._.rule_id))
    return Analysis(
        starts=tuple(starts),
        example=doc._.example,
        sentences=tuple((s.start_char, s.end_char) for s in doc.sents),
        references=tuple((s.start_char, s.end_char, s._.targets) for s in doc.spans.get("references", ())),
        citations=tuple((s.start_char, s.end_char, s._.title, s._.rule_id) for s in doc.spans.get("citations", ())),
    )
