"""Hostile text inputs: files of a few KB (a few up to a MB) built to make a stage's cost explode (a
regex that backtracks, a nested structure walked again and again, a lookup across every line). Each
must be read and segmented in under 10 s and 1 GB, with a correct result or a one-line rejection that
names the file and the reason. The inputs are built here, in code: no committed binaries.

Each attack runs in a child process (`python tests/ingest/test_hostile_text.py FOLDER`): its peak memory
is the child's own (VmHWM, see own_peak), and a stage that runs away is killed at HARD_LIMIT, so the
test fails rather than hangs. The rewritten patterns are checked against the ones they replace, which
are kept here as the definition of what they must match."""
from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.ingest.clean import MAX_LINE_CHARS, MAX_LINES, TAG_BEFORE_PUNCTUATION
from pipeline.errors import SourceError
from pipeline.ingest.discover import _check_paragraphs
from pipeline.ingest.manifest import Entry, read_manifest
from pipeline.segment.nlp import load
from pipeline.patterns import CITATION, DASH, EDITOR_SUMMARY, RULINGS_BANNER
from pipeline.segment import read
from pipeline.segment.rules import ParagraphCache
from pipeline.ingest.adapters.markdown import heading_span, unemphasize
from pipeline.ingest.adapters.official import FIRST_RULE_ANYWHERE
from children import run_bounded
from conftest import DATA, RAW, archive_files
from test_fuzz import mutate, mutation

SECONDS = 10  # the bound under test
MEMORY = 1 << 30  # bytes
HARD_LIMIT = 120  # seconds: a child still running is killed and the test fails

# --- the inputs -----------------------------------------------------------------------------------


def official(rule: str = "These Magic rules apply to any Magic game.", *, lines: str = "") -> str:
    """A small official edition (found by content: no manifest) with `rule` as rule 100.1 and `lines`
    after it."""
    return ("Magic: The Gathering Comprehensive Rules\n\nThese rules are effective as of June 17, 2011.\n\n"
            "Introduction\n\nThis document is the ultimate authority.\n\nContents\n\n1. Game Concepts\n"
            "Glossary\nCredits\n\n1. Game Concepts\n\n100. General\n\n"
            f"100.1. {rule}\n\n{lines}100.2. A second rule.\n\nGlossary\n\nAbandon\nTo turn a scheme face down.\n\n"
            "Credits\n\nMagic: The Gathering Original Game Design: Richard Garfield\n")


def nested_tables(depth: int, header: bool = False) -> str:
    """A rulings page whose rules table holds a table in a cell, and so on `depth` deep."""
    cell = ("<table><tr><th>Next</th></tr><tr><td>212.{0}a - Rule {0}." if header else "<table><tr><td>212.{0}a")
    return "".join(cell.format(i) for i in range(depth)) + "</td></tr></table>" * depth


def markdown(body: str) -> str:
    return f"# 205. Type Line\n\n*Chapter: Parts of a Card*\n\n205.1. The type line is printed.\n\n{body}\n"


def wiki(body: str) -> str:
    return (f"<html><body><h1 id='firstHeading'>Card Types</h1><div id='mw-content-text'><p>Some commentary "
            f"[CR 204.1a].</p>{body}</div><div id='footer'>Privacy policy</div></body></html>")


def dates(n: int) -> str:
    """`n` lines each stating another effective date."""
    return "".join(f"These rules are effective as of June {1 + i % 28}, {1990 + i // 28}.\n" for i in range(n))


ATTACKS = {  # name -> (format (None: an official edition, found by content), text, why it is refused or None)
    "rulings-html nested tables 10 KB": ("rulings-html", nested_tables(250), None),
    "rulings-html nested tables 80 KB": ("rulings-html", nested_tables(2000), None),
    "rulings-html nested tables with headers 10 KB": ("rulings-html", nested_tables(160, header=True), None),
    "markdown heading spaces 3 KB": ("markdown", markdown("# x" + " " * 3000 + "y"), None),
    "markdown heading spaces 5 KB": ("markdown", markdown("# x" + " " * 5000 + "y"), None),
    "markdown unclosed emphasis": ("markdown", markdown("*a " * 20_000), None),
    "markdown 80,000 heading lines": ("markdown", markdown("".join(f"# Heading {i}\n" for i in range(80_000))),
                                      "a paragraph of 1,108,889 characters (over 1,000,000"),
    "official spaces before a bracket": (None, official("A rule." + " " * 100_000 + "["),
                                         f"line 19: a line of 100,015 characters (over {MAX_LINE_CHARS:,})"),
    "official ideographic spaces before a dash": (None, official("A rule." + "\u3000" * 100_000 + "-"),
                                                  f"line 19: a line of 100,015 characters (over {MAX_LINE_CHARS:,})"),
    "copy wordless lines": ("copy", "212.1e Some rule text here.\n" + "0\n" * 20_000, None),
    "copy long words": ("copy", "212.1e Some rule text here.\n" + ("a" * 99_000 + "\n") * 6, None),
    "wiki-text blank lines": ("wiki-text", "Card Types\n" + "\n" * 20_000 + "Some commentary.\n", None),
    "wiki-text effective-as-of lines": ("wiki-text", dates(10_000), None),
    "official effective-as-of lines": (None, official(lines=dates(10_000) + "\n"), None),
    "official too many lines": (None, official(lines="\n" * MAX_LINES), f"lines (over {MAX_LINES:,}): not a rules"),
    # The same kinds of text kept under the caps (pipeline/ingest/clean.py): read, and still fast.
    "official spaces before a bracket, under the cap": (None, official("A rule." + " " * 99_000 + "[CR 100.1"), None),
    "official ideographic spaces before a dash, under the cap":
        (None, official("A rule." + "\u3000" * 99_000 + "-"), None),
    "official blank lines": (None, official(lines="\n" * (MAX_LINES - 100)), None),
    "official long word of brackets": (None, official("A rule " + ")" * 99_000 + "."), None),
    "official citations": (None, official("".join(f"[CR {100 + i % 800}.{i % 97}a]. " for i in range(6000))), None),
    "official rule continued by paragraphs of citations": (None, official(lines="".join(
        "".join(f"[CR {100 + i % 800}.{i % 97}a]. " for i in range(j, j + 6000)) + "\n\n" for j in range(12))), None),
    "official rule with 40,000 references": (None, official(lines="".join(
        "".join(f"see rule {100 + i % 800}.{i}a, " for i in range(j, j + 4000)) + "\n\n"
        for j in range(0, 40_000, 4000))), None),
    "markdown 20,000 headings": ("markdown", markdown("".join(f"# Heading {i}\n\n" for i in range(20_000))), None),
    "markdown emphasis runs": ("markdown", markdown("**a*" * 20_000 + "\n\n" + "_" * 99_000), None),
    "rulings-text spaces": ("rulings-text", "212.3 - Creatures" + " " * 99_000 + "212.2a - A rule.\n"
                            + " " * 99_000 + "x\n", None),
    "rulings-html spaces": ("rulings-html", "<table><tr><td>212.3 - Creatures" + " " * 99_000
                            + "212.2a - A rule.</td></tr></table>", None),
    "rulings-html 20,000 rows": ("rulings-html", "<table>" + "".join(
        f"<tr><td>212.{i}a - Rule {i}.</td></tr>\n" for i in range(20_000)) + "</table>", None),
    "wiki-text summary lines": ("wiki-text", "Summary\n" * 20_000 + "1." + " " * 99_000 + "x\n", None),
    "wiki-html nested chrome": ("wiki-html", wiki("<div class='thumb'>cap " * 5000 + "</div>" * 5000), None),
    "wiki-html nested lists": ("wiki-html", wiki("<h2>Summary</h2><ul>" + "<li>a updated by b<ul>" * 5000
                                                 + "</ul></li>" * 5000 + "</ul>"), None),
    "wiki-html sibling paragraphs and chrome": ("wiki-html", wiki(
        "".join(f"<p>Paragraph {i}.</p>\n<div class='thumb'>Image {i}</div>\n" for i in range(5000))), None),
}
QUADRATIC_ELSEWHERE: dict[str, str] = {}  # attacks known to cost too much: each an xfail naming where


# --- the child: read and segment one folder, as the pipeline does ---------------------------------

def write_source(folder: Path, fmt: str | None, text: str, name: str = "attack.txt") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    if fmt is not None:
        (folder / "manifest.toml").write_text(
            f'[[source]]\nfile = "{name}"\nformat = "{fmt}"\nkind = "{KINDS[fmt]}"\n'
            'edition = "2011-06-17"\nlanguage = "en"\n', encoding="utf-8")
    return path


KINDS = {"rulings-html": "rulings page", "rulings-text": "rulings page", "markdown": "official rules",
         "copy": "copy", "wiki-text": "commentary", "wiki-html": "commentary"}


def read_and_segment(folder: Path) -> dict:
    """What the child prints: seconds to ingest and segment the folder, what was read, what refused."""
    from pipeline import run as stages
    load()
    start = time.perf_counter()
    result = stages._ingest(folder, [], quiet=True)
    if result.ingested.docs:
        stages._segment(result, None, quiet=True)
    return {"seconds": time.perf_counter() - start, "records": len(result.rules),
            "rejections": [[r.path.name, r.reason] for r in result.ingested.rejections], "peak": own_peak()}


def own_peak() -> int:
    """This process's peak resident memory in bytes (VmHWM). Not its rusage: on Linux a child's
    ru_maxrss starts at its parent's peak when it is spawned (the test process, past 1 GB late in a
    whole run), so it would measure the test runner, not the stage."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def run_child(folder: Path) -> dict:
    """Run read_and_segment in a child process: its report, plus its peak memory in bytes."""
    out, err = folder.parent / "child.out", folder.parent / "child.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        done = run_bounded([sys.executable, __file__, str(folder)], HARD_LIMIT, stdout, stderr)
    if done is None:
        return {"seconds": float("inf"), "killed": True, "memory": 0, "records": 0, "rejections": []}
    code, _ = done
    assert code == 0, err.read_text()[-3000:]
    report = json.loads(out.read_text().splitlines()[-1])
    return {**report, "memory": report.pop("peak")}


def check_bounded(report: dict, path: Path, refused: str | None) -> None:
    assert report["seconds"] < SECONDS, report
    assert report["memory"] < MEMORY, report
    if refused is None:
        assert report["records"] and not report["rejections"], report
        return
    [(name, reason)] = report["rejections"]  # one line naming the file and the reason
    assert name == path.name and refused in reason and "\n" not in reason, report


def hostile(name: str):
    marks = [pytest.mark.slow]
    if name in QUADRATIC_ELSEWHERE:
        marks.append(pytest.mark.xfail(reason=QUADRATIC_ELSEWHERE[name], strict=True))
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", [hostile(name) for name in ATTACKS])
def test_hostile_input_is_read_or_refused_within_bounds(name, tmp_path):
    fmt, text, refused = ATTACKS[name]
    path = write_source(tmp_path / "raw", fmt, text)
    check_bounded(run_child(tmp_path / "raw"), path, refused)


# --- the rewritten patterns match what the old ones did ------------------------------------------

OLD_CITATION = (r"\[(?P<src>[A-Z][\w' .&-]*?)\s+(?P<val>\d{4}/\d{2}/\d{2}|\d{3}(?:\.\d+[a-z]?)?)\]"
                r"|\{\{CR\|(?P<tval>\d{3}(?:\.\d+[a-z]?)?)\}\}?")
OLD = {
    "citation": re.compile(OLD_CITATION),
    "tag before punctuation": re.compile(rf"\s*(?:{OLD_CITATION})(?=[.,;:!?])"),
    "dash": re.compile(r"\s+-\s+|\s*(?:--|—|–)\s*"),
    "banner": re.compile(r"^\s*\|?\s*This search based on the (?P<date>[A-Z][a-z]+ \d{1,2}, \d{4}) release of the "
                         r"Rulings\.\s*$"),
    "summary": re.compile(r"^\s*\d+\.\s+.+\s-{2,3}\s+updated by\s+.+$"),
    "heading": re.compile(r"^(?P<marks>#{1,6})\s+(?P<text>.*?)\s*#*\s*$"),
    "emphasis": re.compile(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1"),
    "first rule": re.compile(r"(?m)^\s*100\.\s?1[a-z]?\.?\s"),
}
SPACES = [" ", "  ", "\t", "\n", "\r", "\u3000", "\u00a0", "\x0b"]


def pieces(*words: str):
    """Texts made of these pieces and spaces: what the patterns look for, and near misses."""
    return st.lists(st.sampled_from([*words, *SPACES, "x", "A", "."]), max_size=14).map("".join)


CITATION_TEXT = pieces("[", "]", "{{CR|", "}}", "}", "CR", "CompRules", "D'Angelo", "Sight & FAQ-", "2007/10/01",
                       "204.1a", "100", "204.", ",", "!", ";", "[A")


def matches(pattern, text):
    return [(m.span(), m.groups()) for m in pattern.finditer(text)]


@given(CITATION_TEXT)
def test_citation_matches_as_before(text):
    assert matches(CITATION, text) == matches(OLD["citation"], text)
    assert TAG_BEFORE_PUNCTUATION.sub("", text) == OLD["tag before punctuation"].sub("", text)


@given(pieces("-", "--", "—", "–", "a", "?", "- -"))
def test_dash_matches_as_before(text):
    assert matches(DASH, text) == matches(OLD["dash"], text)


@given(pieces("|", "This search based on the March 17, 2008 release of the Rulings.", "This search"))
def test_rulings_banner_matches_as_before(text):
    assert matches(RULINGS_BANNER, text) == matches(OLD["banner"], text)


@given(pieces("1.", "12", "--", "---", "-", "updated by", "updated", " by ", "Artifacts").filter(
    lambda text: "\n" not in text))  # a line
def test_editors_summary_matches_as_before(text):
    assert bool(EDITOR_SUMMARY.match(text)) == bool(OLD["summary"].match(text))


@given(pieces("#", "##", "#######", "# ", "y", "205. Type", "#x").filter(lambda text: "\n" not in text))  # a line
def test_markdown_heading_as_before(text):
    old = OLD["heading"].match(text)
    assert heading_span(text) == (old.span("text") if old else None)


@given(pieces("*", "**", "_", "__", "***", "a", "*a ", "_b_", "a*", "\\*"))
def test_markdown_emphasis_as_before(text):
    assert unemphasize(text) == OLD["emphasis"].sub(r"\2", text)
    assert unemphasize(text, lambda whole, inner: f"<{whole}|{inner}>") == \
        OLD["emphasis"].sub(lambda m: f"<{m.group(0)}|{m.group(2)}>", text)


@given(pieces("100.1", "100.1a", "100. 1", "100.1.", "x100.1 ", "\n100.1 "))
def test_first_rule_found_as_before(text):
    assert bool(FIRST_RULE_ANYWHERE.search(text)) == bool(OLD["first rule"].search(text))
    assert len(FIRST_RULE_ANYWHERE.findall(text)) == len(OLD["first rule"].findall(text))


@functools.cache
def spacy_affix_searches():
    """spaCy's own prefix and suffix searches, as the tokenizer had them before they were bounded."""
    from spacy.util import compile_prefix_regex, compile_suffix_regex
    defaults = load().Defaults
    return compile_prefix_regex(defaults.prefixes).search, compile_suffix_regex(defaults.suffixes).search


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([".", "..", ")", "(", "'s", "’s", "km", "1", "°F", "x", "A", "AB", '"', "”", "!",
                                 "…", "$", "US$", "-", "—", "." * 70, "." * 130, ")" * 70, "a" * 63]),
                max_size=12).map("".join))
def test_tokenizer_affix_searches_find_what_spacy_does(word):
    prefix_search, suffix_search = spacy_affix_searches()
    tokenizer = load().tokenizer.tokenizer
    assert taken(tokenizer.suffix_search(word)) == taken(suffix_search(word))
    assert taken(tokenizer.prefix_search(word)) == taken(prefix_search(word))


def taken(match) -> int:
    """How many characters spaCy splits off for an affix search's match."""
    return match.end() - match.start() if match else 0


def test_a_long_word_is_tokenized_in_pieces_that_keep_the_text():
    text = "see rule 100.1 " + "(" * 2500 + "x" + ")" * 2500 + ". Then 100.2."
    doc = load().make_doc(text)
    assert doc.text == text and len(doc) > 5000
    assert [t.text for t in doc][:4] == ["see", "rule", "100.1", "("]


# --- fuzz: every text adapter on mutated real files, each example within the bound ------------------

def text_seeds() -> list[tuple[Path, Entry | None]]:
    """Seeds for every text adapter: the manifest's sources (rulings-text, copy, wiki-text, markdown), the
    HTML fixtures (rulings-html, wiki-html), and two official editions (official and its glossary)."""
    seeds = sorted(read_manifest(RAW).items())
    for name, fmt, kind in (("rulings_page.html", "rulings-html", "rulings page"),
                            ("wiki_page.html", "wiki-html", "commentary")):
        path = (DATA / name).resolve()
        seeds.append((path, Entry(path, fmt, kind, "2008-03-17", None, "en", "", "", 1)))
    return seeds + [(p, None) for p in archive_files()[:1] + archive_files()[-1:] if p.exists()]


TEXT_SEEDS = text_seeds()
FUZZ_CACHE = ParagraphCache()  # shared: unchanged paragraphs are analysed once across examples
RUNS = st.sampled_from([" ", "\u3000", "\n", "*a ", "[A ", "#", "- ", "(", ")", "<table><tr><td>", "<li>", "0\n",
                        "\r\n\r\n", "updated by ", "_", "[CR 100.1]. "])
hostile_run = st.tuples(st.floats(0, 1), RUNS, st.integers(100, 20_000))


def insert_runs(data: bytes, runs) -> bytes:
    for where, run, times in runs:
        i = int(where * len(data))
        data = data[:i] + (run * times).encode() + data[i:]
    return data


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 40)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=st.sampled_from(TEXT_SEEDS), mutations=st.lists(mutation, max_size=4),
       runs=st.lists(hostile_run, min_size=1, max_size=3))
def test_every_text_adapter_reads_or_refuses_a_mutated_file_in_bounded_time(source, mutations, runs):
    path, entry = source
    data = insert_runs(mutate(path.read_bytes(), mutations), runs)
    start = time.perf_counter()
    try:
        clean = read.clean(path, entry, data)
        _check_paragraphs(clean, path)
    except SourceError as e:  # a rejection, with a reason: what ingest records and goes on from
        assert e.message and "\n" not in e.message
        return
    read.rules([clean], FUZZ_CACHE)
    assert time.perf_counter() - start < SECONDS
    assert clean.chars_kept + sum(clean.discarded_by_reason().values()) == clean.chars_total


if __name__ == "__main__":
    print(json.dumps(read_and_segment(Path(sys.argv[1]))))
