"""Rule `ingest`: source files -> docs.parquet and spans.parquet."""

from plainsight.data.ingest import write_dataset
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    params = job.params
    write_dataset(
        list(job.input),
        params.dataset,
        params.on_invalid,
        params.placeholder_types,
        job.output.docs,
        job.output.spans,
    )


run_rule(main)
