"""Rule `table`: summaries over seeds -> the table, its Markdown and the comparison with the paper."""

import pandas as pd

from plainsight.logs import run_step
from plainsight.tables import build_table, load_table_specs, markdown_table, versus_paper, write_table


def main():
    specs = load_table_specs(snakemake.input.paper)  # noqa: F821
    spec = specs["tables"][snakemake.wildcards.table]  # noqa: F821
    summaries = pd.concat([pd.read_parquet(path) for path in snakemake.input.summaries],  # noqa: F821
                          ignore_index=True)
    table = build_table(spec, summaries, specs["methods"])
    write_table(table, markdown_table(table, spec), versus_paper(table, spec, specs["methods"]),
                snakemake.output.csv, snakemake.output.markdown, snakemake.output.versus)  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
