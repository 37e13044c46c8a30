"""DOCX editions: the body's paragraphs in document order, one line each (python-docx).

The 2013 and 2026 DOCX hold one paragraph per rule with blank paragraphs between, the layout of
the TXT editions, so the paragraphs joined by line breaks read exactly like a TXT file. Running
heads and footers live in other parts of the package and are never read.

python-docx decompresses and parses every part at once, so the package is measured first, part by
part and without keeping what it inflates: a zip bomb or a body of millions of tags is refused
before python-docx sees it."""
from __future__ import annotations

import io
import zipfile
from itertools import islice

from pipeline.errors import SourceError
from pipeline.ingest.containers import (CHARACTERS, INFLATED, MAX_PARAGRAPHS, MAX_XML_TAGS, MAX_ZIP_MEMBERS,
                                         inflate_budget, over_cap, text_budget)

CENTRAL_ENTRY = b"PK\x01\x02"  # one per part in the ZIP's directory
CHUNK = 1 << 20


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.oxml.ns import qn
    from docx.text.paragraph import Paragraph

    check_package(data, path)
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as e:
        raise SourceError(f"a ZIP file that is not a readable Word document ({e})", path=path) from None
    body = document.element.body
    # Every paragraph, those inside tables and content controls included, in document order.
    paragraphs = list(islice(body.iter(qn("w:p")), MAX_PARAGRAPHS + 1))
    if len(paragraphs) > MAX_PARAGRAPHS:
        raise over_cap("a DOCX of", MAX_PARAGRAPHS, "paragraphs", path)
    lines, chars, budget = [], 0, text_budget(len(data))
    for p in paragraphs:
        lines.append(Paragraph(p, document).text)
        chars += len(lines[-1]) + 1
        if chars > budget:  # stop as soon as the text is past the cap, not after the last paragraph
            raise over_cap("text of", budget, CHARACTERS, path)
    return "\n".join(lines), "docx (python-docx)"


def check_package(data: bytes, path: object = None) -> None:
    """Refuse a package with too many parts, parts that inflate past the budget, or too many XML tags.
    A ZIP that cannot be opened is left to python-docx, whose error says so."""
    if data.count(CENTRAL_ENTRY) > MAX_ZIP_MEMBERS:  # before ZipFile builds an object per entry
        raise over_cap("a ZIP of", MAX_ZIP_MEMBERS, "parts", path)
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return
    budget, inflated, tags = inflate_budget(len(data)), 0, 0
    for info in package.infolist():
        for chunk in _member_chunks(package, info):
            inflated += len(chunk)
            tags += chunk.count(b"<")  # every part: a part's name does not say python-docx won't parse it
            if inflated > budget:
                raise over_cap("its parts inflate to", budget, INFLATED, path)
    if tags > MAX_XML_TAGS:
        raise over_cap("a DOCX whose parts hold", MAX_XML_TAGS, "XML tags", path)


def _member_chunks(package: zipfile.ZipFile, info: zipfile.ZipInfo):
    """The part's bytes, inflated a chunk at a time. A part that cannot be read ends early: python-docx
    reports it if it reads that part."""
    try:
        with package.open(info) as member:
            while chunk := member.read(CHUNK):
                yield chunk
    except Exception:  # a bad CRC, encryption, a damaged stream: python-docx reports it if it reads the part
        return
