# `make` sets up .venv and runs the whole pipeline on raw/ (plus CORPUS=dir, if given).
# `make test` sets up the same way, adds the test tools and runs the tests; `make test-fast` is the inner loop.
# `make fetch` downloads every official edition into corpus/, which `make` then reads.
# Python 3.11, 3.12 or 3.13: the first of these that runs, or PYTHON=/path/to/python3.x.
PYTHON ?= $(shell for p in python3 python3.13 python3.12 python3.11; do \
    $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && command -v $$p && break; done)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TESTED := $(VENV)/.tested
CORPUS ?= $(wildcard corpus)
CORPUS_ARGS := $(foreach d,$(CORPUS),--corpus $(d))

.PHONY: all run test test-fast lint browser datasets report serve bench clean fetch accuracy audit-sample lock

all: run

# The exact versions, for every supported Python (markers choose), so a run on another machine uses the
# same libraries and writes the same bytes: requirements.lock for running, requirements-test.lock adds
# the test tools and Datasette. Both come from pyproject.toml's ranges (`make lock`).
LOCK := requirements.lock
TEST_LOCK := requirements-test.lock

$(STAMP): pyproject.toml $(LOCK)
	@test -n "$(PYTHON)" || { echo "crdiff needs Python 3.11, 3.12 or 3.13: install one, or give it as make PYTHON=/path/to/python3.12"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

$(TESTED): $(STAMP) $(TEST_LOCK)
	$(PY) -m pip install --quiet -r $(TEST_LOCK)
	touch $(TESTED)

# Re-pin after changing a range in pyproject.toml: uv resolves once for every Python from 3.11 on.
# The test lock first, then the running lock within it, so the two agree on every version they share.
lock: $(STAMP)
	$(PY) -m pip install --quiet 'uv>=0.9,<1'
	$(PY) -m uv pip compile --quiet --universal --fork-strategy fewest --python-version 3.11 --no-header --extra test --extra serve \
	    --output-file $(TEST_LOCK) pyproject.toml
	$(PY) -m uv pip compile --quiet --universal --fork-strategy fewest --python-version 3.11 --no-header --constraint $(TEST_LOCK) \
	    --output-file $(LOCK) pyproject.toml

run: $(STAMP)
	$(PY) -m pipeline run --raw raw $(CORPUS_ARGS) --processed processed --reports reports

datasets: $(STAMP)
	$(PY) -m pipeline run --raw raw $(CORPUS_ARGS) --processed processed --no-reports

report: $(STAMP)
	$(PY) -m pipeline report --processed processed --reports reports

# Datasette over processed/crdiff.sqlite on http://127.0.0.1:8001 (installed from the test lock on first use).
serve: $(STAMP)
	@$(PY) -c 'import datasette' 2>/dev/null || $(PY) -m pip install --quiet -c $(TEST_LOCK) datasette
	$(PY) -m pipeline serve --processed processed

test: $(TESTED) browser
	$(PY) -m pytest -q

# Under a minute: no official editions, no browser, nothing marked slow.
test-fast: $(TESTED)
	$(PY) -m pytest -q -m "not archive and not formats and not browser and not slow"

lint: $(TESTED)
	$(PY) -m ruff check pipeline devtools tests

# The browser tests drive Debian's Chromium (Playwright cannot download its own browser here):
# installed as root (or through sudo without a password) when it is missing and apt-get is there;
# elsewhere the browser tests are skipped, and the test summary says so.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	    SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo -n"; \
	    if command -v apt-get >/dev/null 2>&1 && $$SUDO true 2>/dev/null; then \
	        echo "installing Debian's chromium for the browser tests"; \
	        $$SUDO apt-get update -q && $$SUDO apt-get install -y -q --no-install-recommends chromium; \
	    else echo "no chromium, and no way to install it here: the browser tests will be skipped"; fi; }

fetch: $(STAMP)
	$(PY) -m pipeline fetch --into corpus

clean:
	rm -rf processed/*.csv processed/*.json processed/.cache reports/*.html reports/*.css

ARCHIVE ?= ../shared/cr-archive
FORMATS ?= ../shared/cr-formats
# Precision and recall of the history on hand-checked cases (tests/data/accuracy.csv) from the archive.
accuracy: $(STAMP)
	$(PY) -m devtools accuracy --corpus $(ARCHIVE) --cases tests/data/accuracy.csv

# A blind measure: a stratified random sample of change rows of the archive run, to be judged against the
# texts by someone who did not write the code (docs/accuracy.md). A new SEED for every audit.
SEED ?= $(shell date +%Y%m%d)
audit-sample: $(STAMP)
	$(PY) -m pipeline run --raw raw --corpus $(ARCHIVE) --processed audit/processed --no-reports -q
	$(PY) -m devtools audit-sample --processed audit/processed --seed $(SEED) --out audit

bench: $(STAMP)
	$(PY) -m devtools bench --corpus $(ARCHIVE) --simulate 110 $(if $(wildcard $(FORMATS)),--formats $(FORMATS))
