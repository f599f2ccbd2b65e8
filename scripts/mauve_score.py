"""Rule `mauve`: MAUVE between a method's texts from real test codes and those real test segments."""

import dataclasses
import logging

import pandas as pd
import torch

from plainsight.data.segments import segment_texts
from plainsight.evaluation.mauve_score import MauveSettings, mauve_score
from plainsight.io import write_json
from plainsight.logs import run_step

log = logging.getLogger("plainsight")


def main():
    params = snakemake.params.mauve  # noqa: F821
    torch.set_num_threads(snakemake.threads)  # noqa: F821
    generated = pd.read_parquet(snakemake.input.texts)  # noqa: F821
    texts = segment_texts(pd.read_parquet(snakemake.input.docs))  # noqa: F821
    real = [texts[(str(doc_id), int(segment))] for doc_id, segment in zip(generated["target_doc_id"], generated["segment"])]
    settings = MauveSettings(params["featurizer"], params["scaling_factor"], params["max_tokens"])
    result = mauve_score(generated["text"].tolist(), real, settings)
    log.info("MAUVE %.4f (%s features, %d generated vs %d real, %d buckets)", result.mauve, result.featurizer,
             result.p_samples, result.q_samples, result.buckets)
    write_json({**dataclasses.asdict(result), "empty_generations": int(generated["text"].str.strip().eq("").sum())},
               snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
