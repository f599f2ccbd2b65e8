"""Rule `membership_scores`: every audited text scored by the base model and by each trained adapter."""

import pandas as pd
import torch

from plainsight.audit.membership import ScoringSettings, membership_scores
from plainsight.data.segments import segment_texts
from plainsight.io import write_parquet
from plainsight.models import load_model, resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    torch.set_num_threads(job.threads)
    params = job.params
    model, tokenizer = load_model(params.model, *resolve_placement(params.placement))
    settings = ScoringSettings(
        max_length=params.max_length, batch_size=params.batch_size, min_k_share=params.min_k
    )
    scores = membership_scores(
        model,
        tokenizer,
        dict(zip(params.methods, job.input.adapters)),
        pd.read_parquet(job.input.codes),
        segment_texts(pd.read_parquet(job.input.docs)),
        settings,
        job.seed,
        codes_file=job.input.codes,
    )
    write_parquet(scores, job.output[0])


run_rule(main)
