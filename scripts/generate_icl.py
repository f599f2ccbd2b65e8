"""Rule `generate_icl`: a synthetic corpus for one in-context method and seed."""

import logging

import pandas as pd
import torch

from plainsight.codes.fictional import FictionalPools
from plainsight.data.segments import segment_texts
from plainsight.generation.corpus import corpus_frame
from plainsight.generation.runner import Generator, Request, SamplingSettings
from plainsight.io import write_parquet
from plainsight.logs import run_step
from plainsight.methods.in_context import fitted_prompts, plan, prompt_budget
from plainsight.methods.registry import base_method
from plainsight.models import load_model

log = logging.getLogger("plainsight")


def main():
    method, seed = snakemake.wildcards.method, int(snakemake.wildcards.seed)  # noqa: F821
    settings = snakemake.params.generation  # noqa: F821
    torch.set_num_threads(snakemake.threads)  # noqa: F821
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    codes = pd.read_parquet(snakemake.input.codes)  # noqa: F821
    texts = segment_texts(docs)
    pools = FictionalPools.from_yaml(snakemake.input.pools)  # noqa: F821
    planned = plan(base_method(method), codes, texts, pools, seed, settings["generations_per_segment"],
                   settings["context_documents"])
    model, tokenizer = load_model(snakemake.params.model)  # noqa: F821
    budget = prompt_budget(settings["max_prompt_tokens"], settings["max_new_tokens"],
                           model.config.max_position_embeddings)
    prompts, trimmed = fitted_prompts(planned, tokenizer, budget)
    requests = [Request(prompt, list(g.blocked_values)) for prompt, g in zip(prompts, planned)]
    if any(trimmed):
        log.info("trimmed context documents of %d prompt(s) to fit %d tokens (%d tokens removed)",
                 sum(1 for t in trimmed if t), budget, sum(trimmed))
    sampling = SamplingSettings.from_config(settings, base_method(method))
    shard = snakemake.params.shard  # noqa: F821
    positions, results = Generator(model, tokenizer, sampling).run_shard(
        requests, [g.generation_id for g in planned], seed, shard["index"], shard["count"],
        desc=f"{method} seed {seed} shard {shard['index']}/{shard['count']}")
    frame = corpus_frame(method, seed, [planned[p] for p in positions], results, [trimmed[p] for p in positions])
    write_parquet(frame, snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
