"""Rule `corpus_examples`: a readable Markdown sample of one synthetic corpus."""

import pandas as pd

from plainsight.io import write_text
from plainsight.logs import run_step
from plainsight.report.samples import examples_markdown


def main():
    w = snakemake.wildcards  # noqa: F821
    corpus = pd.read_parquet(snakemake.input[0])  # noqa: F821
    title = f"{w.method}, seed {w.seed}: {w.dataset}, private entities {w.setting}, {w.idset} identifiers"
    write_text(examples_markdown(corpus, snakemake.params.shown, title), snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
