"""`python -m devtools COMMAND` (devtools/__main__.py): the developer commands (accuracy cases, the
blind audit, the benchmark), kept out of the shipped package. Run from the project folder."""
from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.cli.main import EXISTING_DIR, friendly_errors


@click.group(help="Developer commands of crdiff: measure the history and the speed.")
def main():
    pass


@main.command(help="Check the history against hand-checked cases: print precision and recall per relation "
                   "(same, split, merged, renamed, added, removed, unrelated) and every case it gets wrong.")
@click.option("--corpus", type=EXISTING_DIR, required=True, help="A folder holding the editions the cases name.")
@click.option("--cases", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="CSV: from_edition, to_edition, old, new, expected, evidence.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@friendly_errors
def accuracy(corpus: Path, cases: Path, as_json: bool):
    from devtools import accuracy as acc
    verdicts = acc.judge(acc.read_cases(cases), corpus)
    if as_json:
        click.echo(json.dumps({"relations": acc.table(verdicts),
                               "wrong": [{"line": v.case.line, "found": v.found} for v in verdicts if not v.right]},
                              indent=2))
    else:
        click.echo(acc.summary(verdicts))


@main.command("audit-sample", help="Draw a stratified random sample of change rows from a published run (each "
                                     "class on its own, round-robin over the steps) and write a worksheet to judge "
                                     "against the source texts: audit-SEED.csv (to fill) and audit-SEED.md (to read).")
@click.option("--processed", type=EXISTING_DIR, default=Path("processed"), show_default=True,
              help="The published run to sample.")
@click.option("--seed", type=int, required=True, help="A new seed for every audit (write it down with the figures).")
@click.option("--per-class", type=click.IntRange(1, 1000), default=20, show_default=True, help="Rows per class.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("audit"), show_default=True,
              help="Folder for the worksheet.")
@friendly_errors
def audit_sample(processed: Path, seed: int, per_class: int, out: Path):
    from devtools import audit
    rows = audit.sample(processed, seed, per_class)
    sheet, readable = audit.write(rows, out, seed)
    click.echo(f"{len(rows)} rows drawn (seed {seed}): fill {sheet}, read {readable}")


@main.command("audit-score", help="Precision per class, with its 95% interval, of a judged audit worksheet; with "
                                   "--processed (the run it was drawn from), the estimated recall of split pieces "
                                   "and merges.")
@click.argument("sheet", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--processed", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The processed/ folder the sample was drawn from: how many rows each judged row stands for.")
@friendly_errors
def audit_score(sheet: Path, processed: Path | None):
    from devtools import audit
    click.echo(audit.summary(audit.score(sheet)))
    if processed:
        click.echo(audit.recall_summary(audit.recall(audit.read_sheet(sheet), audit.population(processed))))


@main.command(help="Benchmark a corpus folder against every performance target (issue 15), each printed with its "
                   "ratio: full run vs the naive floor, memory, adding one edition, output sizes, compare, --help, "
                   "history.")
@click.option("--corpus", "corpora", multiple=True, type=EXISTING_DIR, required=True,
              help="A folder of official rules files (any names). Repeatable.")
@click.option("--raw", default=Path("raw"), show_default=True, type=EXISTING_DIR, help="The seed folder.")
@click.option("--simulate", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Also run over this many editions evolved from the corpus by its real edits (devtools/simulate.py).")
@click.option("--formats", multiple=True, type=EXISTING_DIR,
              help="A folder of PDF/DOCX/RTF editions: time reading and cleaning each file, beside the corpus's TXT.")
@friendly_errors
def bench(corpora: tuple[Path, ...], raw: Path, simulate: int, formats: tuple[Path, ...]):
    from devtools import bench as b
    b.run(raw, list(corpora), simulate, list(formats), click.echo)
