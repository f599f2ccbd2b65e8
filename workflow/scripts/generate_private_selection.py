"""Rule `generate_private_selection`: a training-free private generator's corpus for one seed and the
record of its guarantee (`plainsight.generation.private_selection_jobs.PrivateSelectionCorpusJob`)."""

from plainsight.generation.private_selection_jobs import PrivateSelectionCorpusJob
from plainsight.io import write_json, write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    corpus, guarantee = PrivateSelectionCorpusJob.from_snakemake(job).run_with_guarantee()
    write_parquet(corpus, job.output.corpus)
    write_json(guarantee, job.output.guarantee)


run_rule(main)
