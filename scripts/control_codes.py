"""Rule `control_codes`: one real control code per segment."""

import pandas as pd

from plainsight.codes.control import codes_table, select_spans
from plainsight.io import write_parquet
from plainsight.logs import run_step


def main():
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    values = select_spans(pd.read_parquet(snakemake.input.values), snakemake.wildcards.idset)  # noqa: F821
    write_parquet(codes_table(docs, values), snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
