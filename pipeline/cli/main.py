"""A thin click CLI: each command parses options and calls one stage of the library."""
from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click

from pipeline import options
from pipeline.errors import PipelineError

DIR = click.Path(file_okay=False, path_type=Path)
EXISTING_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


def inputs(f):
    """--raw and --corpus, shared by every command that reads sources."""
    f = click.option("--corpus", "corpora", multiple=True, type=EXISTING_DIR,
                     help="A folder of official Comprehensive Rules text files (any names). Repeatable.")(f)
    return click.option("--raw", default=Path("raw"), show_default=True, type=EXISTING_DIR,
                        help="Folder with the source documents and manifest.toml.")(f)


def outputs(f):
    return click.option("--processed", default=Path("processed"), show_default=True, type=DIR,
                        help="Where datasets are written.")(f)


def quiet_option(f):
    return click.option("--quiet", "-q", is_flag=True, help="No progress bars or summaries.")(f)


def friendly_errors(f):
    """Library errors become one line on stderr and exit status 1, never a traceback."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except PipelineError as e:
            raise click.ClickException(str(e)) from None
        except BrokenPipeError:  # output piped into `head`: not an error
            sys.stderr.close()
            sys.exit(0)
        except OSError as e:
            where = f"{e.filename}: " if e.filename else ""
            raise click.ClickException(f"{where}{e.strerror or e}") from None
    return wrapper


# --help lists the user commands first (these in this order, then any command in no list), then each
# section below under its own heading.
USER_COMMANDS = ("run", "history", "compare", "cite", "identify", "fetch", "serve")
SECTIONS = (("Stage commands (run does them all, in this order)", ("ingest", "segment", "align", "export", "report")),)


class SectionedGroup(click.Group):
    """A group whose --help shows its commands under headings (click has one list only)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        placed = [name for _, names in SECTIONS for name in names]
        users = [name for name in USER_COMMANDS if name in self.commands]
        users += sorted(name for name in self.commands if name not in users and name not in placed)
        return users + [name for name in placed if name in self.commands]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = [name for name in self.list_commands(ctx) if not self.commands[name].hidden]
        longest = max(map(len, names), default=0)  # one column for the help texts of every section
        heading = {name: title for title, section in SECTIONS for name in section}
        for title in ["Commands", *(title for title, _ in SECTIONS)]:
            rows = [(name.ljust(longest), self.commands[name].get_short_help_str(formatter.width - 6 - longest))
                    for name in names if heading.get(name, "Commands") == title]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _show_version(ctx: click.Context, _param, value: bool) -> None:
    """--version, read from the installed package's metadata only when asked (not at every start)."""
    if not value or ctx.resilient_parsing:
        return
    from importlib import metadata
    try:
        version = metadata.version("crdiff")
    except metadata.PackageNotFoundError:
        version = "unknown (crdiff is not installed: pip install -e .)"
    click.echo(f"crdiff, version {version}")
    ctx.exit()


@click.group(cls=SectionedGroup, help="Clean, segment and version the Magic: The Gathering Comprehensive Rules.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the version and exit.")
def main():
    pass


@main.command(help="Read and clean every source: store the cleaned sources for `segment`; write "
                   "processed/sources and discards (the character ledger).")
@inputs
@outputs
@quiet_option
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the cleaned sources kept in the cache.")
@friendly_errors
def ingest(raw: Path, corpora: tuple[Path, ...], processed: Path, quiet: bool, no_cache: bool):
    from pipeline import run as stages
    result = stages.run_ingest(raw, list(corpora), processed, quiet, use_cache=not no_cache)
    _warn(result)
    if not quiet:
        _summary(result)


@main.command(help="Segment the stored cleaned sources (from `ingest`) into rule records and editions, "
                   "stored for `align`.")
@outputs
@quiet_option
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the paragraph cache.")
@friendly_errors
def segment(processed: Path, quiet: bool, no_cache: bool):
    from pipeline import run as stages
    result = stages.run_segment(processed, quiet, use_cache=not no_cache)
    _warn(result)
    if not quiet:
        _summary(result)


@main.command(help="Align the stored rule records (from `segment`) edition by edition: lineages, changes, "
                   "renumbering runs, stored for `export` (--raw gives overrides.toml).")
@click.option("--raw", default=Path("raw"), show_default=True, type=EXISTING_DIR,
              help="Folder whose overrides.toml forces or forbids matches.")
@outputs
@quiet_option
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the alignment cache.")
@friendly_errors
def align(raw: Path, processed: Path, quiet: bool, no_cache: bool):
    from pipeline import run as stages
    result = stages.run_align(raw, processed, quiet, use_cache=not no_cache)
    _warn(result)
    if not quiet:
        click.echo(f"{len(result.history.changes)} changes over {len(result.editions)} editions", err=True)


@main.command(help="Export the stored records (from `ingest`, `segment` and `align`): every table as CSV, "
                   "Parquet, the SQLite database, datapackage.json and the data dictionary.")
@outputs
@quiet_option
@friendly_errors
def export(processed: Path, quiet: bool):
    from pipeline import run as stages
    result = stages.run_export(processed, quiet)
    if not quiet:
        click.echo(f"{result.records} records exported to {processed}/", err=True)


@main.command(name="report", help="Render the HTML reports from the tables in --processed (read through the "
                                   "typed loader) and the stored cleaned sources.")
@outputs
@click.option("--reports", default=Path("reports"), show_default=True, type=DIR, help="Where HTML is written.")
@quiet_option
@friendly_errors
def report_(processed: Path, reports: Path, quiet: bool):
    from pipeline import run as stages
    written = stages.run_report(processed, reports, quiet)
    if not quiet:
        click.echo(f"wrote {len(written)} files to {reports}/")


@main.command(help="The whole job: ingest, clean, segment, datasets and reports.")
@inputs
@outputs
@click.option("--reports", default=Path("reports"), show_default=True, type=DIR, help="Where HTML is written.")
@click.option("--no-reports", is_flag=True, help="Write the datasets only.")
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the paragraph cache.")
@quiet_option
@friendly_errors
def run(raw: Path, corpora: tuple[Path, ...], processed: Path, reports: Path, no_reports: bool,
        no_cache: bool, quiet: bool):
    from pipeline import run as stages
    result = stages.run_all(raw, list(corpora), processed, None if no_reports else reports, quiet,
                            use_cache=not no_cache)
    _warn(result)
    if result is not None and not quiet:
        _summary(result)
    if not quiet:
        click.echo("nothing changed since the last run: the outputs are up to date" if result is None else
                   f"datasets in {processed}/" + ("" if no_reports else f", reports in {reports}/index.html"))


@main.command(name="fetch", help="Download every official edition (the rules page for the current one, the "
                                 "Wayback Machine for the others) into --into, with a lock file of provenance.")
@click.option("--into", default=Path("corpus"), show_default=True, type=DIR, help="Where the editions are stored.")
@click.option("--rules-page", default=options.RULES_PAGE, show_default=True,
              help="The official rules page ('' skips it).")
@click.option("--cdx", default=options.CDX, show_default=True, help="The Wayback Machine's CDX API ('' skips it).")
@click.option("--wayback", default=options.WAYBACK, show_default=True,
              help="Prefix of a snapshot's raw bytes: PREFIX/<timestamp>id_/<original>.")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), help="Only editions effective on or after this date.")
@click.option("--formats", default="txt,pdf,docx", show_default=True,
              help=f"Comma-separated, of: {', '.join(options.FETCH_FORMATS)}.")
@click.option("--delay", type=click.FloatRange(0), default=1.0, show_default=True,
              help="Seconds between two requests to the same host.")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=60.0, show_default=True,
              help="Seconds to wait for a connection or for data.")
@click.option("--retries", type=click.IntRange(0, 10), default=4, show_default=True,
              help="Tries after the first, with back-off (Retry-After honoured on 429 and 503, up to 600 s; "
                   "a longer one fails that file until the next run).")
@click.option("--deadline", type=click.FloatRange(0, min_open=True),
              help="Seconds for one address in all: connecting, redirects, retries, waits and the whole body "
                   "[default: 15 x --timeout].")
@quiet_option
@friendly_errors
def fetch_(into: Path, rules_page: str, cdx: str, wayback: str, since, formats: str, delay: float, timeout: float,
           retries: int, deadline: float | None, quiet: bool):
    wanted = tuple(f.strip().lower() for f in formats.split(",") if f.strip())
    unknown = [f for f in wanted if f not in options.FETCH_FORMATS]
    if unknown or not wanted:
        raise click.BadParameter(f"{', '.join(unknown) or 'none given'}; known: {', '.join(options.FETCH_FORMATS)}",
                                 param_hint="--formats")
    from pipeline.fetch import editions as fetcher
    from pipeline.run import progress_bar
    client = fetcher.Client(delay=delay, timeout=timeout, retries=retries, deadline=deadline)
    summary = fetcher.fetch(into, client, rules_page=rules_page, cdx=cdx, wayback=wayback, formats=wanted,
                            since=since.date().isoformat() if since else None,
                            progress=progress_bar(quiet, "fetch"))
    for line in fetcher.report_lines(summary):
        if not quiet or line.startswith("failed"):
            click.echo(line, err=line.startswith(("failed", "skipped")))


@main.command(help="Print one rule's history: its number, change class and a redline in each edition (a run of "
                   "unchanged editions on one line), and the splits and merges at the step where they happened.")
@click.argument("rule")
@click.option("--edition", help="Pick the rule by its number in this edition (YYYY-MM-DD, or a set code: M10).")
@click.option("--all", "show_all", is_flag=True, help="One line for every edition, unchanged ones too.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (every edition, always).")
@outputs
@friendly_errors
def history(rule: str, edition: str | None, show_all: bool, as_json: bool, processed: Path):
    from pipeline.cli import render
    from pipeline.query.history import history as rule_history
    lineages = rule_history(processed, rule, edition)
    for note in lineages[0]["query"]["notes"] if lineages else ():
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(lineages, ensure_ascii=False, indent=2, default=render.plain))
        return
    _echo(render.history(lineages, show_all))


@main.command(help="Rewrite the CR citations in TEXT (or a file; - reads standard input), written against the "
                   "edition in force on --as-of, to the numbers of another edition, marking rules that changed "
                   "meaning, were split, merged or removed. With --check: report every stale citation in the files "
                   "and folders given (exit 1 when any is stale, 0 when none, 2 when it cannot check); with --fix "
                   "also rewrite the renumbered ones in place.")
@click.argument("sources", nargs=-1, required=True, metavar="TEXT|FILE|PATH...")
@click.option("--as-of", "as_of", required=True,
              help="The date the text was written (YYYY-MM-DD, or a set code: M10): the edition in force then. "
                   "With --check, also git: each line against the date of the commit that last touched it.")
@click.option("--to", help="The edition (a date: the edition in force then, or a set code) to rewrite to; "
                           "default: the latest.")
@click.option("--check", "check", is_flag=True, help="Scan PATHs (files, folders) for stale citations.")
@click.option("--fix", is_flag=True, help="With --check: rewrite renumbered citations in place, each in its form.")
@click.option("--glob", "globs", multiple=True, help="With --check: only files whose name or relative path "
                                                     "matches (e.g. '*.md'). Repeatable.")
@click.option("--exclude", "excludes", multiple=True, help="With --check: skip files and folders that match. "
                                                           "Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--sarif", is_flag=True, help="With --check: SARIF 2.1.0 on standard output (code scanning).")
@outputs
@friendly_errors
def cite(sources: tuple[str, ...], as_of: str, to: str | None, check: bool, fix: bool, globs: tuple[str, ...],
         excludes: tuple[str, ...], as_json: bool, sarif: bool, processed: Path):
    if check:
        sys.exit(_check(sources, as_of, to, fix, globs, excludes, as_json, sarif, processed))
    if fix or globs or excludes or sarif or len(sources) > 1:
        raise click.UsageError("--fix, --glob, --exclude, --sarif and several PATHs go with --check")
    from pipeline.query.cite import run as remap
    found = remap(sources[0], as_of, to, processed)
    for note in found["notes"]:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False, indent=1))
        return
    from pipeline.cli import render
    _echo(render.cited(found))


def _check(sources: tuple[str, ...], as_of: str, to: str | None, fix: bool, globs: tuple[str, ...],
           excludes: tuple[str, ...], as_json: bool, sarif: bool, processed: Path) -> int:
    """`cite --check`: 1 when a citation is stale, 0 when none is; anything that stops the check is a usage
    error (2), so that CI never reads a missing dataset as a stale citation."""
    from pipeline.query import citerun
    missing = [s for s in sources if not Path(s).exists()]
    if missing or (as_json and sarif):
        raise click.UsageError(f"no such file or folder: {', '.join(missing)}" if missing else
                               "--json and --sarif: one output format")
    try:
        checked = citerun.check([Path(s) for s in sources], as_of, to, processed, globs, excludes, fix)
    except PipelineError as e:
        raise click.UsageError(str(e)) from None
    for line in citerun.summary(checked):
        click.echo(line, err=True)
    out = citerun.as_sarif(checked) if sarif else citerun.as_json(checked) if as_json else None
    click.echo(out if out is not None else "\n".join(citerun.lines(checked)), nl=True) \
        if out is not None or checked.findings or checked.fixed else None
    return 1 if checked.findings else 0


@main.command(help="Tell which editions an undated fragment's text agrees with: the window of editions whose "
                    "rules agree with every rule it holds (examples it leaves out, a last rule cut short and "
                    "straightened quotes do not count against an edition; exact typography narrows the window), "
                    "or the closest. Several FILES are one fragment read together (pieces of one copy), unless "
                    "--each; each file of a DIR is a fragment of its own.")
@click.argument("paths", metavar="FILE|DIR...", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(options.MANIFEST_FORMATS),
              help="The files' format, over what a manifest.toml beside them says or what their text looks like.")
@click.option("--each", is_flag=True, help="Date each file alone, not the files together as one fragment.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@outputs
@friendly_errors
def identify(paths: tuple[Path, ...], fmt: str | None, each: bool, as_json: bool, processed: Path):
    from pipeline.query.identify import fragments, identify_files, summary
    groups = fragments(list(paths), each)
    reports, failed = [], False
    for files in groups:
        try:
            reports.append(summary(identify_files(files, processed, fmt)))
        except PipelineError as e:
            if len(groups) == 1:
                raise
            failed = True
            reports.append({"files": [str(p) for p in files], "error": str(e)})
    if as_json:
        click.echo(json.dumps({"fragments": reports}, ensure_ascii=False, indent=1))
    else:
        from pipeline.cli import render
        for report in reports:
            _echo(render.identified(report, named=len(groups) > 1))
    if failed:
        click.get_current_context().exit(1)


@main.command(help="Compare two editions (dates or set codes, e.g. ARB M10, in --processed) or two official "
                   "rules files.")
@click.argument("a")
@click.argument("b")
@click.option("--all", "show_all", is_flag=True, help="List unchanged rules too.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--report", "html", is_flag=True, help="Also write an HTML page to --reports/compare/.")
@click.option("--reports", default=Path("reports"), show_default=True, type=DIR, help="Where HTML is written.")
@outputs
@friendly_errors
def compare(a: str, b: str, show_all: bool, as_json: bool, html: bool, reports: Path, processed: Path):
    if html or not (Path(a).is_file() and Path(b).is_file()):
        click.echo(_comparison(a, b, show_all, as_json, html, reports, processed), nl=False)
        return
    # Two files: the whole answer is kept by their content and the code, so asking again
    # neither imports spaCy nor segments, aligns or formats anything.
    from pipeline.cache import CACHE_FILE, content_key, remembered
    question = json.dumps([content_key(Path(a)), content_key(Path(b)), show_all, as_json])
    click.echo(remembered(processed / CACHE_FILE, "compare", question, ("spacy", "rapidfuzz", "scipy"),
                          lambda: _comparison(a, b, show_all, as_json, html, reports, processed)), nl=False)


def _comparison(a: str, b: str, show_all: bool, as_json: bool, html: bool, reports: Path, processed: Path) -> str:
    """What `compare` prints on standard output (notes and the page written go to standard error)."""
    from pipeline.cli import render
    from pipeline.query import compare as cmp
    notes: list[str] = []
    old, new = cmp.rules_of(a, processed, notes), cmp.rules_of(b, processed, notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if not Path(a).is_file() and not Path(b).is_file() and not as_json:
        from pipeline.registry import label
        click.echo(f"{label(old[0].edition)} -> {label(new[0].edition)}", err=True)
    changes = cmp.ordered_changes(a, b, old, new, processed)
    if html:
        from pipeline.publish import transaction as publish
        from pipeline.report import build as report
        name = f"{Path(a).stem}_{Path(b).stem}"
        with publish.locked(reports):  # never beside a run writing the same folder, never through a link
            path = report.render_comparison(changes, old, new, reports, name)
        click.echo(f"wrote {path}", err=True)
    olds, news = {r.rule_id: r for r in old}, {r.rule_id: r for r in new}
    if as_json:
        return json.dumps([cmp.described(c, olds.get(c.old_rule_id), news.get(c.new_rule_id)) for c in changes],
                          ensure_ascii=False, indent=1, default=render.plain) + "\n"
    # Changes aligned here (from a file: never the run's recorded ones) of records no number of which is
    # printed twice are the changes of the very records olds and news give.
    diffed = (Path(a).is_file() or Path(b).is_file()) and len(olds) == len(old) and len(news) == len(new)
    return render.comparison(changes, olds, news, show_all, diffed)


@main.command(help="Browse the datasets in Datasette on http://127.0.0.1:PORT (this machine only): "
                   "processed/crdiff.sqlite with its metadata.json (texts in place of their keys, descriptions, "
                   "canned queries). Needs the serve extra: pip install 'crdiff[serve]'.")
@outputs
@click.option("--port", type=click.IntRange(1, 65535), default=8001, show_default=True, help="Port on 127.0.0.1.")
@click.option("--measure", is_flag=True, help="Instead, start it on a free port, fetch every page people open "
                                              "(tables, a search, the canned queries) twice, print the seconds "
                                              "slowest first, and stop.")
@friendly_errors
def serve(processed: Path, port: int, measure: bool):
    from pipeline.cli import serve as server
    if not measure:
        sys.exit(server.serve(processed, port))
    click.echo("first   again  status  page")
    for first, again, status, path in server.measure(processed):
        click.echo(f"{first:6.3f} {again:6.3f}  {status}     {path}")


def _echo(lines) -> None:
    """Lines from render: each a string for standard output or a pair (line, to standard error)."""
    for line in lines:
        text, err = line if isinstance(line, tuple) else (line, False)
        click.echo(text, err=err)


def _warn(result) -> None:
    """Warnings about the run itself (a damaged cache) are shown even with --quiet."""
    from pipeline.cli import render
    for line in render.warnings(result):
        click.echo(line, err=True)


def _summary(result) -> None:
    from pipeline.cli import render
    _echo(render.summary(result))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
