"""Rule `privacy_utility_plot`: the privacy-utility picture of one dataset."""

from plainsight.report.plots import PlotFiles, dataset_privacy_utility_plot
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    files = job.input
    dataset_privacy_utility_plot(
        PlotFiles(files.paper, files.summaries, files.utility, files.generations, files.get("measures")),
        job.wildcards.dataset,
        job.params.setting,
        job.params.idset,
        job.output[0],
        job.params.utility_axis,
    )


run_rule(main)
