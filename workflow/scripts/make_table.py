"""Rule `table`: runs over seeds -> the table, its Markdown with notes, and the comparison with the paper."""

from plainsight.report.paper_table import TableOutputs, TableRuns, TableSettings, make_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    comments = job.input.comments
    runs = TableRuns(
        summaries=list(job.input.summaries),
        generations=list(job.input.generations),
        dp_adapters=list(job.input.dp_adapters),
        comments=[comments] if isinstance(comments, str) else list(comments),
        controls=list(job.input.controls),
    )
    settings = TableSettings(
        methods=job.params.methods,
        max_regenerations=job.params.max_regenerations,
        documents_warn_below=job.params.documents_warn_below,
        presidio_extra_recognizers=job.params.presidio_extra_recognizers,
    )
    outputs = TableOutputs(csv=job.output.csv, markdown=job.output.markdown, versus=job.output.versus)
    make_table(job.input.paper, job.wildcards.table, runs, settings, outputs)


run_rule(main)
