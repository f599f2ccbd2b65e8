"""Rule `table`: runs over seeds -> the table, its Markdown with notes, and the comparison with the paper."""

from plainsight.report.paper_table import TableOutputs, TableRuns, TableSettings, make_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    comments = job.input.comments
    runs = TableRuns(
        list(job.input.summaries),
        list(job.input.generations),
        list(job.input.dp_adapters),
        [comments] if isinstance(comments, str) else list(comments),
        list(job.input.controls),
    )
    settings = TableSettings(
        job.params.methods,
        job.params.max_regenerations,
        job.params.documents_warn_below,
        job.params.presidio_extra_recognizers,
    )
    outputs = TableOutputs(job.output.csv, job.output.markdown, job.output.versus)
    make_table(job.input.paper, job.wildcards.table, runs, settings, outputs)


run_rule(main)
