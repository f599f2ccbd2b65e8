"""Rule `nearest_documents`: the three real training segments nearest to each generation of a corpus."""

import pandas as pd
import torch

from plainsight.audit.nearest import nearest_documents
from plainsight.evaluation.features import FeatureSettings
from plainsight.io import write_parquet
from plainsight.models import resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    torch.set_num_threads(job.threads)
    device, dtype = resolve_placement(job.params.placement)
    nearest = nearest_documents(
        pd.read_parquet(job.input.corpus),
        pd.read_parquet(job.input.codes),
        pd.read_parquet(job.input.docs),
        FeatureSettings(device=device, dtype=dtype),
        codes_file=job.input.codes,
    )
    write_parquet(nearest, job.output[0])


run_rule(main)
