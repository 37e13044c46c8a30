"""DOCX editions: the body's paragraphs in document order, one line each (python-docx).

The 2013 and 2026 DOCX hold one paragraph per rule with blank paragraphs between, the layout of
the TXT editions, so the paragraphs joined by line breaks read exactly like a TXT file. Running
heads and footers live in other parts of the package and are never read."""
from __future__ import annotations

import io
import zipfile

from pipeline.errors import SourceError


def extract_text(data: bytes, path: object = None) -> tuple[str, str]:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.oxml.ns import qn
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as e:
        raise SourceError(f"a ZIP file that is not a readable Word document ({e})", path=path) from None
    body = document.element.body
    # Every paragraph, those inside tables and content controls included, in document order.
    lines = [Paragraph(p, document).text for p in body.iter(qn("w:p"))]
    return "\n".join(lines), "docx (python-docx)"
