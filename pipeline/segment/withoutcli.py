"""Import spaCy without its command line: spaCy's __init__ imports spacy.cli (typer, requests, weasel,
httpx, jinja2: a third of `import spacy`, 0.16-0.18 s of CPU at every cold `compare`) only to offer
`spacy.info`; spaCy's own pull request #12962 made that import lazy. While spaCy is imported here,
spacy.cli.info is a stand-in whose `info` imports the real one when called; afterwards `import spacy.cli`
loads the real package as usual. Imported by nlp.py before spaCy."""
from __future__ import annotations

import sys
import types


def _real_info(*args, **kwargs):
    from spacy.cli.info import info
    return info(*args, **kwargs)


def _import_spacy() -> None:
    if "spacy" in sys.modules or "spacy.cli" in sys.modules:
        return
    info = types.ModuleType("spacy.cli.info")
    info.info = _real_info
    cli = types.ModuleType("spacy.cli")
    cli.info = info
    sys.modules.update({"spacy.cli": cli, "spacy.cli.info": info})
    try:
        import spacy  # noqa: F401
    finally:
        del sys.modules["spacy.cli"], sys.modules["spacy.cli.info"]


_import_spacy()
