"""Rule `utility_table`: a dataset's utility runs' measures -> results/tables/{dataset}/utility.{csv,md}."""

import pandas as pd

from plainsight.report.table_specs import load_table_specs
from plainsight.report.utility_table import (
    markdown_utility_table,
    utility_notes,
    utility_table,
    write_utility_table,
)
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    methods = load_table_specs(job.input.paper)["methods"]
    measures = pd.concat([pd.read_parquet(path) for path in job.input.measures], ignore_index=True)
    table = utility_table(measures, {key: name for key, name in methods.items() if key in job.params.methods})
    write_utility_table(
        table,
        markdown_utility_table(table, utility_notes(job.params.classifier)),
        job.output.csv,
        job.output.markdown,
    )


run_rule(main)
