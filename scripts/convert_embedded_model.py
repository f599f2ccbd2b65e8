"""Rule `convert_embedded_model`: GGUF from a registry package -> plain model folder."""

import shutil
from pathlib import Path

from plainsight.logs import run_step
from plainsight.models import convert_embedded


def main():
    out = Path(snakemake.output[0])  # noqa: F821
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    convert_embedded(snakemake.wildcards.model, tmp)  # noqa: F821
    tmp.rename(out)


run_step(main, snakemake.log[0])  # noqa: F821
