# `make` sets up .venv and runs the whole pipeline on raw/ (plus CORPUS=dir, if given).
# `make test` sets up the same way and runs the tests.
# `make fetch` downloads every official edition into corpus/, which `make` then reads.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CORPUS ?= $(wildcard corpus)
CORPUS_ARGS := $(foreach d,$(CORPUS),--corpus $(d))

.PHONY: all run test browser datasets report bench clean fetch accuracy audit-sample lock

all: run

LOCK := requirements.lock

# The exact versions in requirements.lock (pip-compile from pyproject.toml's ranges), so a run on
# another machine uses the same libraries and writes the same bytes; then the project itself.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Re-pin after changing a range in pyproject.toml (pip-tools is the `lock` extra).
lock: $(STAMP)
	$(PY) -m pip install --quiet -e '.[lock]'
	$(PY) -m piptools compile --quiet --extra test --strip-extras --no-emit-index-url --no-emit-find-links \
	    --output-file $(LOCK) pyproject.toml

run: $(STAMP)
	$(PY) -m pipeline run --raw raw $(CORPUS_ARGS) --processed processed --reports reports

datasets: $(STAMP)
	$(PY) -m pipeline run --raw raw $(CORPUS_ARGS) --processed processed --no-reports

report: $(STAMP)
	$(PY) -m pipeline report --processed processed --reports reports

test: $(STAMP) browser
	$(PY) -m pytest -q

# The browser tests drive Debian's Chromium (Playwright cannot download its own browser here):
# installed as root (or through sudo) when it is missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	    SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	    echo "installing Debian's chromium for the browser tests"; \
	    $$SUDO apt-get update -q && $$SUDO apt-get install -y -q --no-install-recommends chromium; }

fetch: $(STAMP)
	$(PY) -m pipeline fetch --into corpus

clean:
	rm -rf processed/*.csv processed/*.json processed/.cache reports/*.html reports/*.css

ARCHIVE ?= ../shared/cr-archive
FORMATS ?= ../shared/cr-formats
# Precision and recall of the history on hand-checked cases (tests/data/accuracy.csv) from the archive.
accuracy: $(STAMP)
	$(PY) -m pipeline accuracy --corpus $(ARCHIVE) --cases tests/data/accuracy.csv

# A blind measure: a stratified random sample of change rows of the archive run, to be judged against the
# texts by someone who did not write the code (docs/accuracy.md). A new SEED for every audit.
SEED ?= $(shell date +%Y%m%d)
audit-sample: $(STAMP)
	$(PY) -m pipeline run --raw raw --corpus $(ARCHIVE) --processed audit/processed --no-reports -q
	$(PY) -m pipeline audit-sample --processed audit/processed --seed $(SEED) --out audit

bench: $(STAMP)
	$(PY) -m pipeline bench --corpus $(ARCHIVE) --simulate 110 $(if $(wildcard $(FORMATS)),--formats $(FORMATS))
