"""Rule `convert_embedded_model`: GGUF from a registry package -> plain model folder."""

from plainsight.models import convert_embedded
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    convert_embedded(job.wildcards.model, job.output[0])


run_rule(main)
