"""A thin click CLI: each command parses options and calls one stage of the library."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from pipeline import report, stages
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
        except OSError as e:
            raise click.ClickException(f"{e.filename or ''}: {e.strerror or e}") from None
    return wrapper


@click.group(help="Clean, segment and version the Magic: The Gathering Comprehensive Rules.")
def main():
    pass


@main.command(help="Read and clean every source; write processed/sources.csv and discards.csv.")
@inputs
@outputs
@quiet_option
@friendly_errors
def ingest(raw: Path, corpora: tuple[Path, ...], processed: Path, quiet: bool):
    result = stages.run_ingest(raw, list(corpora), processed, quiet)
    if not quiet:
        _summary(result)


@main.command(help="Ingest and segment into rule records; write rules, editions, glossary and sources tables.")
@inputs
@outputs
@quiet_option
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the paragraph cache.")
@friendly_errors
def segment(raw: Path, corpora: tuple[Path, ...], processed: Path, quiet: bool, no_cache: bool):
    result = stages.run_segment(raw, list(corpora), processed, quiet, use_cache=not no_cache)
    if not quiet:
        _summary(result)


@main.command(name="report", help="Render the HTML reports from the datasets in --processed.")
@outputs
@click.option("--reports", default=Path("reports"), show_default=True, type=DIR, help="Where HTML is written.")
@quiet_option
@friendly_errors
def report_(processed: Path, reports: Path, quiet: bool):
    written = report.render(processed, reports)
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
    result = stages.run_segment(raw, list(corpora), processed, quiet, use_cache=not no_cache)
    if not no_reports:
        report.render(processed, reports)
    if not quiet:
        _summary(result)
        click.echo(f"datasets in {processed}/" + ("" if no_reports else f", reports in {reports}/index.html"))


def _summary(result: stages.Result) -> None:
    ing = result.ingested
    for doc in ing.docs:
        s = doc.source
        click.echo(f"{s.source_id:<24} {s.format:<12} {doc.edition or 'unknown':<10} {s.encoding:<10} "
                   f"kept {doc.chars_kept:>7} of {doc.chars_total:>7} chars")
        for w in doc.warnings:
            click.echo(f"  warning: {w}")
    for r in ing.rejections:
        click.echo(f"{r.path}: rejected: {r.reason}", err=True)
    if result.editions:
        click.echo(f"{len(result.rules)} records in {len(result.editions)} editions "
                   f"({result.cache[0]} paragraphs analysed, {result.cache[1]} cached)")
    timing = ", ".join(f"{k} {v:.1f}s" for k, v in result.seconds.items())
    click.echo(f"time: {timing}", err=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
