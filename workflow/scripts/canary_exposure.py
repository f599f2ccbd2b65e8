"""Rule `canary_exposure`: each canary's exposure, and its appearances in the canary adapter's corpus."""

from plainsight.audit.canaries import read_canary_settings, write_canary_report
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    settings = read_canary_settings(job.input.spec, job.params.per_repeat, job.params.candidates, job.seed)
    write_canary_report(
        job.input.adapter,
        job.params.model,
        job.params.placement,
        settings,
        job.input.canaries,
        job.input.generations,
        job.params.max_length,
        job.threads,
        job.output[0],
    )


run_rule(main)
