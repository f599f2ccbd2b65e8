"""Rule `ingest`: source files -> docs.parquet and spans.parquet."""

from plainsight.data.builder import DOC_TYPES
from plainsight.data.ingest import ingest_dataset
from plainsight.io import write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    params = job.params
    docs, spans = ingest_dataset(list(job.input), params.dataset, params.on_invalid,
                                 params.placeholder_types)
    write_parquet(docs, job.output.docs, DOC_TYPES)
    write_parquet(spans, job.output.spans)


run_rule(main)
