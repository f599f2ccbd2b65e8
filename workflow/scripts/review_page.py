"""Rule `review_page`: the static review page of one dataset, setting and identifier set."""

from pathlib import Path

import pandas as pd

from plainsight.report.audit_verdict import audit_verdicts
from plainsight.report.review_comments import read_comments
from plainsight.report.review_site import (
    ReviewEvidence,
    ReviewRun,
    ReviewSubject,
    SitePaths,
    build_review_site,
)
from plainsight.report.table_format import load_table_specs
from plainsight.report.utility_table import run_utility_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w = job.wildcards
    subject = ReviewSubject(w.dataset, w.setting, w.idset)
    runs = [
        ReviewRun(method, int(seed), Path(corpus), Path(metrics), Path(nearest))
        for (method, seed), corpus, metrics, nearest in zip(
            job.params.runs, job.input.corpora, job.input.metrics, job.input.nearest
        )
    ]
    names = load_table_specs(job.input.paper)["methods"]
    build_review_site(
        subject,
        runs,
        pd.read_parquet(job.input.docs),
        pd.read_parquet(job.input.spans),
        names,
        job.params.metrics,
        SitePaths(Path(job.output.index), Path(job.output.data)),
        ReviewEvidence(
            audit_verdicts(job.input.audit, subject.keys),
            run_utility_table(job.input.utility, names),
            read_comments(job.input.comments),
        ),
    )


run_rule(main)
