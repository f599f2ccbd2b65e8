"""Cost plan of a target: Snakemake's dry run of it, with the GPU-hours and memory of each model job."""

from plainsight.report.plan import plan_target, write_plan
from plainsight.snakemake_job import run_rule


def main(job):
    write_plan(
        job.config,
        job.params.snakefile,
        plan_target(job.wildcards.target),
        job.output.markdown,
        job.output.table,
        job.params.snakemake_python,
    )


run_rule(main)
