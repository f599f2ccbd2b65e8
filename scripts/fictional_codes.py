"""Rule `fictional_codes`: a fictional control code per segment for one seed."""

import pandas as pd

from plainsight.codes.fictional import FictionalPools, fictional_codes_table
from plainsight.io import write_parquet
from plainsight.logs import run_step


def main():
    codes = pd.read_parquet(snakemake.input.codes)  # noqa: F821
    pools = FictionalPools.from_yaml(snakemake.input.pools)  # noqa: F821
    table = fictional_codes_table(codes, pools, int(snakemake.wildcards.seed))  # noqa: F821
    write_parquet(table, snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
