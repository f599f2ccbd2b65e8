"""Rule `canary_table`: results/tables/{dataset}/canaries.{csv,md} and the plot of AUC against insertions."""

from plainsight.report.canary_markdown import write_canary_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_canary_table(
        job.input.attacks,
        job.input.persons,
        job.input.canaries,
        job.params.runs,
        job.params.dp_records,
        job.params.bootstrap,
        job.params.guesses,
        {"csv": job.output.csv, "markdown": job.output.markdown, "plot": job.output.plot},
    )


run_rule(main)
