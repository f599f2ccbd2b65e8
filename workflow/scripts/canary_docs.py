"""Rule `canary_docs`: the canaries, and the training set with the members in it."""

from plainsight.audit.canaries import CanaryDocsJob, write_canaries
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_canaries(CanaryDocsJob.from_snakemake(job))


run_rule(main)
