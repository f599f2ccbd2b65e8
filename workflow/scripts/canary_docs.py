"""Rule `canary_docs`: the fine-tuning set with canaries in it, and the canaries."""

from plainsight.audit.canaries import read_canary_settings, write_canaried_docs
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    settings = read_canary_settings(job.input.spec, job.params.per_repeat, job.params.candidates, job.seed)
    write_canaried_docs(job.input.docs, job.input.codes, settings, job.output.docs, job.output.canaries)


run_rule(main)
