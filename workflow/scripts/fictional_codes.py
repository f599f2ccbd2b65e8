"""Rule `fictional_codes`: a fictional control code per segment for one seed."""

import pandas as pd

from plainsight.codes.surrogates import fictional_codes
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    table = fictional_codes(
        pd.read_parquet(job.input.codes),
        pd.read_parquet(job.input.spans),
        job.input.pools,
        int(job.wildcards.seed),
        job.params.surrogates,
        job.input.lists,
    )
    write_parquet(table, job.output[0])


run_rule(main)
