"""Rule `detect_presidio`: every Presidio finding per segment, mapped to TAB categories."""

import pandas as pd

from plainsight.codes.presidio import detect_corpus
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    detected = detect_corpus(pd.read_parquet(job.input.docs), job.input.entity_map, job.params.presidio)
    write_parquet(detected, job.output[0])


run_rule(main)
