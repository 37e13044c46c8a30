"""Community wiki pages: judge commentary that quotes and cites rules, inside MediaWiki chrome."""
from __future__ import annotations

from dataclasses import dataclass, field

from bs4 import BeautifulSoup, NavigableString, Tag

from pipeline.ingest.clean import LINE_BREAK, Ledger, check_size
from pipeline.patterns import (EDITOR_SUMMARY, EXAMPLE_START, IMAGE_NAME, SHORT_TITLE, WIKI_CHROME, WIKI_FROM,
                               WIKI_NOTICE)
from pipeline.records import CleanDoc, Paragraph, SourceDoc

CHROME = "navigation and page chrome"
# Parts of MediaWiki's content area that are not the article's prose.
CONTENT_CHROME = {
    ".mw-editsection": "edit links",
    "#toc, .toc": "table of contents",
    ".thumb, .thumbcaption, a.image, figure, .gallery": "card image captions",
    ".navbox, .printfooter, .catlinks, #catlinks, .mw-jump-link, #jump-to-nav": CHROME,
    ".notice, .ambox, .metadata": "page notice",
    "script, style, noscript": "scripts and styles",
}
INLINE = ("h1", "h2", "h3", "h4", "p", "li", "dd")  # chrome inside one of these is inline: "[edit]" in a heading
BLOCKS = ("h2", "h3", "h4", "p", "li", "dd", "pre")  # what the article's text is read in


def clean_text(doc: SourceDoc) -> CleanDoc:
    ledger = Ledger(doc.text, doc.path)
    lines = ledger.lines
    verdicts = _classify(lines)
    return _finish(doc, ledger, verdicts)


def clean_html(doc: SourceDoc) -> CleanDoc:
    check_size(doc.text, doc.path)
    # A block's text keeps the line breaks inside it (<pre>, a paragraph written over several lines): the
    # ledger reads it as several lines, so each gets the block's verdict (else the verdicts fell out of step).
    rendered = [(line, verdict) for text, verdict in render(doc.text) for line in LINE_BREAK.split(text)]
    ledger = Ledger("\n".join(text for text, _ in rendered), doc.path)
    return _finish(doc, ledger, [verdict for _, verdict in rendered], html_chars=len(doc.text))


def render(html: str) -> list[tuple[str, str]]:
    """(line text, verdict) pairs in page order: verdict is a role ("heading", "commentary") or a
    discard reason. Chrome inside the content area is read as a marked paragraph of its own, so a
    card image still closes the example before it, as it does on the page.

    The page is read as if each piece set aside were cut out of the tree (chrome, the title, each
    block once read), but the tree is left as it is: bs4 finds a node's place among its siblings by
    a linear search to cut it out, quadratic in how many siblings there are."""
    soup = BeautifulSoup(html, "html.parser")
    content = soup.select_one("#mw-content-text") or soup.body or soup
    page = _Page()
    out = _set_aside_chrome(content, page)
    title = next((t for t in soup.select("#firstHeading, h1") if id(t) not in page.hidden), None)
    if title is not None:
        out.append((page.text(title), "page title"))
        page.gone.add(id(title))
    for block in page.outermost(content, BLOCKS):  # a block inside another is read with it
        text = page.markers[id(block)][1] if id(block) in page.markers else page.text(block)
        if text:
            out.append((text, _verdict(block, text, page)))
        page.gone.add(id(block))
    leftover = page.text(content)
    if leftover:
        out.append((leftover, "layout text outside paragraphs"))
    page.gone.add(id(content))
    rest = page.text(soup) if content is not soup else ""
    if rest:
        out.append((rest, CHROME))
    return out


@dataclass(slots=True)
class _Page:
    """How the page reads once pieces are set aside, by the ids of its nodes (the tree is not changed, so
    they stay unique): the nodes cut out, the chrome read as a marked paragraph holding only its text."""

    gone: set[int] = field(default_factory=set)
    markers: dict[int, tuple[str, str]] = field(default_factory=dict)  # id -> (reason, text)
    hidden: set[int] = field(default_factory=set)  # every node in chrome set aside, the chrome too

    def text(self, tag, separator: str = " ", strip: bool = True) -> str:
        """tag.get_text(separator, strip) of the page with the cut-out nodes gone and each marked one
        read as its text. Like bs4, it keeps the strings of the types the tag is interested in."""
        types = tag.interesting_string_types
        types = tag.MAIN_CONTENT_STRING_TYPES if types is None else types
        types = {types} if isinstance(types, type) else types
        pieces = []
        for node in self.outermost(tag, (), strings=True):
            if id(node) in self.markers:
                node = NavigableString(self.markers[id(node)][1])
            if type(node) in types:
                piece = node.strip() if strip else str(node)
                if piece or not strip:
                    pieces.append(piece)
        return separator.join(pieces)

    def outermost(self, tag, names: tuple[str, ...], strings: bool = False) -> list:
        """The nodes under `tag` named in `names` or marked, in page order, without looking inside them
        or inside cut-out ones; with `strings`, the strings outside them too."""
        found, stack = [], list(reversed(tag.contents))
        while stack:
            node = stack.pop()
            if id(node) in self.gone:
                continue
            if not isinstance(node, Tag):
                if strings and isinstance(node, NavigableString):
                    found.append(node)
            elif node.name in names or id(node) in self.markers:
                found.append(node)
            else:
                stack.extend(reversed(node.contents))
        return found


def _set_aside_chrome(content, page: _Page) -> list[tuple[str, str]]:
    """Chrome inside an inline element ("[edit]" in a heading) is cut out, its text returned with its
    reason; other chrome is marked, to be read as a paragraph. Chrome inside chrome already set aside
    went with it, as in the tree it would have: each node's text is taken once."""
    inline = _inside(content, INLINE)
    out = []
    for selector, reason in CONTENT_CHROME.items():
        for node in content.select(selector):
            if id(node) in page.hidden:
                continue
            text = page.text(node)
            page.hidden.update(map(id, node.descendants))
            page.hidden.add(id(node))
            if id(node) in inline:
                out.append((text, reason))
                page.gone.add(id(node))
            else:
                page.markers[id(node)] = (reason, text)
    return out


def _inside(top, names: tuple[str, ...]) -> set[int]:
    """The ids of the tags under `top` that have an ancestor named in `names`, found in one walk down
    (find_parent from each tag took time quadratic in how deep they nest)."""
    found: set[int] = set()
    start = top.name in names or top.find_parent(names) is not None
    stack = [(child, start) for child in reversed(top.contents)]
    while stack:
        node, under = stack.pop()
        if not isinstance(node, Tag):
            continue
        if under:
            found.add(id(node))
        stack.extend((child, under or node.name in names) for child in reversed(node.contents))
    return found


def _verdict(block, text: str, page: _Page) -> str:
    if id(block) in page.markers:
        return page.markers[id(block)][0]
    if block.name == "li" and "updated by" in text:
        return "editors' summary"
    if block.name in ("h2", "h3", "h4"):
        following = next((s for s in block.next_siblings if isinstance(s, Tag) and id(s) not in page.gone), None)
        is_list = following is not None and following.name in ("ol", "ul") and id(following) not in page.markers
        items = _items(following, page) if is_list else []
        if items and all("updated by" in page.text(li, "", strip=False) for li in _innermost(items, page)):
            return "editors' summary"
        return "heading"
    return "commentary"


def _items(tag, page: _Page) -> list:
    """The list items under `tag` not inside another (marked chrome holds none)."""
    return [node for node in page.outermost(tag, ("li",)) if id(node) not in page.markers]


def _innermost(items: list, page: _Page) -> list:
    """The list items holding no other item, under `items`. They decide whether every item says
    something: an item's text holds the text of every item inside it."""
    out = []
    stack = list(reversed(items))
    while stack:
        item = stack.pop()
        inner = _items(item, page)
        if inner:
            stack.extend(reversed(inner))
        else:
            out.append(item)
    return out


def _classify(lines: list[str]) -> list[str]:
    """Verdict per line of the rendered-text form: a role or a discard reason."""
    verdicts: list[str] = []
    from_line = next((i for i, line in enumerate(lines) if WIKI_FROM.match(line.strip())), None)
    blanks = _blanks_before(lines)
    following = _next_worded(lines)
    for i, line in enumerate(lines):
        text = line.strip()
        if not text:
            verdicts.append("blank lines")
        elif IMAGE_NAME.match(text):
            verdicts.append("image file names")
        elif text in WIKI_CHROME or WIKI_FROM.match(text):
            verdicts.append(CHROME)
        elif WIKI_NOTICE.search(text):
            verdicts.append("page notice")
        elif EDITOR_SUMMARY.match(line) or (text == "Summary" and bool(EDITOR_SUMMARY.match(following[i]))):
            verdicts.append("editors' summary")
        elif from_line is not None and i < from_line and SHORT_TITLE.match(text):
            verdicts.append("page title")
        elif SHORT_TITLE.match(text) and len(text.split()) <= 5:
            heading = blanks[i] >= 2 and (i + 1 >= len(lines) or not lines[i + 1].strip())
            verdicts.append("heading" if heading else "card image captions")
        else:
            verdicts.append("commentary")
    return verdicts


def _blanks_before(lines: list[str]) -> list[int]:
    """Per line, how many blank lines come right before it; 99 when only blank lines do (the top of
    the page counts as a gap)."""
    out, run, top = [], 0, True
    for line in lines:
        out.append(99 if top else run)
        blank = not line.strip()
        run = run + 1 if blank else 0
        top = top and blank
    return out


def _next_worded(lines: list[str]) -> list[str]:
    """Per line, the next line after it that is not blank ("" when none is)."""
    out, nxt = [], ""
    for line in reversed(lines):
        out.append(nxt)
        if line.strip():
            nxt = line
    return out[::-1]


def _finish(doc: SourceDoc, ledger: Ledger, verdicts: list[str], html_chars: int | None = None) -> CleanDoc:
    paragraphs = []
    in_example = False  # an example runs on until a caption, heading or notice closes it
    for (no, line), verdict in zip(ledger.numbered(), verdicts):
        if verdict in ("heading", "commentary"):
            text = ledger.keep_stripped(no, line)
            starts_example = bool(EXAMPLE_START.match(text))
            role = "example-cont" if verdict == "commentary" and in_example and not starts_example else verdict
            in_example = starts_example or role == "example-cont"
            paragraphs.append(Paragraph(text, no, no, role))
        else:
            ledger.drop(no, line, verdict)
            if verdict not in ("blank lines", "line breaks"):
                in_example = False
    if html_chars is not None:
        ledger.drop_markup(html_chars)
    ledger.check(doc.path)
    return CleanDoc(doc, tuple(paragraphs), tuple(ledger.discards), ledger.total, ledger.kept, doc.edition)
