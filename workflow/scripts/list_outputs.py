"""Rule `all_tables`: a list of every table (the methods table too), plot and review page built, and of
the private-selection methods' privacy summaries and guarantee records, one path per line."""

from plainsight.io import write_text
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    inputs = job.input
    paths = [
        *inputs.tables,
        *inputs.methods,
        *inputs.plots,
        *inputs.review,
        *inputs.private_selection,
        *inputs.guarantees,
    ]
    write_text("".join(f"{path}\n" for path in paths), job.output[0])


run_rule(main)
