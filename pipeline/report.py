"""HTML reports rendered from processed/ with jinja2 (autoescape on, StrictUndefined)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from pipeline.errors import PipelineError
from pipeline.store import write_atomic

NEEDED = ("editions.csv", "sources.csv", "discards.csv")
CLASSES = ("unchanged", "cosmetic", "reference", "modified", "added", "removed", "split", "merged", "first_seen")


def environment() -> Environment:
    return Environment(loader=PackageLoader("pipeline", "templates"), autoescape=select_autoescape(default=True),
                       undefined=StrictUndefined, keep_trailing_newline=True)


def render(processed: Path, reports: Path) -> list[Path]:
    """Write reports/index.html and reports/sources.html; return the paths written."""
    for name in NEEDED:
        if not (processed / name).exists():
            raise PipelineError(f"{name} is missing: run `python -m pipeline run` first", path=processed)
    read = dict(keep_default_na=False, dtype=str)
    editions = pd.read_csv(processed / "editions.csv", **read).to_dict(orient="records")
    sources = pd.read_csv(processed / "sources.csv", **read).to_dict(orient="records")
    discards = pd.read_csv(processed / "discards.csv", **read)
    for e in editions:
        e["sources"] = json.loads(e["sources"])
    for s in sources:
        s["discarded_by_reason"] = json.loads(s["discarded_by_reason"] or "{}")
        s["warnings"] = json.loads(s["warnings"] or "[]")
        s["discards"] = discards[discards["source_id"] == s["source_id"]].to_dict(orient="records")
    steps = _steps(processed)
    env = environment()
    written = []
    for name, context in (("index.html", {"editions": editions, "sources": sources, "steps": steps,
                                          "classes": CLASSES}),
                          ("sources.html", {"sources": sources})):
        path = reports / name
        write_atomic(path, env.get_template(name).render(**context))
        written.append(path)
    css = Path(__file__).parent / "templates" / "style.css"
    write_atomic(reports / "style.css", css.read_bytes())
    return written + [reports / "style.css"]


def _steps(processed: Path) -> list[dict]:
    """Change counts per pair of editions, from changes.csv, with the renumbering runs."""
    path = processed / "changes.csv"
    if not path.exists():
        return []
    changes = pd.read_csv(path, keep_default_na=False, dtype=str, usecols=["from_edition", "to_edition", "change",
                                                                          "renumbered", "review"])
    runs_path = processed / "renumberings.csv"
    runs = pd.read_csv(runs_path, keep_default_na=False, dtype=str) if runs_path.exists() else pd.DataFrame()
    out = []
    for (a, b), group in changes.groupby(["from_edition", "to_edition"], sort=True):
        counts = group["change"].value_counts().to_dict()
        summaries = list(runs[(runs.from_edition == a) & (runs.to_edition == b)]["summary"]) if len(runs) else []
        out.append({"from": a, "to": b, "counts": {c: counts.get(c, 0) for c in CLASSES},
                    "renumbered": int((group["renumbered"] == "True").sum()),
                    "review": int((group["review"] == "True").sum()), "runs": summaries})
    return out
