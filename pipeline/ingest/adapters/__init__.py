"""One adapter per source format: SourceDoc -> CleanDoc."""
from pipeline.ingest.adapters import copy, markdown, official, rulings, wiki
from pipeline.ingest.containers import pdf

ADAPTERS = {
    "official": official.clean,
    "pdf": lambda doc: official.clean(doc, furniture=pdf.furniture),
    "docx": official.clean,
    "rtf": official.clean,
    "doc": official.clean,
    "rulings-text": rulings.clean_text,
    "rulings-html": rulings.clean_html,
    "copy": copy.clean,
    "wiki-text": wiki.clean_text,
    "wiki-html": wiki.clean_html,
    "markdown": markdown.clean,
}
