"""What the CLI's options show in `--help` (fetch's addresses and formats, the manifest's formats),
in a module that imports nothing: `--help` and the quick commands never import the fetchers
(requests, BeautifulSoup) or the source adapters to print them."""

RULES_PAGE = "https://magic.wizards.com/en/rules"
CDX = "https://web.archive.org/cdx/search/cdx"
WAYBACK = "https://web.archive.org/web"
FETCH_FORMATS = ("txt", "pdf", "docx", "rtf")
MANIFEST_FORMATS = ("rulings-text", "rulings-html", "copy", "wiki-text", "wiki-html", "markdown")
