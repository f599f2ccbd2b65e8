"""Rule `privacy_utility_plot`: the privacy-utility picture of one dataset."""

import pandas as pd

from plainsight.evaluation.utility import summary_rows
from plainsight.logs import run_step
from plainsight.report.plots import method_points, paper_points, plot_privacy_utility, run_rows
from plainsight.report.tables import load_table_specs


def main():
    specs = load_table_specs(snakemake.input.paper)  # noqa: F821
    dataset, setting, idset = snakemake.wildcards.dataset, snakemake.params.setting, snakemake.params.idset  # noqa: F821
    privacy = pd.concat([pd.read_parquet(p) for p in snakemake.input.summaries], ignore_index=True)  # noqa: F821
    utility = summary_rows(snakemake.input.utility, [setting])  # noqa: F821
    ours = method_points(run_rows(privacy, utility), specs["methods"])
    title = f"{dataset.upper()}, private entities {setting}, {idset} identifiers: privacy against utility"
    plot_privacy_utility(ours, paper_points(specs, dataset, setting, idset), title, snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
