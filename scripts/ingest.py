"""Rule `ingest`: source files -> docs.parquet and spans.parquet."""

from plainsight.data.ingest import ingest_dataset
from plainsight.io import write_parquet
from plainsight.logs import run_step


def main():
    params = snakemake.params  # noqa: F821 (injected by Snakemake)
    docs, spans = ingest_dataset(list(snakemake.input), params.dataset, params.on_invalid,  # noqa: F821
                                 params.placeholder_types)
    write_parquet(docs, snakemake.output.docs)  # noqa: F821
    write_parquet(spans, snakemake.output.spans)  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
