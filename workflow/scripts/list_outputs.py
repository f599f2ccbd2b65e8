"""Rule `all_tables`: a list of every table, plot and review page built, one path per line."""

from plainsight.io import write_text
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    paths = [*job.input.tables, *job.input.plots, *job.input.review]
    write_text("".join(f"{path}\n" for path in paths), job.output[0])


run_rule(main)
