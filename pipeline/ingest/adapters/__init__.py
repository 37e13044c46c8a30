"""One adapter per source format: SourceDoc -> CleanDoc."""
from pipeline.ingest.adapters import copy, markdown, official
from pipeline.ingest.containers import pdf


# The rulings page and wiki pages are read with BeautifulSoup (0.04 s to import): imported when such a
# page is read, not by every command that reads an official file (compare, identify).
def _rulings_text(doc):
    from pipeline.ingest.adapters import rulings
    return rulings.clean_text(doc)


def _rulings_html(doc):
    from pipeline.ingest.adapters import rulings
    return rulings.clean_html(doc)


def _wiki_text(doc):
    from pipeline.ingest.adapters import wiki
    return wiki.clean_text(doc)


def _wiki_html(doc):
    from pipeline.ingest.adapters import wiki
    return wiki.clean_html(doc)


ADAPTERS = {
    "official": official.clean,
    "pdf": lambda doc: official.clean(doc, furniture=pdf.furniture),
    "docx": official.clean,
    "rtf": official.clean,
    "doc": official.clean,
    "rulings-text": _rulings_text,
    "rulings-html": _rulings_html,
    "copy": copy.clean,
    "wiki-text": _wiki_text,
    "wiki-html": _wiki_html,
    "markdown": markdown.clean,
}
