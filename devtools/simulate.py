"""A realistic archive for the bench: editions evolved from the newest real one by edits drawn from the
real differences between consecutive editions of a corpus, at the real rate (1-5% of rules a step),
with an occasional renumbering wave (a rule inserted mid-section shifts the rest, references too).

Re-dated copies of a few real files made consecutive editions identical, so alignment and diffs cost
nothing and the bench flattered the run; these editions differ from each other as real ones do.
"""
from __future__ import annotations

import difflib
import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from pipeline.ingest.clean import normalize_newlines
from pipeline.errors import SourceError
from pipeline.ingest.discover import read_source
from pipeline.patterns import CHAPTER_NUMBER, EFFECTIVE_DATE, SUBRULE_LETTERS as LETTERS
from pipeline.ingest.adapters import ADAPTERS

# A numbered rule on a line of its own: "702.19b. Trample ..." / "702.19b Trample ..."
RULE_LINE = re.compile(rf"(?P<num>(?P<rule>{CHAPTER_NUMBER}\.\d+)(?P<letter>[a-z]?))(?P<sep>\.? +)(?P<text>\S.*)")
# The encodings and line endings real editions came in; the simulated files rotate through them so
# that decoding costs what it costs on the archive.
OUTPUT_FORMS = (("utf-8-sig", "\r\n"), ("cp1252", "\r\n"), ("utf-8", "\n"), ("utf-16", "\r\n"), ("utf-8", "\r"))
RATE = (0.01, 0.05)  # share of the rules an edition changes
REWORDING = 0.75  # word similarity of a rewording drawn (lower: another rule that took the number)
WAVE_CHANCE = 0.08  # a renumbering wave in about one step of twelve


@dataclass
class Edits:
    """What really changed between consecutive editions: reworded texts and new rules, and the
    shares of modified, added and removed rules among all changes."""

    reworded: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (old words, new words)
    added: list[str] = field(default_factory=list)
    shares: tuple[float, float, float] = (0.8, 0.15, 0.05)  # modified, added, removed


def numbered(doc) -> dict[str, str]:
    """Rule number -> text, from a cleaned edition's paragraphs (hard-wrapped lines already joined)."""
    out = {}
    for p in doc.paragraphs:
        m = RULE_LINE.fullmatch(p.text.split("\n")[0])
        if m and "\n" not in p.text:
            out.setdefault(m["num"], m["text"])
    return out


def real_edits(docs: list) -> Edits:
    """The differences between each complete edition and the next, by rule number."""
    edits, counts = Edits(), [0, 0, 0]
    maps = [numbered(d) for d in sorted(docs, key=lambda d: d.edition)]
    for old, new in zip(maps, maps[1:]):
        old_texts = set(old.values())
        for num, text in new.items():
            if num not in old:
                if text not in old_texts:
                    edits.added.append(text)
                    counts[1] += 1
            elif old[num] != text:
                a, b = old[num].split(), text.split()
                if difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= REWORDING:
                    edits.reworded.append((a, b))
                    counts[0] += 1
        new_texts = set(new.values())
        counts[2] += sum(num not in new and text not in new_texts for num, text in old.items())
    total = sum(counts)
    if total:  # as many rules come as go, so that editions keep the size of the one they evolve from
        edits.shares = (counts[0] / total, (counts[1] + counts[2]) / total / 2, (counts[1] + counts[2]) / total / 2)
    return edits


def transplant(target: str, old: list[str], new: list[str]) -> str:
    """Apply to `target` an edit shaped like old -> new: each replaced, inserted or deleted run of
    words lands at the same relative place in the target, with the real new words."""
    words = target.split()
    ops = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    for _, i1, i2, j1, j2 in reversed(ops):
        at = min(len(words), round(i1 * len(words) / max(len(old), 1)))
        words[at:at + (i2 - i1)] = new[j1:j2]
    return " ".join(words) or target


class Evolver:
    """The text of an edition as lines, changed one step at a time (seeded: the same corpus and
    seed give the same editions)."""

    def __init__(self, text: str, edits: Edits, seed: int = 15):
        self.lines = normalize_newlines(text).split("\n")
        self.edits = edits
        self.rng = random.Random(seed)

    def rule_lines(self) -> list[int]:
        return [i for i, line in enumerate(self.lines) if RULE_LINE.fullmatch(line)]

    def step(self) -> None:
        rules = self.rule_lines()
        budget = max(1, round(len(rules) * self.rng.uniform(*RATE)))
        modified, added, _ = self.edits.shares
        for _ in range(budget):
            roll = self.rng.random()
            if roll < modified and self.edits.reworded:
                self._reword(self.rng.choice(rules))
            elif roll < modified + added and self.edits.added:
                self._add(self.rng.choice(rules))
            else:
                self._remove(self.rng.choice(rules))
            rules = self.rule_lines() if roll >= modified else rules
        if self.rng.random() < WAVE_CHANCE:
            self._wave(self.rng.choice(rules))

    def _reword(self, i: int) -> None:
        m = RULE_LINE.fullmatch(self.lines[i])
        size = len(m["text"].split())  # of a few real edits, the one made on a text of about this length
        old, new = min(self.rng.sample(self.edits.reworded, min(5, len(self.edits.reworded))),
                       key=lambda e: abs(len(e[0]) - size))
        self.lines[i] = m["num"] + m["sep"] + transplant(m["text"], old, new)

    def _add(self, i: int) -> None:
        """A new last subrule of the rule that line i belongs to."""
        rule = RULE_LINE.fullmatch(self.lines[i])["rule"]
        last = i
        while last + 1 < len(self.lines) and (m := RULE_LINE.fullmatch(self.lines[last + 1])) and m["rule"] == rule:
            last += 1
        letter = RULE_LINE.fullmatch(self.lines[last])["letter"]
        if letter == LETTERS[-1] or (letter and letter not in LETTERS):
            return
        number = rule + (LETTERS[LETTERS.index(letter) + 1] if letter else "a")
        self.lines.insert(last + 1, f"{number} {self.rng.choice(self.edits.added)}")

    def _remove(self, i: int) -> None:
        if RULE_LINE.fullmatch(self.lines[i])["letter"]:  # only subrules go: a rule keeps its number
            del self.lines[i]

    def _wave(self, i: int) -> None:
        """Insert a rule before line i's rule: every later rule of its section moves up by one, and
        every reference to them, everywhere, follows."""
        m = RULE_LINE.fullmatch(self.lines[i])
        section, number = m["rule"].split(".")
        at = int(number)
        shift = re.compile(rf"\b{section}\.(\d+)(?=[a-z]?\b)")  # 702.19, 702.19b (not 702.190)
        text = "\n".join(self.lines)
        text = shift.sub(lambda x: f"{section}.{int(x[1]) + 1}" if int(x[1]) >= at else x[0], text)
        self.lines = text.split("\n")
        moved = f"{section}.{at + 1}"
        while i > 0 and (m := RULE_LINE.fullmatch(self.lines[i - 1])) and m["rule"] == moved:
            i -= 1  # before the first line of the rule that moved, its subrules included
        self.lines.insert(i, f"{section}.{at} {self.rng.choice(self.edits.added)}")

    def text(self, day: date) -> str:
        stamp = day.strftime("%B %d, %Y").replace(" 0", " ")
        text = "\n".join(self.lines)
        return EFFECTIVE_DATE.sub(lambda x: x.group(0).replace(x.group("date"), stamp), text)  # every mention


def dated_editions(corpora: list[Path]) -> list:
    """The official editions of the corpora, complete ones only when there are two or more."""
    docs = []
    for path in sorted(p for c in corpora for p in c.iterdir() if p.is_file()):
        try:
            source = read_source(path, None)
        except SourceError:  # only a file that cannot be read is skipped (not segment.read.clean, which
            continue  # would skip a NotRulesError from the adapter too: that one stops the simulation)
        doc = ADAPTERS[source.format](source)
        if doc.edition:
            docs.append(doc)
    complete = [d for d in docs if d.complete]
    return complete if len(complete) >= 2 else docs


def typical(docs: list):
    """The edition of about the corpus's mean size, one paragraph a line (hard-wrapped lines would
    hide rule texts from the edits): a 110-edition archive then weighs about what the real one does."""
    mean = sum(d.source.n_bytes for d in docs) / len(docs)
    flat = [d for d in docs if not d.wrapped] or docs
    return min(flat, key=lambda d: (abs(d.source.n_bytes - mean), d.edition))


def write_edition(folder: Path, n: int, text: str) -> Path:
    encoding, newline = OUTPUT_FORMS[n % len(OUTPUT_FORMS)]
    try:
        data = text.replace("\n", newline).encode(encoding)
    except UnicodeEncodeError:  # a character the code page lacks: as UTF-8, as real editions did later
        data = text.replace("\n", newline).encode("utf-8")
    path = folder / f"edition-{n:03d}.txt"
    path.write_bytes(data)
    return path


def simulate(corpora: list[Path], count: int, folder: Path, seed: int = 15) -> Evolver:
    """`count` editions in `folder`, one every 76 days from 2000 on, evolved from a typical complete edition
    of the corpora; returns the evolver, so that one more edition can be made later."""
    docs = dated_editions(corpora)
    if len(docs) < 2:
        raise SourceError(f"{', '.join(map(str, corpora))}: the simulation needs two dated editions, "
                          f"found {len(docs)}")
    base = typical(docs)
    edits = real_edits(docs)
    present = set(numbered(base).values())  # a rule added later that the base already has is no new rule
    edits.added = [t for t in edits.added if t not in present]
    evolver = Evolver(base.source.text, edits, seed)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        if n:
            evolver.step()
        write_edition(folder, n, evolver.text(edition_day(n)))
    return evolver


def edition_day(n: int) -> date:
    return date(2000, 1, 1) + timedelta(days=76 * n)
