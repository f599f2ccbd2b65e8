"""Rule `utility`: the perplexity and MAUVE records of one synthetic corpus, in one file."""

from plainsight.evaluation.utility import utility_record
from plainsight.io import read_json, write_json
from plainsight.logs import run_step


def main():
    wildcards = snakemake.wildcards  # noqa: F821
    perplexity = read_json(snakemake.input.perplexity)  # noqa: F821
    mauve = read_json(snakemake.input.mauve)  # noqa: F821
    perplexity = {key: value for key, value in perplexity.items() if key not in ("method", "seed", "setting")}
    mauve = {("mauve" if key == "mauve" else f"mauve_{key}"): value for key, value in mauve.items()}
    write_json(utility_record(wildcards.method, int(wildcards.seed), wildcards.setting, perplexity, mauve),
               snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
