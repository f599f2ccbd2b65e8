"""Rule `utility_measures`: downstream scores, adherence, diversity and FID of one run's corpora."""

import pandas as pd
import torch

from plainsight.evaluation.downstream import DownstreamSettings
from plainsight.evaluation.features import EMBEDDED_FEATURIZER, FeatureSettings
from plainsight.evaluation.utility_measures import RunKey, utility_measures
from plainsight.io import write_parquet
from plainsight.models import resolve_placement
from plainsight.settings import DownstreamConfig, config_block
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    torch.set_num_threads(job.threads)
    corpora = {
        (key["method"], int(key["seed"])): pd.read_parquet(path)
        for key, path in zip(job.params.corpus_keys, job.input.corpora, strict=True)
    }
    device, dtype = resolve_placement(job.params.placement)
    # FID on the embedded MiniLM's features, whatever featurizer MAUVE uses
    features = FeatureSettings(
        EMBEDDED_FEATURIZER, max_tokens=min(256, job.params.mauve["max_tokens"]), device=device, dtype=dtype
    )
    run = RunKey(job.wildcards.dataset, job.wildcards.setting, job.wildcards.idset)
    measures = utility_measures(
        pd.read_parquet(job.input.docs),
        pd.read_parquet(job.input.codes),
        corpora,
        run,
        DownstreamSettings.from_config(
            config_block(DownstreamConfig, job.params.downstream, "utility.downstream")
        ),
        features,
        job.params.mauve["samples"],
        job.params.placement,
    )
    write_parquet(measures, job.output[0])


run_rule(main)
