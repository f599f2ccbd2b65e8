"""Rule `privacy_utility_plot`: the privacy-utility picture of one dataset."""

from plainsight.report.plots import dataset_privacy_utility_plot
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    dataset_privacy_utility_plot(
        job.input.paper,
        job.input.summaries,
        job.input.utility,
        job.input.generations,
        job.wildcards.dataset,
        job.params.setting,
        job.params.idset,
        job.output[0],
        job.input.get("measures"),
        job.params.utility_axis,
    )


run_rule(main)
