"""Rule `review_comments`: comment files exported from a review page -> one table."""

import logging

from plainsight.report.review_comments import write_comments_table
from plainsight.report.review_site import ReviewSubject
from plainsight.snakemake_job import RuleJob, run_rule

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    w = job.wildcards
    corpora = [(method, int(seed), path) for (method, seed), path in zip(job.params.runs, job.input.corpora)]
    table = write_comments_table(
        list(job.input.comments), ReviewSubject(w.dataset, w.setting, w.idset), corpora, job.output[0]
    )
    log.info("%d comment files, %d reviewed generations", len(job.input.comments), len(table))


run_rule(main)
