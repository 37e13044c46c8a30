"""Word-level differences as data: operations with character offsets into both texts, and the
class of each change. Reports render these; nothing here knows about HTML. The plain-text redline
([-old-]{+new+}, the swaps of a typography change) is here too, not in cli/: it is data of
query/history.py's answer (the redline, redlines and swaps fields of `history --json`), which the
terminal only prints."""
from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from itertools import accumulate

from rapidfuzz import fuzz

from pipeline.ingest.clean import compare_form
from pipeline.patterns import NUMBER_IN_TEXT
from pipeline.records import Rule, RuleChange

# Rule numbers, words and punctuation, each a token with the spaces after it ("212.2h " is one
# token, not three; leaving spaces out of the sequence keeps difflib fast).
TOKEN = re.compile(r"(?:\d{3}(?:\.\d+[a-z]?(?:-[a-z])?)?(?![\w])|\w+(?:['’]\w+)*|[^\w\s])\s*|^\s+")
SEVERITY = ("unchanged", "cosmetic", "reference", "modified")
MAX_SUBSTITUTION_WORDS = 4
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def word_ops(a: str, b: str) -> tuple[tuple, ...]:
    """Non-equal operations (tag, a_start, a_end, b_start, b_end, old_text, new_text)."""
    if a == b:
        return ()
    ta, tb = TOKEN.findall(a), TOKEN.findall(b)
    oa, ob = _offsets(ta), _offsets(tb)
    ops = []
    for tag, i1, i2, j1, j2 in _merged(SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes(), ta):
        a0, a1, b0, b1 = oa[i1], oa[i2], ob[j1], ob[j2]
        ops.append((tag, a0, a1, b0, b1, a[a0:a1], b[b0:b1]))
    return tuple(ops)


def _merged(opcodes, ta):
    """Non-equal opcodes; adjacent ones are joined ("comes into play" -> "enters the battlefield")."""
    out = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        if out:
            p_tag, p1, p2, q1, q2 = out[-1]
            if p2 == i1 and q2 == j1:
                merged = ("replace" if (p_tag, tag) != ("delete", "delete") and (p_tag, tag) != ("insert", "insert")
                          else tag)
                out[-1] = (merged, p1, i2, q1, j2)
                continue
        out.append((tag, i1, i2, j1, j2))
    return out


def apply_ops(a: str, ops) -> str:
    """Rebuild the new text from the old one and the operations (the property tests rely on it)."""
    out, pos = [], 0
    for _, a0, a1, _, _, _, new_text in ops:
        out.append(a[pos:a0])
        out.append(new_text)
        pos = a1
    out.append(a[pos:])
    return "".join(out)


def _offsets(tokens: list[str]) -> list[int]:
    return list(accumulate(map(len, tokens), initial=0))


def classify_text(a: str, b: str) -> str:
    """unchanged | cosmetic (typography, spacing, punctuation, case) | reference (only cited rule
    numbers differ) | modified (the words changed)."""
    if a == b:
        return "unchanged"
    ca, cb = compare_form(a), compare_form(b)
    if _letters(ca) == _letters(cb):
        return "cosmetic"
    if _letters(NUMBER_IN_TEXT.sub("#", ca)) == _letters(NUMBER_IN_TEXT.sub("#", cb)):
        return "reference"
    return "modified"


def _letters(text: str) -> str:
    """The words, and the brackets of a placeholder: "[this card]" stands for a name, "this card" does not."""
    return " ".join(re.findall(r"[\w#\[\]]+", text.lower()))


def classify(old: Rule, new: Rule) -> str:
    """The most severe class over title, text and examples."""
    parts = [(old.title, new.title), (old.text, new.text)]
    examples_old, examples_new = list(old.examples), list(new.examples)
    if len(examples_old) != len(examples_new):
        parts.append(("\n".join(examples_old), "\n".join(examples_new)))
    else:
        parts += list(zip(examples_old, examples_new))
    return max((classify_text(a, b) for a, b in parts), key=SEVERITY.index)


def substitutions(ops) -> tuple[tuple[str, str], ...]:
    """Short wording swaps ("play" -> "cast", "his or her" -> "their"), lower-cased; rule numbers
    and punctuation-only swaps are not wording."""
    out = []
    for tag, _, _, _, _, old_text, new_text in ops:
        if tag != "replace":
            continue
        a, b = compare_form(old_text).lower(), compare_form(new_text).lower()
        if re.search(r"\d", a + b):
            continue
        words_a, words_b = WORD.findall(a), WORD.findall(b)
        if not words_a or not words_b or words_a == words_b:  # typography or punctuation only
            continue
        if len(words_a) <= MAX_SUBSTITUTION_WORDS and len(words_b) <= MAX_SUBSTITUTION_WORDS:
            out.append((" ".join(words_a), " ".join(words_b)))
    return tuple(out)


def redline(a: str, b: str, ops: tuple | None = None) -> str:
    """A compact one-line redline in plain text: [-old-]{+new+}; `ops`: word_ops(a, b) when known."""
    out, pos = [], 0
    for _tag, a0, a1, _, _, old_text, new_text in word_ops(a, b) if ops is None else ops:
        out.append(a[pos:a0])
        space = old_text[len(old_text.rstrip()):] if old_text.rstrip() and new_text.rstrip() else ""
        if new_text.endswith(space) and space:
            old_text, new_text = old_text[:-len(space)], new_text[:-len(space)]
        if old_text:
            out.append(f"[-{old_text}-]")
        if new_text:
            out.append(f"{{+{new_text}+}}")
        out.append(space)
        pos = a1
    out.append(a[pos:])
    return "".join(out)


def swaps(old, new) -> str:
    """A cosmetic change in one line of plain text: each distinct swap once, with how often it
    happens ("object's -> object’s ×5, don't -> don’t"), where a whole redlined paragraph would
    bury five apostrophes in prose that did not change."""
    pairs = Counter()
    for a, b in [(old.title, new.title), (old.text, new.text), *zip(old.examples, new.examples)]:
        for _, _, _, _, _, old_text, new_text in word_ops(a, b):
            pairs[old_text.strip() or "(space)", new_text.strip() or "(space)"] += 1
    return ", ".join(f"{a} -> {b}" + (f" ×{n}" if n > 1 else "") for (a, b), n in pairs.items())


def redlines(old, new, change: RuleChange | None = None) -> list[str]:
    """The plain-text redlines of a change between two records (anything with title, text and
    examples; either may be None): an added or removed rule whole, else the redline of each part
    that differs (title, text, each example). `change`: the RuleChange made of these very records
    (change_between), whose word operations are used rather than worked out again."""
    if old is None or new is None:
        r, mark = (new, "+") if old is None else (old, "-")
        body = [r.title] if r.title else []
        body += [r.text] if r.text else []
        return [f"{mark} {x}" for x in body + [f"example: {e}" for e in r.examples]]
    known = change is not None
    out = []
    if old.title != new.title:
        out.append(f"title: {redline(old.title, new.title, change.title_ops if known else None)}")
    if old.text != new.text:
        out.append(redline(old.text, new.text, change.ops if known else None))
    a, b = list(old.examples), list(new.examples)
    if len(a) != len(b):
        out.append(f"examples: {redline(chr(10).join(a), chr(10).join(b), change.example_ops[0] if known else None)}")
    else:
        out += [f"example {i}: {redline(x, y, change.example_ops[i - 1] if known else None)}"
                for i, (x, y) in enumerate(zip(a, b), 1) if x != y]
    return out


AGREEMENT = {"unchanged": "same", "cosmetic": "typography", "reference": "references", "modified": "differs"}
MAX_DEPARTURES = 4


def departures(official: Rule, copy: Rule, change: RuleChange) -> str:
    """Where a copy departs from the official text, in words: 'without "symbols"', '"Rule" for
    "rule"', '2 examples missing' (the first few word operations; the rest counted)."""
    said = []
    for tag, _, _, _, _, old_text, new_text in change.ops:
        a, b = old_text.strip(), new_text.strip()
        said.append(f'without "{a}"' if tag == "delete" else f'adds "{b}"' if tag == "insert" else f'"{b}" for "{a}"')
    out = said[:MAX_DEPARTURES] + ([f"{len(said) - MAX_DEPARTURES} more"] if len(said) > MAX_DEPARTURES else [])
    if change.title_ops:
        out.append("title differs")
    lost = len(official.examples) - len(copy.examples)
    if lost:
        out.append(f"{_count(lost)} missing" if lost > 0 else f"{_count(-lost)} more")
    elif any(change.example_ops):
        out.append("examples differ")
    if {"partial", "truncated"} & set(copy.flags):
        out.append("copies only part of it")
    return "; ".join(out)


def observed_note(o: dict) -> str:
    """What a copy's record says of the edition it observes, as the history and the lineage page show it."""
    if o["agreement"] == "absent":
        return f"only in this unofficial copy ({o['differences']})"
    number = f" {o['official_rule_id']}" if o["official_rule_id"] != o["rule_id"] else ""
    what = "word for word" if o["agreement"] == "same" else o["differences"]
    return f"an unofficial copy of {o['observes']}{number}: {what}"


def _count(n: int) -> str:
    return f"{n} example{'' if n == 1 else 's'}"


def change_between(a: Rule, b: Rule, lineage: str, m, change: str | None = None) -> RuleChange:
    ops = word_ops(a.text, b.text)
    title_ops = word_ops(a.title, b.title)
    example_ops = tuple(word_ops(x, y) for x, y in zip(a.examples, b.examples))
    if len(a.examples) != len(b.examples):
        example_ops = (word_ops("\n".join(a.examples), "\n".join(b.examples)),)
    subs = substitutions(ops) + substitutions(title_ops) + tuple(s for e in example_ops for s in substitutions(e))
    similarity = round(fuzz.ratio(_full(a), _full(b)), 1)
    note = ""
    if a.kind == "glossary" and b.kind != "glossary":  # text moved from the glossary into the rules
        note = f"from the glossary entry {a.rule_id}"
    elif a.kind == "glossary" and m.method not in ("merge", "split") \
            and classify_text(a.rule_id, b.rule_id) not in ("unchanged", "cosmetic"):  # a merge names both terms
        change, note = change or "renamed", f"renamed from {a.rule_id}"
    renumbered = a.rule_id != b.rule_id and (a.kind == "glossary") == (b.kind == "glossary")  # a term has no number
    return RuleChange(a.edition, b.edition, lineage, a.rule_id, b.rule_id, b.kind, change or classify(a, b),
                      renumbered, similarity, m.review, m.method, m.score, ops, title_ops, example_ops,
                      subs, note)


def _full(r: Rule) -> str:
    return " ".join([r.compare] + [compare_form(e) for e in r.examples])
