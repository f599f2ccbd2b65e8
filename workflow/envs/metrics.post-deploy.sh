#!/usr/bin/env bash
# Snakemake runs this inside the new environment, from its working directory (the repository
# root). The project package is installed from there, editable so the environment follows the
# source; pip paths inside the env file would resolve against Snakemake's copy of it in
# .snakemake/conda/ instead.
set -euo pipefail
test -f pyproject.toml || { echo "run Snakemake from the repository root" >&2; exit 1; }
pip install --quiet --no-deps -e .
