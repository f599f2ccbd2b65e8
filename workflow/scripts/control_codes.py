"""Rule `control_codes`: one real control code per segment."""

import pandas as pd

from plainsight.codes.control import codes_table, select_spans
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    docs = pd.read_parquet(job.input.docs)
    values = select_spans(pd.read_parquet(job.input.values), job.wildcards.idset)
    write_parquet(codes_table(docs, values), job.output[0])


run_rule(main)
