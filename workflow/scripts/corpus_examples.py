"""Rule `corpus_examples`: a readable Markdown sample of one synthetic corpus."""

import pandas as pd

from plainsight.io import write_text
from plainsight.report.samples import corpus_examples
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w = job.wildcards
    text = corpus_examples(
        pd.read_parquet(job.input[0]), job.params.shown, w.dataset, w.setting, w.idset, w.method, w.seed
    )
    write_text(text, job.output[0])


run_rule(main)
