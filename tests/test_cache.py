"""The caches hold data, never code; are keyed by content and code; and are checked on read."""
import ast
import os
import pickle
import shutil
import sqlite3

import pytest

from pipeline import cache as cache_module
from pipeline.cache import Cache, code_hash
from pipeline.segment.rules import ParagraphCache
from pipeline.run import CACHE_FILE
from conftest import flipped
from conftest import run_stages


def segment(processed, *extra):
    return run_stages(processed, *extra)


class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_planted_pickle_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    cache_dir = tmp_path / "p/.cache"
    cache_dir.mkdir(parents=True)
    for name in ("paragraphs.pickle", "cache.sqlite", "align/0.pickle"):
        (cache_dir / name).parent.mkdir(exist_ok=True)
        (cache_dir / name).write_bytes(pickle.dumps(Payload(marker)))
    result = segment(tmp_path / "p")
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert "cache file damaged" in result.output and "deleted, results recomputed" in result.output


def test_damaged_rows_are_dropped_recomputed_and_reported(tmp_path):
    assert segment(tmp_path / "clean", "--no-cache").exit_code == 0
    assert segment(tmp_path / "p").exit_code == 0
    db = sqlite3.connect(tmp_path / "p" / CACHE_FILE, isolation_level=None)
    namespaces = {r[0] for r in db.execute("SELECT namespace FROM entries")}
    assert namespaces == {"cleaned sources", "paragraphs", "source records", "record bodies", "pairs", "walks"}
    # A paragraph's analysis is read only when its source is segmented again: no source's records kept.
    db.execute("DELETE FROM entries WHERE namespace = 'source records'")
    # bodies apart: a body is read only for a source whose records are kept (not the damaged one's)
    for damaged in (["paragraphs"], ["record bodies"], ["cleaned sources", "source records", "pairs", "walks"]):
        for namespace in damaged:  # one flipped digit in a stored value of each kind
            rows = db.execute("SELECT key, value FROM entries WHERE namespace = ?", (namespace,)).fetchall()
            key, value = next(r for r in rows if isinstance(r[1], bytes) or any(c.isdigit() for c in r[1]))
            db.execute("UPDATE entries SET value = ? WHERE key = ?", (flipped(value), key))
        result = segment(tmp_path / "p")
        assert result.exit_code == 0
        for namespace in damaged:
            assert f"1 damaged {namespace} cache entry dropped" in result.output
        for table in ("rules.csv", "changes.csv"):
            assert (tmp_path / "p" / table).read_bytes() == (tmp_path / "clean" / table).read_bytes()
    db.close()


def test_a_damaged_cache_file_is_rebuilt_not_trusted(tmp_path):
    assert segment(tmp_path / "clean", "--no-cache").exit_code == 0
    assert segment(tmp_path / "p").exit_code == 0
    path = tmp_path / "p" / CACHE_FILE
    data = bytearray(path.read_bytes())
    for i in range(0, len(data), 997):  # bits flipped all through the file, header included
        data[i] ^= 0x10
    path.write_bytes(bytes(data))
    for _ in range(2):  # and it stays usable afterwards
        result = segment(tmp_path / "p")
        assert result.exit_code == 0, result.output
        assert (tmp_path / "p/rules.csv").read_bytes() == (tmp_path / "clean/rules.csv").read_bytes()
        assert (tmp_path / "p/changes.csv").read_bytes() == (tmp_path / "clean/changes.csv").read_bytes()


def test_cache_keys_follow_the_code_that_produced_the_values(tmp_path, monkeypatch):
    copy = tmp_path / "pipeline"
    shutil.copytree(cache_module.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "PACKAGE_DIR", copy)
    code_hash.cache_clear()
    before = {m: code_hash(m) for m in ("pipeline.align.lineage", "pipeline.segment.nlp")}
    diff = copy / "align" / "diff.py"  # the change classifier: imported by lineage, not by nlp
    diff.write_text(diff.read_text() + "\n# a change to the classifier\n")
    code_hash.cache_clear()
    assert code_hash("pipeline.align.lineage") != before["pipeline.align.lineage"]
    assert code_hash("pipeline.segment.nlp") == before["pipeline.segment.nlp"]
    patterns = copy / "patterns.py"
    patterns.write_text(patterns.read_text() + "\n")
    code_hash.cache_clear()
    assert code_hash("pipeline.segment.nlp") != before["pipeline.segment.nlp"]
    code_hash.cache_clear()
    monkeypatch.undo()
    code_hash.cache_clear()


@pytest.mark.slow
def test_the_import_scan_finds_what_the_parser_finds():
    def parsed(module: str) -> set[str]:  # the closure as pipeline.cache computed it with ast
        todo, seen = [module], set()
        while todo:
            name = todo.pop()
            if name in seen or not cache_module._module_path(name).exists():
                continue
            seen.add(name)
            for node in ast.walk(ast.parse(cache_module._module_path(name).read_bytes())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline"):
                    todo += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    todo += [a.name for a in node.names if a.name.startswith("pipeline")]
        return seen

    modules = [".".join(("pipeline",) + p.relative_to(cache_module.PACKAGE_DIR).with_suffix("").parts)
               for p in cache_module.PACKAGE_DIR.rglob("*.py")]
    assert len(modules) > 40
    for module in modules:
        assert cache_module._closure(module) == parsed(module), module


def test_values_under_another_code_hash_are_never_read(tmp_path):
    path = tmp_path / "c.sqlite"
    old = Cache(path, "paragraphs", "code-1")
    old.put(old.key("212.1b text"), [1, 2])
    old.close()
    new = Cache(path, "paragraphs", "code-2")
    assert new.get(new.key("212.1b text"), list) is None
    again = Cache(path, "paragraphs", "code-1")
    assert again.get(again.key("212.1b text"), list) == [1, 2]


def test_a_cached_analysis_pointing_outside_its_paragraph_is_not_used(tmp_path):
    path = tmp_path / "c.sqlite"
    first = ParagraphCache(path)
    first.analyse(["100.1. These Magic rules apply."])
    first.save()
    store = first.store
    db = sqlite3.connect(path)
    (key, value), = db.execute("SELECT key, value FROM entries").fetchall()
    planted = value.replace("[0,7,", "[0,9999,", 1)
    assert planted != value
    db.execute("UPDATE entries SET value = ?, checksum = ? WHERE key = ?",
               (planted, cache_module._checksum(key, planted), key))  # a well-formed but wrong row
    db.commit()
    db.close()
    second = ParagraphCache(path)
    second.analyse(["100.1. These Magic rules apply."])
    assert second.misses == 1 and second.data == first.data
    assert store.code == second.store.code


def test_analyses_made_without_some_components_never_serve_a_run(tmp_path):
    path, text = tmp_path / "c.sqlite", "100.1. These rules [CR 204.1a] apply; see rule 205.1a. Really."
    lite = ParagraphCache(path, skip=("citations", "rule_references"))
    lite.analyse([text])
    lite.save()
    full = ParagraphCache(path)
    full.analyse([text])
    full.save()
    assert full.misses == 1 and full.data[text].references and full.data[text].citations
    assert lite.data[text].references == () and lite.data[text].citations == ()
    assert lite.data[text][:3] == full.data[text][:3] and len(full.data[text].sentences) == 3
    again = ParagraphCache(path, skip=("citations", "rule_references"))
    again.analyse([text])
    assert again.misses == 0 and again.data[text] == full.data[text]  # a whole analysis serves both
