"""Rule `concat_shards`: one synthetic corpus from the shards its generate jobs wrote."""

import pandas as pd

from plainsight.generation.corpus import join_shards
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    shards = [pd.read_parquet(path) for path in job.input]
    write_parquet(join_shards(shards), job.output[0])


run_rule(main)
