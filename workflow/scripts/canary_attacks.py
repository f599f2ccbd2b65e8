"""Rule `canary_attacks`: each canary's attack scores from one method's canary corpus (and adapter)."""

from plainsight.audit.canary_attacks import CanaryAttackJob, write_canary_attacks
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_canary_attacks(CanaryAttackJob.from_snakemake(job))


run_rule(main)
