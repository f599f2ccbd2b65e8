"""Rule `privacy_metrics`: per-generation leakage and ROUGE, plus the run's summary rows."""

import logging

import pandas as pd

from plainsight.evaluation.privacy import ft_privacy_metrics, icl_privacy_metrics, summarise
from plainsight.io import write_parquet
from plainsight.logs import run_step
from plainsight.methods.trained import TRAINED_METHODS, training_keys

log = logging.getLogger("plainsight")


def main():
    corpus = pd.read_parquet(snakemake.input.corpus)  # noqa: F821
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    spans = pd.read_parquet(snakemake.input.spans)  # noqa: F821
    idset, min_letters = snakemake.wildcards.idset, snakemake.params.metrics["partial_leak_min_letters"]  # noqa: F821
    if snakemake.wildcards.method in TRAINED_METHODS:  # noqa: F821
        codes = pd.read_parquet(snakemake.input.codes)  # noqa: F821
        per_generation = ft_privacy_metrics(corpus, docs, spans, idset, training_keys(codes), min_letters)
        summary = summarise(per_generation, "ft")
    else:
        per_generation = icl_privacy_metrics(corpus, docs, spans, idset, min_letters)
        summary = summarise(per_generation, "icl")
    log.info("summary:\n%s", summary.to_string(index=False))
    write_parquet(per_generation, snakemake.output.generations)  # noqa: F821
    write_parquet(summary, snakemake.output.summary)  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
