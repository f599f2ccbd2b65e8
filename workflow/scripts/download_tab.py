"""Rule `download_tab`: fetch one official TAB file and check that it parses."""

from plainsight.data.tab import download_tab
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    download_tab(job.params.url, job.output[0])


run_rule(main)
