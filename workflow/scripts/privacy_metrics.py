"""Rule `privacy_metrics`: per-generation leakage and ROUGE, plus the run's summary rows."""

import logging

import pandas as pd

from plainsight.evaluation.privacy import run_privacy_metrics
from plainsight.io import write_json, write_parquet
from plainsight.snakemake_job import RuleJob, run_rule

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    frames = [
        pd.read_parquet(path) for path in (job.input.corpus, job.input.docs, job.input.spans, job.input.codes)
    ]
    per_generation, summary, control = run_privacy_metrics(
        job.method, *frames, job.wildcards.idset, job.params.metrics, job.seed
    )
    log.info("summary:\n%s", summary.to_string(index=False))
    write_parquet(per_generation, job.output.generations)
    write_parquet(summary, job.output.summary)
    write_json(control, job.output.control)


run_rule(main)
