"""Rule `review_page`: the static review page of one dataset, setting and identifier set."""

from pathlib import Path

import pandas as pd

from plainsight.report.audit_verdict import audit_verdicts
from plainsight.report.frontier import frontier_view
from plainsight.report.release import PageBundles, page_bundle_summaries
from plainsight.report.review_comments import read_comments
from plainsight.report.review_site import (
    ReviewEvidence,
    ReviewRun,
    ReviewSubject,
    SitePaths,
    build_review_site,
)
from plainsight.report.table_specs import load_table_specs
from plainsight.report.utility_table import run_utility_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w, files = job.wildcards, job.input
    subject = ReviewSubject(w.dataset, w.setting, w.idset)
    runs = [
        ReviewRun(method, int(seed), Path(corpus), Path(metrics), Path(nearest))
        for (method, seed), corpus, metrics, nearest in zip(
            job.params.runs, files.corpora, files.metrics, files.nearest
        )
    ]
    names = load_table_specs(files.paper)["methods"]
    spans = pd.read_parquet(files.spans)
    comments = read_comments(files.comments)
    # each method's release bundle summary, where review.release_summaries asks for them
    bundles = PageBundles(
        [(method, int(seed)) for method, seed in job.params.release_runs],
        files.release_audits,
        files.release_utility,
        files.release_kept,
        files.release_metrics,
        list(zip(job.params.release_guarantees, files.release_guarantees, strict=True)),
    )
    build_review_site(
        subject,
        runs,
        pd.read_parquet(files.docs),
        spans,
        names,
        job.params.metrics,
        SitePaths(Path(job.output.index), Path(job.output.data)),
        ReviewEvidence(
            audit_verdicts(files.audit, subject.keys),
            run_utility_table(files.utility, names),
            comments,
            page_bundle_summaries(
                subject.keys,
                bundles,
                job.params.release,
                {"spans": spans, "comments": comments},
                names,
                job.output.index,
            ),
            # the privacy-utility frontier (review.frontier) on Table 1's page; the all-methods page has none
            frontier_view(getattr(files, "frontier", []), names),
        ),
    )


run_rule(main)
