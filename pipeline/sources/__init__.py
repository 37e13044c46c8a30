"""One adapter per source format: SourceDoc -> CleanDoc."""
from pipeline.sources import copy, markdown, official, rulings, wiki

ADAPTERS = {
    "official": official.clean,
    "rulings-text": rulings.clean_text,
    "rulings-html": rulings.clean_html,
    "copy": copy.clean,
    "wiki-text": wiki.clean_text,
    "wiki-html": wiki.clean_html,
    "markdown": markdown.clean,
}
