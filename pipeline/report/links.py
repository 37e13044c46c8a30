"""Where each report page lives: the file names pages link to (and templates, as filters)."""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache




@lru_cache(maxsize=1 << 16)
def lineage_file(lineage_id: str) -> str:
    """2003-10-01:212.1b -> 2003-10-01_212.1b.html; awkward ids (glossary terms) get a hash."""
    safe = lineage_id.replace(":", "_").replace("#", "~")
    if not re.fullmatch(r"[A-Za-z0-9._~-]+", safe):
        digest = hashlib.sha1(lineage_id.encode("utf-8")).hexdigest()[:10]
        safe = re.sub(r"[^A-Za-z0-9._~-]+", "-", safe)[:60] + "-" + digest
    return f"lineage/{safe}.html"


def pair_file(a: str, b: str) -> str:
    return f"pairs/{a}_{b}.html"
