"""Rule `mauve_texts`: one text per sampled real test segment, written by the method from that segment's
real code, for MAUVE to compare (`plainsight.generation.jobs.MauveTextsJob`)."""

from plainsight.generation.jobs import MauveTextsJob
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_parquet(MauveTextsJob.from_snakemake(job).run(), job.output[0])


run_rule(main)
