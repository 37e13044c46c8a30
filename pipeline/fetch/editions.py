"""Fetch every edition from where it is published: the official rules page (the current edition)
and the Wayback Machine (every earlier one, found with its CDX API). Each distinct file is
downloaded once, identified from its own text, stored under a name that says the edition and
format, and recorded with its provenance in the lock file (pipeline.ingest.lockfile). Everything it
reads is bounded (pipeline.fetch.http), every listing row is checked before it is used, and only
one fetch at a time works in a folder."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup

from pipeline.ingest import lockfile as fetch_lock
from pipeline.errors import PipelineError
from pipeline.ingest.lockchecks import snapshot_problem
from pipeline.fetch.http import Client, Download, HttpFailure, remove_stale_parts
from pipeline.fetch.identify import identify
from pipeline.ingest.lockfile import Lock, Skipped, Stored
from pipeline.options import CDX, RULES_PAGE, WAYBACK
from pipeline.ingest.discover import date_in_name

CDX_COLUMNS = ("timestamp", "original", "digest")
CDX_PATTERNS = ("wizards.com/magic/comprules/*", "www.wizards.com/magic/comprules/*",
                "media.wizards.com/*/downloads/MagicCompRules*")
RULES_NAME = re.compile(r"(?i)comp[\W_]?rules|comprehensive")  # MagicCompRules_2009.txt, Comp_Rules.pdf
# An edition is published a few weeks before it takes effect: a snapshot this much older than
# --since cannot hold an edition effective on or after it.
PUBLISHED_AHEAD = timedelta(days=92)


class FetchError(PipelineError):
    """Nothing could be reached: no listing answered, or no download did."""


@dataclass(frozen=True, slots=True)
class Candidate:
    url: str  # where it was published
    fetched_from: str  # what is requested: the url itself, or the snapshot's raw bytes
    snapshot: str  # Wayback timestamp (YYYYMMDDhhmmss), "" for the live page
    digest: str  # CDX digest of the body, "" when unknown
    fmt: str

    @property
    def name(self) -> str:
        return unquote(PurePosixPath(urlsplit(self.url).path).name)


@dataclass
class Summary:
    listings: list[str] = field(default_factory=list)  # what each listing gave, or why it failed
    fetched: list[str] = field(default_factory=list)  # files stored by this run
    had: list[tuple[str, str]] = field(default_factory=list)  # (address, why no download was needed)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (address, why it is not an edition)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (address, why; tried again next run)
    notes: list[str] = field(default_factory=list)  # files moved, incomplete texts
    rejected: list[str] = field(default_factory=list)  # lock entries and listing rows not used, and why


def fetch(into: Path, client: Client, *, rules_page: str = RULES_PAGE, cdx: str = CDX, wayback: str = WAYBACK,
          patterns=CDX_PATTERNS, since: str | None = None, formats=("txt", "pdf", "docx"),
          progress=None) -> Summary:
    """Discover, download what is new, identify and store it; the lock is saved after every file.
    Another fetch running in `into` is an error: the folder is locked for the whole run."""
    into.mkdir(parents=True, exist_ok=True)
    with fetch_lock.exclusive(into):
        fetch_lock.check_folder(into)
        return _fetch(into, client, rules_page, cdx, wayback, patterns, since, formats, progress)


def _fetch(into: Path, client: Client, rules_page: str, cdx: str, wayback: str, patterns, since: str | None,
           formats, progress) -> Summary:
    remove_stale_parts(into)
    lock = fetch_lock.load(into)
    summary = Summary(rejected=list(lock.rejected))
    found = discover(client, summary, rules_page, cdx, wayback, patterns, formats)
    queue = _plan(found, lock, summary, since)
    answered = [_fetch_group(group, into, client, lock, summary, since)
                for group in (progress(queue) if progress else queue)]
    if (into / fetch_lock.VARIANTS).is_dir() and not any((into / fetch_lock.VARIANTS).iterdir()):
        (into / fetch_lock.VARIANTS).rmdir()  # new downloads land there first; keep it only if used
    if answered and not any(answered) and not summary.had:  # not one file could be had
        raise FetchError(f"no download could be made: {summary.failed[0][0]}: {summary.failed[0][1]}")
    return summary


def discover(client: Client, summary: Summary, rules_page: str, cdx: str, wayback: str, patterns,
             formats) -> list[Candidate]:
    """Every file both listings name, the live page's first (newest), then snapshots by time."""
    found, reached, failures = [], False, []
    listings = ([("rules page", rules_page, lambda: page_candidates(client, rules_page, formats))]
                if rules_page else [])
    listings += [(f"CDX {p}", cdx, lambda p=p: cdx_candidates(client, cdx, wayback, p, formats))
                 for p in (patterns if cdx else ())]
    for label, address, listing in listings:
        try:
            items, bad_rows = listing()
        except HttpFailure as e:
            failures.append(f"{address}: {e.reason}")
            summary.listings.append(f"{label}: failed: {e.reason}")
            continue
        reached = True
        summary.listings.append(f"{label}: {len(items)} files")
        if bad_rows:
            summary.rejected.append(f"{address} ({label}): {len(bad_rows)} malformed rows not used; the first: "
                                    f"{bad_rows[0]}")
        found += items
    if not reached:
        said = "; ".join(dict.fromkeys(failures)) or "no listing to ask (no --rules-page, no --cdx)"
        raise FetchError(f"nothing could be reached: {said}")
    live = [c for c in found if not c.snapshot]
    return live + sorted((c for c in found if c.snapshot), key=lambda c: (c.snapshot, c.url))


def page_candidates(client: Client, page: str, formats) -> tuple[list[Candidate], list[str]]:
    """The rules files the page links to (web addresses only), and no malformed rows (a page has none)."""
    soup = BeautifulSoup(client.get_text(page), "html.parser")
    out, seen = [], set()
    for a in soup.find_all("a", href=True):
        url = urljoin(page, a["href"].strip())
        fmt = format_of(url, formats) if urlsplit(url).scheme in ("http", "https") else None
        if fmt and url not in seen:
            seen.add(url)
            out.append(Candidate(url, url, "", "", fmt))
    return out, []


def cdx_candidates(client: Client, cdx: str, wayback: str, pattern: str,
                   formats) -> tuple[list[Candidate], list[str]]:
    """The rules files a CDX listing names, and why each malformed row was not used."""
    text = client.get_text(cdx, {"url": pattern, "output": "json", "filter": "statuscode:200", "collapse": "digest"})
    col, body = cdx_table(text)
    out, bad = [], []
    for n, row in enumerate(body, start=1):
        try:
            c = cdx_candidate(row, col, wayback, formats)
        except ValueError as e:
            bad.append(f"row {n}: {e}")
            continue
        if c:
            out.append(c)
    return out, bad


def cdx_table(text: str) -> tuple[dict[str, int], list]:
    """The CDX answer is a JSON array whose first row names the columns: where each column is, and the rows."""
    try:
        rows = json.loads(text) if text.strip() else []
    except (ValueError, RecursionError) as e:
        why = "nested too deeply" if isinstance(e, RecursionError) else str(e)[:80]
        raise HttpFailure(f"the CDX answer is not JSON ({why}): {text[:80]!r}") from None
    if rows == []:
        return {}, []
    header = rows[0] if isinstance(rows, list) else None
    if not (isinstance(header, list) and all(name in header for name in CDX_COLUMNS)):
        raise HttpFailure(f"the CDX answer is not a JSON table with timestamp, original and digest columns: "
                          f"{text[:80]!r}")
    return {name: header.index(name) for name in CDX_COLUMNS}, rows[1:]


def cdx_candidate(row: object, col: dict[str, int], wayback: str, formats) -> Candidate | None:
    """The rules file a CDX row names (None for another file); ValueError says why a row is malformed."""
    if not (isinstance(row, list) and len(row) > max(col.values())):
        raise ValueError(f"not a list of the header's columns: {row!r:.80}")
    stamp, original, digest = (row[col[k]] for k in CDX_COLUMNS)
    problem = snapshot_problem(stamp) or _address_problem(original, "original") or \
        _address_problem(digest, "digest")
    if problem:
        raise ValueError(problem)
    fmt = format_of(original, formats)
    return Candidate(original, f"{wayback.rstrip('/')}/{stamp}id_/{original}", stamp, digest, fmt) if fmt else None


def _address_problem(value: object, column: str) -> str:
    if isinstance(value, str) and len(value) <= 2048 and value.isprintable():
        return ""
    return f"{column} {value!r:.80} is not an address (printable text of at most 2048 characters)"


def format_of(url: str, formats) -> str | None:
    """The format, when the address names a rules file in one of `formats`."""
    name = unquote(PurePosixPath(urlsplit(url).path).name)
    fmt = PurePosixPath(name).suffix.lower().lstrip(".")
    return fmt if fmt in formats and RULES_NAME.search(name) else None


def _plan(found: list[Candidate], lock: Lock, summary: Summary, since: str | None) -> list[list[Candidate]]:
    """Groups of addresses that serve the same bytes (same CDX digest); each group is downloaded once."""
    groups: dict[str, list[Candidate]] = {}
    for c in found:
        known = lock.known(c.url, c.snapshot, c.digest)
        if known:
            summary.had.append((c.fetched_from, f"already have it: {known}"))
        elif since and _too_old(c, since):
            summary.skipped.append((c.fetched_from, f"published before --since {since}"))
        else:
            groups.setdefault(c.digest or f"address {c.fetched_from}", []).append(c)
    return list(groups.values())


def _too_old(c: Candidate, since: str) -> bool:
    limit = date.fromisoformat(since)
    named = date_in_name(c.name)
    if named and date.fromisoformat(named) < limit:
        return True
    return bool(c.snapshot) and datetime.strptime(c.snapshot[:8], "%Y%m%d").date() < limit - PUBLISHED_AHEAD


def _fetch_group(group: list[Candidate], into: Path, client: Client, lock: Lock, summary: Summary,
                 since: str | None) -> bool:
    """Try the group's addresses in turn until one answers; the others are the same bytes.
    False when no address gave any HTTP answer."""
    answered = False
    for i, c in enumerate(group):
        try:
            download = client.download(c.fetched_from, into)
        except HttpFailure as e:
            answered |= e.permanent
            if e.permanent:  # a dead snapshot stays dead: not asked again
                lock.skipped.append(_skip(c, "", e.reason, ""))
                summary.skipped.append((c.fetched_from, e.reason))
            else:
                summary.failed.append((c.fetched_from, e.reason))
            continue
        kept = _keep(download, c, into, lock, summary, since)
        for twin in group[i + 1:]:
            summary.had.append((twin.fetched_from, f"same digest as {c.fetched_from}"))
            if isinstance(kept, Stored):
                kept.also_at.append({"url": twin.url, "snapshot": twin.snapshot, "digest": twin.digest})
            elif isinstance(kept, Skipped):
                lock.skipped.append(_skip(twin, download.sha256, kept.reason, ""))
        fetch_lock.save(into, lock)
        return True
    fetch_lock.save(into, lock)
    return answered


def _keep(download: Download, c: Candidate, into: Path, lock: Lock, summary: Summary,
          since: str | None) -> Stored | Skipped | None:
    """Store the download as an edition, or say why not. The temporary file never stays behind."""
    try:
        ident = identify(download.path.read_bytes(), c.fmt, c.name)
        if ident.problem:
            skip = _skip(c, download.sha256, ident.problem, download.final_url)
            lock.skipped.append(skip)
            summary.skipped.append((c.fetched_from, ident.problem))
            return skip
        if since and ident.edition < since:
            summary.skipped.append((c.fetched_from, f"edition {ident.edition} is before --since {since}"))
            return None
        twin = lock.by_sha256(download.sha256)
        if twin:
            twin.also_at.append({"url": c.url, "snapshot": c.snapshot, "digest": c.digest})
            summary.had.append((c.fetched_from, f"same bytes as {twin.file}"))
            return twin
        stored = Stored(file=f"{fetch_lock.VARIANTS}/{download.sha256}.{c.fmt}", edition=ident.edition,
                        read_from=ident.read_from, format=c.fmt, complete=ident.complete, sha256=download.sha256,
                        bytes=download.n_bytes, url=c.url, fetched_from=c.fetched_from, snapshot=c.snapshot,
                        digest=c.digest, retrieved=_now(), final_url=download.final_url)
        (into / fetch_lock.VARIANTS).mkdir(exist_ok=True)
        download.path.replace(fetch_lock.in_folder(into, stored.file))
        lock.files.append(stored)
        moves = fetch_lock.settle(into, lock)  # the best copy of each edition takes the plain name
        summary.fetched.append(stored.file + (f" (edition read from the {ident.read_from})"))
        summary.notes += [f"moved {a} -> {b}" for a, b in moves if not a.endswith(f"/{download.sha256}.{c.fmt}")]
        summary.notes += [n for n in fetch_lock.blocked(lock) if n not in summary.notes]
        if not ident.complete:
            summary.notes.append(f"{stored.file}: the text ends early (no credits after the glossary)")
        return stored
    finally:
        download.path.unlink(missing_ok=True)


def _skip(c: Candidate, sha256: str, reason: str, final_url: str) -> Skipped:
    return Skipped(url=c.url, fetched_from=c.fetched_from, snapshot=c.snapshot, digest=c.digest, sha256=sha256,
                   reason=reason, retrieved=_now(), final_url=final_url)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def report_lines(summary: Summary) -> list[str]:
    """The end-of-run summary: what each listing gave, then fetched, already had, skipped and failed."""
    lines = [f"listing: {x}" for x in summary.listings]
    lines += [f"fetched: {f}" for f in summary.fetched]
    lines += [f"skipped: {address}: {why}" for address, why in summary.skipped]
    lines += [f"skipped: {why}" for why in summary.rejected]
    lines += [f"failed: {address}: {why}" for address, why in summary.failed]
    lines += [f"note: {n}" for n in summary.notes]
    lines.append(f"{len(summary.fetched)} fetched, {len(summary.had)} already had, {len(summary.skipped)} skipped, "
                 f"{len(summary.failed)} failed" + (" (run again to retry them)" if summary.failed else "")
                 + (f", {len(summary.rejected)} malformed inputs ignored" if summary.rejected else ""))
    return lines
