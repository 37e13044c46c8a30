"""The whole `cite --check [--fix]` command as data (`check`), and its three renderings: compiler-style lines
(`path:line:col: error: ...`, so editors jump to them), JSON, and SARIF 2.1.0 for code-scanning services."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote

from pipeline import registry
from pipeline.query import cite
from pipeline.query import citefix
from pipeline.query.citecheck import STALE, Fates, Finding, scan
from pipeline.errors import PipelineError

DESCRIPTIONS = {  # SARIF rule descriptions, one per fate
    "renumbered": "The cited rule has another number today (cite --check --fix rewrites it).",
    "merged": "The cited rule was merged into another rule.",
    "removed": "The cited rule was removed (or split into others).",
    "unknown": "No rule has this number in the edition the citation was written against.",
    "ambiguous": "No rule has this number in that edition, and it named different rules in other editions.",
    "range": "The cited range's rules are no longer one run of subrules.",
}


@dataclass(slots=True)
class Checked:
    as_of: str
    to_edition: str
    files: int = 0
    citations: int = 0
    findings: list[Finding] = field(default_factory=list)  # still stale (after --fix: those it could not fix)
    fixed: list[Finding] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)  # "path: why"


def check(paths: list[Path], as_of: str, to: str | None, processed: Path, globs: tuple[str, ...] = (),
          excludes: tuple[str, ...] = (), fix: bool = False) -> Checked:
    """Scan `paths`; with `fix`, rewrite each file's renumbered citations as it is scanned."""
    remapper = cite.from_processed(processed)
    b, note = remapper.edition(to) if to else (remapper.latest, "")
    out = Checked(as_of, b, notes=[note] if note else [])
    if as_of == "git":
        edition_for = citefix.git_editions(remapper.editions, b, out.notes)
    else:
        a, note = remapper.edition(as_of)
        out.notes += [note] if note else []
        out.as_of = a
        edition_for = lambda path: lambda line: a  # noqa: E731
    if fix:
        out.notes += [f"warning: {root} has uncommitted changes: --fix rewrites files in place (commit first "
                      "to review its changes as a diff)" for root in citefix.dirty_trees(paths)[:1]]
    for scanned in scan(paths, Fates(remapper, b), edition_for, globs, excludes, out.skipped):
        out.files += 1
        out.citations += scanned.citations
        done, why = 0, ""
        if fix:
            try:
                done, why = citefix.fix_file(scanned)
            except PipelineError as e:
                why = str(e).removeprefix(f"{scanned.path}: ")
        if why:
            out.left_alone.append(f"{scanned.path}: {why}")
        out.fixed += [f for f in scanned.findings if f.fix] if done else []
        out.findings += [f for f in scanned.findings if not (done and f.fix)]
    return out


def lines(checked: Checked) -> list[str]:
    """One compiler-style line per stale citation (and per citation --fix rewrote)."""
    out = [f"{f.path}:{f.line}:{f.column}: fixed: {f.cited} -> {f.fix}" for f in checked.fixed]
    return out + [f"{f.path}:{f.line}:{f.column}: error: {f.message} [{f.status}]" for f in checked.findings]


def summary(checked: Checked) -> list[str]:
    """What standard error gets: the notes, the files left alone, and one line of counts."""
    counts = Counter(f.status for f in checked.findings)
    stale = ", ".join(f"{s} {counts[s]}" for s in STALE if counts[s])
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(checked.skipped.items()))
    against = "the git history" if checked.as_of == "git" else registry.label(checked.as_of)
    out = [f"note: {n}" if not n.startswith("warning:") else n for n in checked.notes] + checked.left_alone
    out.append(f"{_count(checked.citations, 'citation')} in {_count(checked.files, 'file')}, written against "
               f"{against}, checked against {registry.label(checked.to_edition)}: "
               + (f"fixed {len(checked.fixed)}; " if checked.fixed else "")
               + (f"{len(checked.findings)} stale ({stale})" if checked.findings else "none stale")
               + (f"; {_count(sum(checked.skipped.values()), 'file')} skipped ({skipped})" if skipped else ""))
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def as_json(checked: Checked) -> str:
    data = asdict(checked)
    data["skipped"] = dict(checked.skipped)
    data["stale"] = len(checked.findings)
    return json.dumps(data, ensure_ascii=False, indent=1)


def as_sarif(checked: Checked) -> str:
    """SARIF 2.1.0: one rule per fate, one result per stale citation, with its fix when it has one."""
    rules = [{"id": s, "shortDescription": {"text": DESCRIPTIONS[s]}} for s in STALE]
    results = [_result(f) for f in checked.findings]
    run = {"tool": {"driver": {"name": "crdiff cite --check", "rules": rules}}, "columnKind": "unicodeCodePoints",
           "results": results}
    return json.dumps({"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
                       "runs": [run]}, ensure_ascii=False, indent=1)


def _uri(path: str) -> str:
    p = Path(path)
    return p.resolve().as_uri() if p.is_absolute() else quote(p.as_posix())


def _result(f: Finding) -> dict:
    region = {"startLine": f.line, "startColumn": f.column, "endColumn": f.end_column}
    location = {"artifactLocation": {"uri": _uri(f.path)}, "region": region}
    result = {"ruleId": f.status, "ruleIndex": STALE.index(f.status), "level": "error",
              "message": {"text": f.message}, "locations": [{"physicalLocation": location}]}
    if f.fix:
        result["fixes"] = [{"description": {"text": f"{f.cited} -> {f.fix}"}, "artifactChanges": [
            {"artifactLocation": location["artifactLocation"],
             "replacements": [{"deletedRegion": region, "insertedContent": {"text": f.fix}}]}]}]
    return result
