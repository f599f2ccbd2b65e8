"""Rule `privacy_utility_plot`: the privacy-utility picture of one dataset."""

import pandas as pd

from plainsight.evaluation.utility import summary_rows
from plainsight.report.plots import method_points, paper_points, plot_privacy_utility, run_rows
from plainsight.report.tables import load_table_specs
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    specs = load_table_specs(job.input.paper)
    dataset, setting, idset = job.wildcards.dataset, job.params.setting, job.params.idset
    privacy = pd.concat([pd.read_parquet(p) for p in job.input.summaries], ignore_index=True)
    utility = summary_rows(job.input.utility, [setting])
    generations = pd.concat([pd.read_parquet(p) for p in job.input.generations], ignore_index=True)
    downstream = pd.read_parquet(job.input.measures) if job.input.get("measures") else None
    ours = method_points(run_rows(privacy, utility, downstream), specs["methods"], generations)
    title = f"{dataset.upper()}, private entities {setting}, {idset} identifiers: privacy against utility"
    plot_privacy_utility(ours, paper_points(specs, dataset, setting, idset), title, job.output[0],
                         job.params.utility_axis)


run_rule(main)
