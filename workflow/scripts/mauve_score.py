"""Rule `mauve`: MAUVE between a method's texts from real test codes and those real test segments."""

import dataclasses
import logging

import pandas as pd
import torch

from plainsight.data.segments import segment_texts
from plainsight.evaluation.mauve_score import MauveSettings, mauve_score
from plainsight.io import write_json
from plainsight.models import resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    params = job.params.mauve
    torch.set_num_threads(job.threads)
    generated = pd.read_parquet(job.input.texts)
    texts = segment_texts(pd.read_parquet(job.input.docs))
    real = [texts[(str(doc_id), int(segment))]
            for doc_id, segment in zip(generated["target_doc_id"], generated["segment"])]
    device, dtype = resolve_placement(job.params.placement)
    settings = MauveSettings(params["featurizer"], params["scaling_factor"], params["max_tokens"], device=device,
                             dtype=dtype)
    result = mauve_score(generated["text"].tolist(), real, settings)
    log.info("MAUVE %.4f (%s features, %d generated vs %d real, %d buckets)", result.mauve, result.featurizer,
             result.p_samples, result.q_samples, result.buckets)
    write_json({**dataclasses.asdict(result), "empty_generations": int(generated["text"].str.strip().eq("").sum())},
               job.output[0])


run_rule(main)
