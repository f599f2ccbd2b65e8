"""Rule `utility_plots`: length distributions and downstream macro-F1 against the real ceiling, of one run."""

import pandas as pd

from plainsight.report.table_specs import load_table_specs
from plainsight.report.utility_table import utility_plots
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    methods = load_table_specs(job.input.paper)["methods"]
    corpora = [pd.read_parquet(path) for path in job.input.corpora]
    utility_plots(
        pd.read_parquet(job.input.measures),
        pd.read_parquet(job.input.docs),
        corpora,
        {key: name for key, name in methods.items() if key in job.params.methods},
        job.output.lengths,
        job.output.downstream,
    )


run_rule(main)
