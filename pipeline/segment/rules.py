"""Segmentation: a CleanDoc's paragraphs, analysed by spaCy, become Rule records."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from pathlib import Path

from pipeline.ingest.clean import LINE_BREAK, collapse_spaces, compare_form, strip_citations
from pipeline.cache import Cache, code_hash, tuples
from pipeline.patterns import NEAR_NUMBER
from pipeline.records import Analysis, Citation, CleanDoc, Rule
from pipeline import ruleid
from pipeline.ruleid import RuleId, sort_key as natural_key  # natural_key: the name other modules import

PLACEHOLDER = re.compile(r"^\[This (?:section|rule) has been intentionally left blank", re.I)
KIND_ORDER = {"part": 0, "chapter": 0, "section": 0, "rule": 0, "subrule": 0, "ruling": 0,
              "fragment": 0, "glossary": 1, "commentary": 2}
NO_BOUNDARIES = ("glossary", "glossary-term", "commentary", "example-cont", "heading")
UNANALYSED = ("glossary-term", "heading")  # roles whose paragraphs spaCy never needs to see


class ParagraphCache:
    """Analyses keyed by paragraph text; with a path, kept between runs in the SQLite cache
    (pipeline/cache.py), keyed by the text and by the code of pipeline.segment.nlp and what it imports.

    `skip` names spaCy components not to run (their analyses stay empty): `compare` needs neither
    citations nor references. Such analyses are kept apart from the whole ones, which serve both."""

    def __init__(self, path: Path | None = None, skip: tuple[str, ...] = ()):
        code = code_hash("pipeline.segment.nlp", ("spacy",))
        self.stores = [Cache(path, "paragraphs", code)]
        if skip:
            self.stores.append(Cache(path, "paragraphs without " + " ".join(skip), code))
        self.skip = skip
        self.data: dict[str, Analysis] = {}
        self.records: dict[tuple, tuple] = {}  # what segmentation made of each distinct draft (segment._body)
        self.numbered: dict[str, tuple] = {}  # the numbered entries of each distinct paragraph (segment._entries)
        self.misses = 0

    @property
    def store(self) -> Cache:
        """Where fresh analyses are kept."""
        return self.stores[-1]

    @property
    def warnings(self) -> list[str]:
        return [w for store in self.stores for w in store.warnings]

    def analyse(self, texts: Iterable[str]) -> None:
        """Analyse every text not seen before, once each: from the cache file when it holds it."""
        from pipeline.segment.nlp import analyse, load  # spaCy: imported only when a paragraph needs it (identify)

        todo = sorted({t for t in texts if t not in self.data})
        for store in self.stores:
            keys = {store.key(t): t for t in todo}
            for key, a in store.get_many(list(keys), _decode_analysis).items():
                if _fits(a, len(keys[key])):
                    self.data[keys[key]] = a
            todo = [t for t in todo if t not in self.data]
        self.misses += len(todo)
        fresh, nlp = [], load()
        with nlp.select_pipes(disable=list(self.skip)):
            for text, doc in zip(todo, nlp.pipe(todo, batch_size=512)):
                self.data[text] = analyse(doc)
                fresh.append((self.store.key(text), self.data[text]))
        self.store.put_many(fresh)

    def analyse_docs(self, docs: Iterable[CleanDoc]) -> None:
        """Analyse every paragraph of these sources that segmentation will look at."""
        self.analyse(p.text for d in docs for p in d.paragraphs if p.role not in UNANALYSED)

    def __getitem__(self, text: str) -> Analysis:
        return self.data[text]

    def save(self) -> None:
        for store in self.stores:
            store.close()  # rows are written as they are computed


def _decode_analysis(value) -> Analysis:
    return Analysis(*tuples(value))


def _fits(a: Analysis, length: int) -> bool:
    """A cached analysis must point inside its paragraph; anything else is not used."""
    spans = [s[:2] for s in a.starts] + list(a.sentences) + [r[:2] for r in a.references] + \
        [c[:2] for c in a.citations]
    return all(isinstance(x, int) and 0 <= x <= length for pair in spans for x in pair) and \
        all(isinstance(s[2], str) for s in a.starts)


Part = tuple[str, int, int]  # (paragraph text, start, end): the part of a paragraph a record holds, not yet cut


@dataclass(slots=True)
class _Draft:
    """A record being assembled; frozen into a Rule when its paragraphs are all read. Its parts name their
    paragraph and where they are in it (the paragraph's analysis is found by its text): cutting them, and
    hashing the analyses, once per record cost more than the rest of segmentation; it is done once per
    distinct draft (`_freeze`)."""

    rule_id: str
    kind: str
    first_line: int
    title: str = ""
    text: list[Part] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    raw_examples: list[Part] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    last_line: int = 0
    pieces: list[list[int]] = field(default_factory=list)


def segment(doc: CleanDoc, cache: ParagraphCache) -> list[Rule]:
    """Records of one source in document order; their pieces tile `doc.content` exactly."""
    analyses = cache.data if isinstance(cache, ParagraphCache) else cache  # a dict: no method call per paragraph
    numbered = getattr(cache, "numbered", {})
    drafts: list[_Draft] = []
    pending_title = ""
    pending_pieces: list[list[int]] = []
    offset = commentaries = 0
    for p in doc.paragraphs:
        text, role = p.text, p.role
        a = analyses[text] if role not in UNANALYSED else None
        end = offset + len(text)
        current = drafts[-1] if drafts else None
        if role == "glossary-term":
            drafts.append(_Draft(text, "glossary", p.first_line, title=text))
            drafts[-1].pieces.append([offset, end])
        elif role == "heading":
            pending_title = text
            pending_pieces.append([offset, end])
        elif role == "commentary" and not (a.example and current):
            commentaries += 1  # counted as they come: summing over the drafts each time was quadratic
            draft = _Draft(f"{doc.source.source_id}.c{commentaries}", "commentary", p.first_line, title=pending_title)
            draft.pieces += pending_pieces + [[offset, end]]
            draft.text.append((text, 0, len(text)))
            drafts.append(draft)
            pending_pieces = []
        elif role in ("example-cont", "commentary"):
            _attach(current, (text, 0, len(text)), as_example=True, cont=role == "example-cont")
            current.pieces.append([offset, end])
        else:
            starts = a.starts if role not in NO_BOUNDARIES else ()
            if current is not None and role not in NO_BOUNDARIES and (not starts or starts[0][0] > 0):
                starts = _misprinted(text, current) + list(starts)
            if starts is a.starts:  # as analysed: the entries are the paragraph's own, worked out once per text
                entries = numbered.get(text)
                if entries is None:
                    entries = numbered[text] = _entries(text, starts)
            else:
                entries = _entries(text, starts)
            before, entries = entries
            if before:  # text before any number: an example or a continuation paragraph
                if current is None:
                    current = _orphan(doc, cache, p.first_line)
                    drafts.append(current)
                _attach(current, (text, 0, before), as_example=a.example)
                current.pieces.append([offset, offset + before])
            for start, stop, part, rule_id, flags in entries:
                drafts.append(_Draft(rule_id, "", p.first_line, "", [part], [], [], list(flags), 0,
                                     [[offset + start, offset + stop]]))
        if drafts:
            drafts[-1].last_line = max(drafts[-1].last_line, p.last_line)
        offset = end + 1
    if pending_pieces and drafts:  # a heading with nothing after it
        drafts[-1].pieces += pending_pieces
    _close_pieces(drafts, offset - 1 if doc.paragraphs else 0)  # the length of doc.content, without joining it
    _flag_truncated(doc, drafts)
    return _freeze(doc, drafts, analyses, getattr(cache, "records", None))


def _entries(text: str, starts) -> tuple[int, list[tuple]]:
    """Where a paragraph's first number starts (0: at its start), and for each number a record begins with:
    its piece (start, end), its part, its number and its flags."""
    cuts = [s for s, _, _ in starts] + [len(text)]
    entries = []
    for (start, text_start, rule_id), stop in zip(starts, cuts[1:]):
        printed = _printed(text[start:text_start])
        flags = (f"number-repaired (printed {printed})",) if printed != rule_id else ()
        entries.append((start, stop, (text, text_start, stop), rule_id, flags))
    return cuts[0], entries


@lru_cache(maxsize=1 << 12)
def _printed(number: str) -> str:
    """A rule number as printed, without the separator after it: "212.1b. " -> "212.1b"."""
    return re.sub(r"[\s.\-–—]+$", "", number).replace(" ", "")


def _attach(draft: _Draft, part: Part, *, as_example: bool, cont: bool = False):
    if as_example and cont and draft.raw_examples:
        draft.raw_examples.append(part)
        draft.examples[-1] += "\n" + _cut(part)
    elif as_example:
        draft.raw_examples.append(part)
        draft.examples.append(_cut(part))
    else:
        draft.text.append(part)


def _cut(part: Part) -> str:
    text, start, end = part
    return text[start:end]


def _orphan(doc: CleanDoc, cache: ParagraphCache, line: int) -> _Draft:
    """Text at the start of a fragment, before any number: it belongs to the rule before the first
    numbered one (001 starts inside 212.1d, whose example it is)."""
    first = next((cache[p.text].starts[0][2] for p in doc.paragraphs
                  if p.role == "rules" and cache[p.text].starts), "")
    previous = previous_rule_id(first)
    if previous:
        return _Draft(previous, "", line, flags=["partial"])
    return _Draft(f"{doc.source.source_id}.L{line}", "fragment", line, flags=["orphan"])


def _misprinted(text: str, current: _Draft) -> list[tuple[int, int, str]]:
    """A paragraph that starts with a misprinted number ("306.b" after 306.3a) is its own rule when
    the number before it leaves exactly one number it can be; otherwise it stays where it is, and
    the record it joins is flagged for review."""
    m = NEAR_NUMBER.match(text)
    if not m:
        return []
    fits = [c for c in _next_numbers(current.rule_id) if _one_slip(m["num"], c)]
    if len(fits) != 1:
        current.flags.append("number-review")
        return []
    sep = re.match(r"\.?\s+", text[m.end():])
    return [(0, m.end() + sep.end(), fits[0])]


def _next_numbers(rule_id: str) -> list[str]:
    """The numbers that can follow `rule_id`: the next subrule, the next rule, its first subrule."""
    p = RuleId.parse(rule_id)
    if not p or p.shape not in ("rule", "subrule"):
        return []
    out = [f"{p.chapter}.{p.number + 1}", f"{p.chapter}.{p.number + 1}a"]
    if p.shape == "rule":
        out.append(f"{rule_id}a")
    elif p.next():
        out.append(p.next())
    return out


def _one_slip(printed: str, intended: str) -> bool:
    """One character dropped, added or changed ("306.b", "306.3.b", "306,3b"); a changed letter or
    digit is another number, not a slip ("306.3c" is not 306.3b)."""
    if printed == intended or abs(len(printed) - len(intended)) > 1:
        return False
    if len(printed) == len(intended):
        diff = [(a, b) for a, b in zip(printed, intended) if a != b]
        return len(diff) == 1 and not diff[0][0].isalnum()
    short, long = sorted((printed, intended), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def previous_rule_id(rule_id: str) -> str:
    """212.1e -> 212.1d (subrule letters skip l and o); '' when it cannot be known."""
    parsed = RuleId.parse(rule_id)
    return parsed.previous() if parsed and parsed.shape == "subrule" else ""


def _close_pieces(drafts: list[_Draft], length: int) -> None:
    """Give each paragraph separator and gap to the piece before it, so pieces tile the content."""
    pieces = sorted((piece for d in drafts for piece in d.pieces), key=itemgetter(0))
    for here, nxt in zip(pieces, pieces[1:]):
        here[1] = nxt[0]
    if pieces:
        pieces[-1][1] = length


def _flag_truncated(doc: CleanDoc, drafts: list[_Draft]) -> None:
    """A fragment whose file stops inside its last rule (no line break or other text after it)."""
    if doc.complete or not drafts or doc.source.text.endswith(("\n", "\r")):
        return
    last_line = len(LINE_BREAK.findall(doc.source.text)) + 1
    if drafts[-1].last_line >= last_line and drafts[-1].kind != "commentary":
        drafts[-1].flags.append("truncated")


def _freeze(doc: CleanDoc, drafts: list[_Draft], analyses, memo: dict | None = None) -> list[Rule]:
    memo = {} if memo is None else memo
    made = []
    seen: dict[tuple[str, str], int] = {}
    for d in drafts:
        # Most records recur word for word from edition to edition: what a record's paragraphs give is
        # worked out once per distinct draft (its parts: paragraph texts, whose hashes Python keeps, and offsets).
        key = (d.kind, d.rule_id, d.title, tuple(d.text), tuple(d.examples), tuple(d.raw_examples))
        body = memo.get(key)
        if body is None:
            body = memo[key] = _body(d, analyses)
        number = body[0], d.rule_id
        seen[number] = occurrence = seen.get(number, 0) + 1
        made.append((d, body, number, occurrence))
    # a number printed twice is flagged on each of its records as they are made, not on copies made afterwards
    duplicated = {k for k, n in seen.items() if n > 1}
    edition, source, rules = doc.edition or "", doc.source.source_id, []
    for d, body, number, occurrence in made:
        kind, parent, title, text, compare, examples, sentences, references, citations, placeholder = body
        flags = (*d.flags, "placeholder") if placeholder else tuple(d.flags)
        if number in duplicated:
            flags += ("duplicate",)
        rules.append(Rule(edition, source, d.rule_id, kind, parent, title, text, compare, examples, sentences,
                          references, citations, flags, d.first_line, max(d.last_line, d.first_line), occurrence,
                          (), tuple(map(tuple, d.pieces))))
    return rules


def _body(d: _Draft, analyses) -> tuple:
    """What a draft's paragraphs make of its record: kind, parent, title, text, comparison form, examples,
    sentences, references, citations, and whether it is a placeholder."""
    return _made(d.kind, d.rule_id, d.title, [(_cut(p), analyses[p[0]], p[1]) for p in d.text], d.examples,
                 [(_cut(p), analyses[p[0]], p[1]) for p in d.raw_examples])


def _made(kind: str, rule_id: str, title: str, parts: list, examples: list[str], example_parts: list) -> tuple:
    """`_body` of the draft's parts cut from their paragraphs: (text, analysis, offset in the paragraph) each."""
    body = "\n".join(collapse_spaces(strip_citations(t)) for t, _, _ in parts if strip_citations(t))
    kind = kind or kind_of(rule_id, body, len(parts) > 1 or bool(examples))
    text = body
    placeholder = bool(PLACEHOLDER.match(body))
    if kind in ("part", "chapter", "section") and not placeholder:
        title, text = body, ""
    return (kind, parent_of(rule_id, kind), title, text, compare_form(text or title),
            tuple(collapse_spaces(strip_citations(e)) for e in examples), tuple(_sentences(parts)),
            tuple(_references(parts, example_parts, kind)), tuple(_citations(parts, example_parts)), placeholder)


def kind_of(rule_id: str, text: str, has_more: bool) -> str:
    parsed = RuleId.parse(rule_id)
    shape = parsed.shape if parsed else None
    if ".Ruling." in rule_id:
        return "ruling"
    if shape in ("part", "chapter"):
        return shape
    if shape == "rule":
        title_like = 0 < len(text.split()) <= 9 and not text.endswith((".", ":", ";", ")")) and text[:1].isupper()
        return "section" if title_like and not has_more else "rule"
    return "subrule"


def parent_of(rule_id: str, kind: str) -> str:
    return ruleid.parent(rule_id) if kind in ("ruling", "subrule", "rule", "section", "chapter") else ""


def _sentences(parts) -> Iterable[str]:
    for text, a, base in parts:
        if a is None:
            continue
        for s, e in a.sentences:
            s, e = max(s, base), min(e, base + len(text))
            sentence = strip_citations(text[s - base:e - base]) if e > s else ""
            if sentence:
                yield sentence


def _references(parts: list, example_parts: list, kind: str) -> list[str]:
    """Rules the text and examples point to; commentary also points to the rules it cites."""
    out: dict[str, None] = {}  # in order, once each (a list searched for each target was quadratic)
    for text, a, base in parts + example_parts:
        for s, e, targets in (a.references if a else ()):
            if base <= s and e <= base + len(text):
                out.update(dict.fromkeys(targets))
    if kind == "commentary":
        out.update(dict.fromkeys(c.value for c in _citations(parts, example_parts) if c.source == "CR"))
    return list(out)


def _citations(parts, example_parts=()) -> list[Citation]:
    out = []
    example_no = {id(p): n for n, p in enumerate(_example_heads(example_parts), 1)}
    examples = set(example_parts)  # looked up once a part: `in example_parts` per citation was quadratic
    number = 0
    for part in list(parts) + list(example_parts):
        text, a, base = part
        in_example = part in examples
        if in_example:
            number = example_no.get(id(part), number)
        for s, e, source, value in (a.citations if a else ()):
            if base <= s and e <= base + len(text):
                value = value.replace("/", "-") if re.fullmatch(r"\d{4}/\d\d/\d\d", value) else value
                out.append(Citation(source, value, text[s - base:e - base],
                                    f"example {number}" if in_example else "text"))
    return out


def _example_heads(example_parts):
    """The parts that begin an example (the others continue the one before)."""
    return [p for p in example_parts if p[1] is None or p[1].example]


def rule_order(r: Rule) -> tuple:
    return (r.edition, KIND_ORDER.get(r.kind, 3), natural_key(r.rule_id), r.occurrence, r.source)
