"""Rule `canary_table`: results/tables/canaries.{csv,md}."""

from plainsight.audit.canary_table import write_canary_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_canary_table(job.input.reports, job.params.runs, job.output.csv, job.output.markdown)


run_rule(main)
