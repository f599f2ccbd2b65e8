"""Rule `concat_shards`: one synthetic corpus from the shards its generate jobs wrote."""

import pandas as pd

from plainsight.generation.corpus import join_shards
from plainsight.io import write_parquet
from plainsight.logs import run_step


def main():
    shards = [pd.read_parquet(path) for path in snakemake.input]  # noqa: F821
    write_parquet(join_shards(shards), snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
