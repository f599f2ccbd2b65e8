"""Rule `fictional_codes`: a fictional control code per segment for one seed."""

import pandas as pd

from plainsight.codes.fictional import FictionalPools, fictional_codes_table
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    codes = pd.read_parquet(job.input.codes)
    pools = FictionalPools.for_corpus(job.input.pools, pd.read_parquet(job.input.spans), codes)
    table = fictional_codes_table(codes, pools, int(job.wildcards.seed))
    write_parquet(table, job.output[0])


run_rule(main)
