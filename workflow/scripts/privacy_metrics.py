"""Rule `privacy_metrics`: per-generation leakage and ROUGE, plus the run's summary rows."""

import logging

import pandas as pd

from plainsight.evaluation.privacy import ft_privacy_metrics, icl_privacy_metrics, summarise
from plainsight.evaluation.quality import DocumentCriteria
from plainsight.io import write_parquet
from plainsight.methods.registry import method
from plainsight.methods.trained import training_keys
from plainsight.snakemake_job import RuleJob, run_rule

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    corpus = pd.read_parquet(job.input.corpus)
    docs = pd.read_parquet(job.input.docs)
    spans = pd.read_parquet(job.input.spans)
    idset, min_letters = job.wildcards.idset, job.params.metrics["partial_leak_min_letters"]
    criteria = DocumentCriteria.from_config(job.params.metrics["document"])
    spec = method(job.method)
    if spec.trained:
        codes = pd.read_parquet(job.input.codes)
        per_generation = ft_privacy_metrics(corpus, docs, spans, idset, training_keys(codes), min_letters, criteria)
    else:
        per_generation = icl_privacy_metrics(corpus, docs, spans, idset, min_letters, criteria)
    summary = summarise(per_generation, spec.family)
    log.info("summary:\n%s", summary.to_string(index=False))
    write_parquet(per_generation, job.output.generations)
    write_parquet(summary, job.output.summary)


run_rule(main)
