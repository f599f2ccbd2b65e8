"""Rule `corpus_examples`: a readable Markdown sample of one synthetic corpus."""

import pandas as pd

from plainsight.io import write_text
from plainsight.report.samples import examples_markdown
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w = job.wildcards
    corpus = pd.read_parquet(job.input[0])
    title = f"{w.method}, seed {w.seed}: {w.dataset}, private entities {w.setting}, {w.idset} identifiers"
    write_text(examples_markdown(corpus, job.params.shown, title), job.output[0])


run_rule(main)
