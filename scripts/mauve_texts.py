"""Rule `mauve_texts`: one text per real test segment, written by the method from that segment's real code."""

import pandas as pd
import torch

from plainsight.data.segments import segment_texts
from plainsight.evaluation.utility import mauve_targets
from plainsight.generation.corpus import corpus_frame
from plainsight.generation.runner import Generator, Request, SamplingSettings
from plainsight.io import write_parquet
from plainsight.logs import run_step
from plainsight.methods.in_context import fitted_prompts, prompt_budget
from plainsight.methods.in_context import plan_for_segments as in_context_plan
from plainsight.methods.prompts import render
from plainsight.methods.registry import base_method
from plainsight.methods.trained import TRAINED_METHODS, cut_unfinished_paragraphs
from plainsight.methods.trained import plan_for_segments as trained_plan
from plainsight.models import load_model
from plainsight.training.prefix import load_adapter


def main():
    method, seed = snakemake.wildcards.method, int(snakemake.wildcards.seed)  # noqa: F821
    settings = snakemake.params.generation  # noqa: F821
    torch.set_num_threads(snakemake.threads)  # noqa: F821
    docs = pd.read_parquet(snakemake.input.docs)  # noqa: F821
    codes = pd.read_parquet(snakemake.input.codes)  # noqa: F821
    targets = mauve_targets(docs, snakemake.params.samples)  # noqa: F821
    model, tokenizer = load_model(snakemake.params.model)  # noqa: F821
    trained = base_method(method) in TRAINED_METHODS
    if trained:
        planned = trained_plan(codes, targets)
        model = load_adapter(model, snakemake.input.adapter)  # noqa: F821
        prompts, trimmed = [render([], g.target_code) for g in planned], [0] * len(planned)
    else:
        planned = in_context_plan(base_method(method), codes, segment_texts(docs), targets, seed,
                                  settings["context_documents"])
        budget = prompt_budget(settings["max_prompt_tokens"], settings["max_new_tokens"],
                               model.config.max_position_embeddings)
        prompts, trimmed = fitted_prompts(planned, tokenizer, budget)
    sampling = SamplingSettings.from_config(settings, base_method(method))
    requests = [Request(prompt, list(g.blocked_values)) for prompt, g in zip(prompts, planned)]
    results = Generator(model, tokenizer, sampling).run(requests, seed, desc=f"MAUVE texts {method} seed {seed}")
    if trained:
        cut_unfinished_paragraphs(results, sampling.max_new_tokens)
    frame = corpus_frame(method, seed, planned, results, trimmed)
    frame.insert(4, "target_doc_id", [doc_id for doc_id, _ in targets])
    write_parquet(frame, snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
