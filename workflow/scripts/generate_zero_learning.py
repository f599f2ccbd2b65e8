"""Rule `generate_zero_learning`: the audit's negative control for one run and seed, a corpus the base
model writes from the trained plan's fictional codes alone (`plainsight.generation.trained_jobs`)."""

from plainsight.generation.trained_jobs import ZeroLearningCorpusJob
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_parquet(ZeroLearningCorpusJob.from_snakemake(job).run(), job.output[0])


run_rule(main)
