"""Rule `utility`: the perplexity and MAUVE records of one synthetic corpus, in one file."""

from plainsight.evaluation.utility import utility_record
from plainsight.io import read_json, write_json
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w = job.wildcards
    record = utility_record(
        w.method, int(w.seed), w.setting, read_json(job.input.perplexity), read_json(job.input.mauve)
    )
    write_json(record, job.output[0])


run_rule(main)
