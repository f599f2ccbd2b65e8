"""Rule `mauve`: MAUVE between a method's texts from real test codes and those real test segments."""

import pandas as pd

from plainsight.evaluation.mauve_score import mauve_record
from plainsight.io import write_json
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    record = mauve_record(
        pd.read_parquet(job.input.texts),
        pd.read_parquet(job.input.docs),
        job.params.mauve,
        job.params.placement,
        job.threads,
    )
    write_json(record, job.output[0])


run_rule(main)
