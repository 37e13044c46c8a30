"""Community wiki pages: judge commentary that quotes and cites rules, inside MediaWiki chrome."""
from __future__ import annotations

from bs4 import BeautifulSoup

from pipeline.clean import Ledger
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


def clean_text(doc: SourceDoc) -> CleanDoc:
    ledger = Ledger(doc.text)
    lines = ledger.lines
    verdicts = _classify(lines)
    return _finish(doc, ledger, verdicts)


def clean_html(doc: SourceDoc) -> CleanDoc:
    rendered = render(doc.text)
    ledger = Ledger("\n".join(text for text, _ in rendered))
    return _finish(doc, ledger, [verdict for _, verdict in rendered], html_chars=len(doc.text))


def render(html: str) -> list[tuple[str, str]]:
    """(line text, verdict) pairs in page order: verdict is a role ("heading", "commentary") or a
    discard reason. Chrome inside the content area is swapped for a marked paragraph first, so a
    card image still closes the example before it, as it does on the page."""
    soup = BeautifulSoup(html, "html.parser")
    content = soup.select_one("#mw-content-text") or soup.body or soup
    out: list[tuple[str, str]] = []
    for selector, reason in CONTENT_CHROME.items():
        for node in content.select(selector):
            text = node.get_text(" ", strip=True)
            if node.find_parent(["h1", "h2", "h3", "h4", "p", "li", "dd"]):  # inline: "[edit]" in a heading
                out.append((text, reason))
                node.decompose()
                continue
            marker = soup.new_tag("p", attrs={"data-discard": reason})
            marker.string = text
            node.replace_with(marker)
    title = soup.select_one("#firstHeading, h1")
    if title:
        out.append((title.get_text(" ", strip=True), "page title"))
        title.decompose()
    for block in content.find_all(["h2", "h3", "h4", "p", "li", "dd", "pre"]):
        if block.find_parent(["li", "dd", "p"]):
            continue
        text = block.get_text(" ", strip=True)
        if text:
            out.append((text, _verdict(block, text)))
        block.decompose()
    leftover = content.get_text(" ", strip=True)
    if leftover:
        out.append((leftover, "layout text outside paragraphs"))
    content.decompose()
    rest = soup.get_text(" ", strip=True)
    if rest:
        out.append((rest, CHROME))
    return out


def _verdict(block, text: str) -> str:
    if block.has_attr("data-discard"):
        return block["data-discard"]
    if block.name == "li" and "updated by" in text:
        return "editors' summary"
    if block.name in ("h2", "h3", "h4"):
        following = block.find_next_sibling()
        items = following.find_all("li") if following is not None and following.name in ("ol", "ul") else []
        if items and all("updated by" in li.get_text() for li in items):
            return "editors' summary"
        return "heading"
    return "commentary"


def _classify(lines: list[str]) -> list[str]:
    """Verdict per line of the rendered-text form: a role or a discard reason."""
    verdicts: list[str] = []
    from_line = next((i for i, line in enumerate(lines) if WIKI_FROM.match(line.strip())), None)
    for i, line in enumerate(lines):
        text = line.strip()
        blank_before = _blanks_before(lines, i)
        if not text:
            verdicts.append("blank lines")
        elif IMAGE_NAME.match(text):
            verdicts.append("image file names")
        elif text in WIKI_CHROME or WIKI_FROM.match(text):
            verdicts.append(CHROME)
        elif WIKI_NOTICE.search(text):
            verdicts.append("page notice")
        elif EDITOR_SUMMARY.match(line) or (text == "Summary" and _next_is_summary(lines, i)):
            verdicts.append("editors' summary")
        elif from_line is not None and i < from_line and SHORT_TITLE.match(text):
            verdicts.append("page title")
        elif SHORT_TITLE.match(text) and len(text.split()) <= 5:
            heading = blank_before >= 2 and (i + 1 >= len(lines) or not lines[i + 1].strip())
            verdicts.append("heading" if heading else "card image captions")
        else:
            verdicts.append("commentary")
    return verdicts


def _blanks_before(lines: list[str], i: int) -> int:
    n = 0
    while i - n - 1 >= 0 and not lines[i - n - 1].strip():
        n += 1
    return n if i - n > 0 else 99  # the top of the page counts as a gap


def _next_is_summary(lines: list[str], i: int) -> bool:
    nxt = next((x for x in lines[i + 1:] if x.strip()), "")
    return bool(EDITOR_SUMMARY.match(nxt))


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
