"""Rule `control_codes`: one real control code per segment."""

import pandas as pd

from plainsight.codes.control_code import setting_codes
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    codes = setting_codes(
        pd.read_parquet(job.input.docs), pd.read_parquet(job.input.values), job.wildcards.idset
    )
    write_parquet(codes, job.output[0])


run_rule(main)
