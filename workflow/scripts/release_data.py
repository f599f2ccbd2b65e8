"""Rule `release_data`: a bundle's data file, the rows it ships over its seeds."""

from plainsight.report.release import read_seeds, write_data_file
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    write_data_file(read_seeds(job.input.rows), job.output[0])


run_rule(main)
