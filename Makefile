# `make` sets up .venv and runs the whole pipeline on raw/ (plus CORPUS=dir, if given).
# `make test` sets up the same way and runs the tests.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CORPUS ?=
CORPUS_ARGS := $(foreach d,$(CORPUS),--corpus $(d))

.PHONY: all run test datasets report bench clean

all: run

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m pipeline run --raw raw $(CORPUS_ARGS) --processed processed --reports reports

datasets: $(STAMP)
	$(PY) -m pipeline run --raw raw $(CORPUS_ARGS) --processed processed --no-reports

report: $(STAMP)
	$(PY) -m pipeline report --raw raw $(CORPUS_ARGS) --processed processed --reports reports

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf processed/*.csv processed/*.json processed/.cache reports/*.html reports/*.css

ARCHIVE ?= ../shared/cr-archive
FORMATS ?= ../shared/cr-formats
bench: $(STAMP)
	$(PY) -m pipeline bench --corpus $(ARCHIVE) --simulate 110 $(if $(wildcard $(FORMATS)),--formats $(FORMATS))
