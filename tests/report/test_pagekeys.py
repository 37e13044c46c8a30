"""Pages whose inputs did not change are left in place without being rendered, and the reports come
out byte for byte as a full render into an empty folder would write them."""
import json
import os
import shutil
import sys

import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner

from pipeline.report import pagekeys
from pipeline.report.links import lineage_file
from pipeline.publish import transaction as publish
from pipeline.report import build as report
from pipeline.cli.main import main
from conftest import RAW, archive_files, needs_archive


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def skipped(monkeypatch):
    """The pages a render left in place without rendering them, in order."""
    names: list[str] = []
    writer = report.Writer

    def counting(reports, written):
        put = writer(reports, written)
        skip = put.skip

        def counted(name, key):
            kept = skip(name, key)
            if kept:
                names.append(name)
            return kept
        put.skip = counted
        return put
    monkeypatch.setattr(report, "Writer", counting)
    return names


def corpus_of(tmp_path, *editions):
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for index in editions:
        shutil.copy(archive_files()[index], corpus)
    return corpus


def run(tmp_path, raw=RAW, corpus=None):
    args = ["run", "--raw", raw, "--processed", tmp_path / "p", "--reports", tmp_path / "r", "-q"]
    assert invoke(*args, *(["--corpus", corpus] if corpus else [])).exit_code == 0


def assert_as_a_full_render(tmp_path):
    """reports/ holds exactly what rendering every page into an empty folder writes (run.json too:
    same tables, same run id, same bytes)."""
    fresh = tmp_path / "fresh"  # beside r/: the index's links to the datasets read the same
    assert invoke("report", "--processed", tmp_path / "p", "--reports", fresh, "-q").exit_code == 0
    files = lambda root: sorted(p.relative_to(root) for p in root.rglob("*")  # noqa: E731
                                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    assert files(tmp_path / "r") == files(fresh)
    for name in files(fresh):
        assert (tmp_path / "r" / name).read_bytes() == (fresh / name).read_bytes(), name


def edited_seed(tmp_path):
    raw = tmp_path / "raw2"
    shutil.copytree(RAW, raw)
    seed = raw / "004_f1d686327d0145de.txt"
    seed.write_text(seed.read_text(encoding="utf-8").replace(" player", " gamer", 1), encoding="utf-8")
    return raw


@needs_archive
def test_adding_an_edition_renders_only_what_it_changes(tmp_path, skipped):
    run(tmp_path, corpus=corpus_of(tmp_path, 0, 1))  # two editions: a step (the seeds are copies of them: no steps)
    assert skipped == []  # nothing published yet: every page is rendered
    run(tmp_path, corpus=corpus_of(tmp_path, 0, 1, -1))  # the newest edition, after all the others
    kinds = {name.split("/")[0] for name in skipped}
    assert {"pairs", "editions", "sources", "lineage"} <= kinds
    assert_as_a_full_render(tmp_path)


@needs_archive
def test_a_new_edition_renders_only_the_pages_of_the_rules_it_changed(tmp_path, skipped):
    """A rule that simply goes on into the new edition keeps its lineage page and its number's page: only the
    rules the new step touched are rendered, with the pages that list steps and editions (the new pair page,
    the new edition's page and the one before it, which links to it); and a cold run over the same corpus
    publishes the same bytes."""
    run(tmp_path, corpus=corpus_of(tmp_path, 9, 10))
    skipped.clear()
    run(tmp_path, corpus=corpus_of(tmp_path, 9, 10, 11))
    newest = archive_files()[11].stem
    keys = json.loads((tmp_path / "r" / pagekeys.FILE).read_text())
    rendered = set(keys) - set(skipped)
    rules = pd.read_parquet(tmp_path / "p" / "rules.parquet", columns=["edition", "rule_id", "lineage_id"])
    changes = pd.read_parquet(tmp_path / "p" / "changes.parquet")
    step = changes[changes.to_edition == newest]
    lineage_of = dict(zip(zip(rules.edition, rules.rule_id), rules.lineage_id))
    touched = set(step.lineage_id) | {lineage_of.get((c.from_edition, c.old_rule_id)) for c in step.itertuples()} | \
        {lineage_of.get((c.to_edition, c.new_rule_id)) for c in step.itertuples()}
    numbers = set(rules[rules.lineage_id.isin(touched)].rule_id)  # a number's page says what became of each holder
    allowed = {lineage_file(x) for x in touched if x} | {f"rules/{n}.html" for n in numbers}
    previous = sorted(e.stem for e in (tmp_path / "r" / "editions").glob("*.html"))[-2]
    allowed |= {f"editions/{newest}.html", f"editions/{previous}.html"}
    allowed |= {n for n in keys if n.startswith("pairs/") and n.endswith(f"_{newest}.html")}
    allowed |= {n for n in keys if n.startswith("sources/") and newest in n}
    assert rendered <= allowed, sorted(rendered - allowed)[:10]
    lineages = [n for n in keys if n.startswith("lineage/")]
    kept = [n for n in lineages if n in skipped]
    assert len(kept) > 0.8 * len(lineages)  # most rules go on word for word from 2025-06-06 to 2026-01-16
    assert len(step) < len(lineages) / 2
    cold = tmp_path / "cold"
    cold.mkdir()
    shutil.copytree(tmp_path / "corpus", cold / "corpus")
    run(cold, corpus=cold / "corpus")  # beside its own p/: the index's links to the datasets read the same
    files = lambda root: sorted(p.relative_to(root) for p in root.rglob("*")  # noqa: E731
                                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    assert files(tmp_path / "r") == files(cold / "r")
    for name in files(cold / "r"):
        assert (tmp_path / "r" / name).read_bytes() == (cold / "r" / name).read_bytes(), name


def test_a_changed_source_renders_only_what_it_changes(tmp_path, skipped):
    run(tmp_path)
    run(tmp_path, raw=edited_seed(tmp_path))
    assert "sources/004_f1d686327d0145de.html" not in skipped
    assert "sources/000_3c08dd261a4ed4b0.html" in skipped and any(n.startswith("lineage/") for n in skipped)
    assert_as_a_full_render(tmp_path)


def test_a_page_edited_by_hand_is_rendered_again(tmp_path, skipped):
    run(tmp_path)
    listed = publish.listing(tmp_path / "r")
    pages = sorted(n for n in listed if n.endswith(".html") and "/" in n)  # the keyed ones: not the index
    edited = [pages[0], next(n for n in pages if n.startswith("lineage/"))]
    for name in edited:
        path = tmp_path / "r" / name
        data = path.read_bytes()
        path.write_bytes(data[:-2] + (b"X" if data[-2:-1] != b"X" else b"Y") + data[-1:])  # same size
    skipped.clear()
    assert invoke("report", "--processed", tmp_path / "p", "--reports", tmp_path / "r", "-q").exit_code == 0
    assert set(skipped) == set(pages) - set(edited)
    assert_as_a_full_render(tmp_path)


def test_a_page_whose_stamp_is_the_recorded_one_is_not_read_again(tmp_path, skipped, monkeypatch):
    """Hashing every page left in place was a quarter of adding an edition: a page whose size and modification
    time are those recorded with its key when its run wrote it is known untouched, and no page is read; a page
    whose stamp is not the recorded one (touched, even with the same bytes) is rendered again."""
    run(tmp_path)
    hashed = []
    still_listed = publish.still_listed
    monkeypatch.setattr(publish, "still_listed", lambda path, entry: hashed.append(path) or still_listed(path, entry))
    again = lambda: invoke("report", "--processed", tmp_path / "p", "--reports", tmp_path / "r", "-q")  # noqa: E731
    assert again().exit_code == 0
    kept = list(skipped)
    assert len(kept) > 10 and hashed == []
    touched = tmp_path / "r" / kept[0]
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 1))
    skipped.clear()
    assert again().exit_code == 0
    assert skipped == kept[1:] and hashed == []
    assert_as_a_full_render(tmp_path)


@pytest.mark.parametrize("damage", ["missing", "another run's stamps", "not JSON"])
def test_without_the_recorded_keys_every_page_is_rendered(tmp_path, skipped, damage):
    """No keys, or keys recorded with stamps no published page has (a run that was never committed records its
    staged files'), leave no page unrendered; the keys are not published (not listed in run.json)."""
    run(tmp_path)
    keys = tmp_path / "r" / pagekeys.FILE
    assert pagekeys.FILE not in publish.listing(tmp_path / "r") and not (tmp_path / "r" / "page-keys.json").exists()
    if damage == "missing":
        keys.unlink()
    elif damage == "another run's stamps":
        recorded = json.loads(keys.read_text())
        keys.write_text(json.dumps({name: [size, mtime + 1, key] for name, (size, mtime, key) in recorded.items()}))
    else:
        keys.write_text("{not json")
    skipped.clear()
    assert invoke("report", "--processed", tmp_path / "p", "--reports", tmp_path / "r", "-q").exit_code == 0
    assert skipped == []
    assert_as_a_full_render(tmp_path)


def test_a_template_change_renders_every_page_again(tmp_path, skipped, monkeypatch):
    run(tmp_path)
    templates = tmp_path / "templates"
    shutil.copytree(pagekeys.TEMPLATES, templates)
    with open(templates / "pair.html", "a", encoding="utf-8") as f:
        f.write("{# a comment changes no page, yet the code that renders them changed #}\n")
    monkeypatch.setattr(pagekeys, "TEMPLATES", templates)
    pagekeys.code.cache_clear()
    try:
        assert invoke("report", "--processed", tmp_path / "p", "--reports", tmp_path / "r", "-q").exit_code == 0
    finally:
        pagekeys.code.cache_clear()
    assert skipped == []


@pytest.mark.parametrize("a, b", [
    (1, True), (1, 1.0), ("1", 1), (["a"], ("a",)), ({"a": 1}, {"a": "1"}), ("a\0b", ["a", "b"]),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # only a rendered page again, never a wrong one
])
def test_different_data_gives_different_digests(a, b):
    assert pagekeys.digest(a) != pagekeys.digest(b)


def test_equal_data_gives_equal_digests_however_its_strings_were_made():
    made = "".join(["line", "age"])
    assert made is not sys.intern("lineage")
    assert pagekeys.digest([{"id": made, "n": 1.5}]) == pagekeys.digest([{"id": sys.intern("lineage"), "n": 1.5}])


def test_a_rows_digest_sees_the_values_not_how_they_are_laid_out():
    """An edition's rows give the same digest wherever they sit in the file (a slice's offset, chunks, a validity
    buffer that marks no null), so adding an edition after them leaves their pages' keys as they were; any value
    changed, moved between rows or made null changes it."""
    columns = {"text": ["a", "bc", None, "d"], "examples": [["x"], [], None, ["y", "z"]], "line": [1, None, 3, 4],
               "citations": [[{"part": "1"}], [], [{"part": None}], None]}
    schema = pa.table(columns).schema
    table = lambda data: pa.table(data, schema=schema)  # noqa: E731
    fresh = table(columns)
    later = table({name: values + values[:1] for name, values in columns.items()})  # a validity buffer, all set
    chunked = pa.concat_tables([table({n: v[:1] for n, v in columns.items()}),
                                table({n: v[1:] for n, v in columns.items()})])
    digest = pagekeys.rows_digest(fresh)
    assert pagekeys.rows_digest(later.slice(0, 4)) == pagekeys.rows_digest(chunked) == digest
    assert pagekeys.rows_digest(later.slice(1, 2)) == pagekeys.rows_digest(fresh.slice(1, 2))
    for name, values in [("text", ["a", "cb", None, "d"]), ("text", ["a", "bc", "", "d"]),
                         ("examples", [[], ["x"], None, ["y", "z"]]), ("examples", [["x"], [], [], ["y", "z"]]),
                         ("line", [1, 0, 3, 4]), ("citations", [[{"part": "1"}], [], [{"part": ""}], None])]:
        assert pagekeys.rows_digest(table({**columns, name: values})) != digest, (name, values)


def test_rows_digest_of_other_types_is_by_value():
    """Large strings and dictionaries (types the Parquet data may come in) are hashed by their values, never by
    the addresses of Python objects: the same values give the same digest in two tables, another value another."""
    import pyarrow as pa
    from pipeline.report.pagekeys import rows_digest

    def table(b):
        return pa.table({"a": pa.array(["x", b], type=pa.large_string()),
                         "d": pa.array(["p", b]).dictionary_encode()})
    assert rows_digest(table("yy")) == rows_digest(table("yy"))
    assert rows_digest(table("yy")) != rows_digest(table("yz"))
