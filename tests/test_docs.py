"""The documentation's links hold: every relative link in README.md, CHANGELOG.md and docs/*.md names a
file of the repository, and every #anchor a heading of the file it points into (GitHub's slugs); and
README.md stays a page a newcomer reads (at most 8 KB). No network: external links are not followed."""
from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 8192  # bytes

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
# [text](target) and ![alt](target); the target in <angle brackets> or bare, then an optional "title".
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^()\s]+(?:\([^()\s]*\)[^()\s]*)*)"
                         r"(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s+(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:id|name)=[\"']([^\"']+)[\"']", re.IGNORECASE)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto: ...


def prose_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, line, the line with its inline code spans blanked) outside fenced code blocks:
    a link or a heading shown as code is not one."""
    out, fence = [], None
    for no, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        out.append((no, line, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text as rendered (no markup), lower-cased, every character
    but letters, marks, digits, connector punctuation (_), spaces and hyphens dropped, spaces to hyphens.
    Hyphens are not collapsed: "A — B" is "a--b"."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "").lower()
    return "".join(c for c in text if c in " -" or _kept(unicodedata.category(c))).replace(" ", "-")


def _kept(category: str) -> bool:
    """Letters, marks, digits and connector punctuation (the underscore) stay in a slug."""
    return category[0] in "LMN" or category == "Pc"


def anchors(path: Path) -> set[str]:
    """Every anchor a Markdown file offers: its headings' slugs (a repeated one gets -1, -2 ...) and
    explicit <a id=...> / <a name=...>."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    out = set()
    for _, line, _ in prose_lines(text):
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    out.update(HTML_ANCHOR.findall(text))
    return out


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link, image and reference definition outside code."""
    out = []
    for no, _, line in prose_lines(text):
        out += [(no, m.group(1)) for m in INLINE_LINK.finditer(line)]
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            out.append((no, definition.group(1)))
    return [(no, target[1:-1] if target.startswith("<") else target) for no, target in out]


def broken(doc: Path) -> list[str]:
    """What is wrong with each relative link of one document, as 'file:line: target: why'."""
    problems = []
    for no, target in links(doc.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        where = f"{doc.relative_to(ROOT)}:{no}: {target}"
        path_part, _, fragment = target.partition("#")
        path_part = unquote(path_part.split("?", 1)[0])
        if path_part.startswith("/"):
            problems.append(f"{where}: an absolute path (GitHub reads it from the site's root, not the repository's)")
            continue
        resolved = (doc.parent / path_part).resolve() if path_part else doc
        if resolved != ROOT and ROOT not in resolved.parents:
            problems.append(f"{where}: outside the repository")
        elif not resolved.exists():
            problems.append(f"{where}: no such file")
        elif fragment and resolved.suffix == ".md" and resolved.is_file() \
                and unquote(fragment) not in anchors(resolved):
            problems.append(f"{where}: no heading of {resolved.relative_to(ROOT)} has the anchor #{fragment}")
    return problems


@pytest.mark.parametrize("heading, expected", [
    ("What a run guarantees", "what-a-run-guarantees"),
    ("`history` and `compare`", "history-and-compare"),
    ("Speed and memory (2 cores)", "speed-and-memory-2-cores"),
    ("2026-11-24: make bench", "2026-11-24-make-bench"),
    ("A — B", "a--b"),  # the dash goes, both spaces stay
    ("`rule_flags`", "rule_flags"),  # an underscore is kept
    ("How right the history is?", "how-right-the-history-is"),
    ("See [the datasets](datasets.md)", "see-the-datasets"),
    ("Décodage", "décodage"),  # letters of any script are kept
])
def test_slug_follows_githubs_rules(heading, expected):
    assert slug(heading) == expected


def test_anchors_number_repeated_headings_and_ignore_code(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n## Notes\n```sh\n# not a heading\n```\n## Notes\n<a id=\"here\"></a>\n", encoding="utf-8")
    assert anchors(page) == {"title", "notes", "notes-1", "here"}


@pytest.mark.parametrize("text, expected", [
    ("see [datasets](datasets.md#loading) and ![chart](img/a.png)", ["datasets.md#loading", "img/a.png"]),
    ('[x](<a b.md> "title") [y](c.md \'t\')', ["a b.md", "c.md"]),
    ("[ref]: ../processed/README.md", ["../processed/README.md"]),
    ("`[not](a-link.md)` and a [CR 204.1a] tag", []),  # code and a bracket with no target are no links
    ("```\n[not](inside-a-fence.md)\n```\n[yes](y.md)", ["y.md"]),
])
def test_links_are_found_in_prose_only(text, expected):
    assert [target for _, target in links(text)] == expected


def test_a_broken_link_and_a_broken_anchor_are_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Bee\n", encoding="utf-8")
    doc = tmp_path / "docs" / "a.md"
    doc.write_text("[ok](b.md#bee) [gone](c.md) [anchor](b.md#wasp) [self](#top) [web](https://example.org/x.md)\n"
                   "# Top\n", encoding="utf-8")
    assert broken(doc) == ["docs/a.md:1: c.md: no such file",
                           "docs/a.md:1: b.md#wasp: no heading of docs/b.md has the anchor #wasp"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    assert doc.exists(), f"{doc.relative_to(ROOT)} is missing"
    assert broken(doc) == []


def test_the_docs_folder_has_an_index_naming_every_page():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    named = {target.partition("#")[0] for _, target in links(index)}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages <= named, f"docs/README.md does not link {sorted(pages - named)}"


def test_readme_is_at_most_8_kb():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_LIMIT, f"README.md is {size:,} bytes; at most {README_LIMIT:,}: move detail into docs/"
