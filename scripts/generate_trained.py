"""Rule `generate_trained`: a synthetic corpus from a trained adapter, prompted with fictional codes."""

import pandas as pd
import torch

from plainsight.generation.corpus import corpus_frame
from plainsight.generation.runner import Generator, Request, SamplingSettings
from plainsight.io import write_parquet
from plainsight.logs import run_step
from plainsight.methods.prompts import render
from plainsight.methods.trained import cut_unfinished_paragraphs, plan
from plainsight.models import load_model
from plainsight.training.prefix import load_adapter


def main():
    method, seed = snakemake.wildcards.method, int(snakemake.wildcards.seed)  # noqa: F821
    settings = snakemake.params.generation  # noqa: F821
    torch.set_num_threads(snakemake.threads)  # noqa: F821
    codes = pd.read_parquet(snakemake.input.codes)  # noqa: F821
    fictional = pd.read_parquet(snakemake.input.fictional)  # noqa: F821
    planned = plan(fictional, codes, seed, snakemake.params.generations)  # noqa: F821
    model, tokenizer = load_model(snakemake.params.model)  # noqa: F821
    adapter = load_adapter(model, snakemake.input.adapter)  # noqa: F821
    sampling = SamplingSettings.from_config(settings, method)
    requests = [Request(render([], generation.target_code)) for generation in planned]
    shard = snakemake.params.shard  # noqa: F821
    positions, results = Generator(adapter, tokenizer, sampling).run_shard(
        requests, [g.generation_id for g in planned], seed, shard["index"], shard["count"],
        desc=f"{method} seed {seed} shard {shard['index']}/{shard['count']}")
    cut_unfinished_paragraphs(results, sampling.max_new_tokens)
    frame = corpus_frame(method, seed, [planned[p] for p in positions], results, [0] * len(positions))
    write_parquet(frame, snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
