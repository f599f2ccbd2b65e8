"""Rule `utility`: the perplexity and MAUVE records of one synthetic corpus, in one file."""

from plainsight.evaluation.utility import utility_record
from plainsight.io import read_json, write_json
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    wildcards = job.wildcards
    perplexity = read_json(job.input.perplexity)
    mauve = read_json(job.input.mauve)
    perplexity = {key: value for key, value in perplexity.items() if key not in ("method", "seed", "setting")}
    mauve = {("mauve" if key == "mauve" else f"mauve_{key}"): value for key, value in mauve.items()}
    write_json(utility_record(wildcards.method, int(wildcards.seed), wildcards.setting, perplexity, mauve),
               job.output[0])


run_rule(main)
