"""Rules `generate_icl`, `generate_trained` and `canary_generations`: a synthetic corpus of one method and
seed, or one shard of it, by the corpus job of the method's family (`plainsight.generation.jobs`)."""

from plainsight.generation.jobs import corpus_job
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_parquet(corpus_job(job).run(), job.output[0])


run_rule(main)
