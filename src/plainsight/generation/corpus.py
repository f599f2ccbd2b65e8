"""A synthetic corpus: planned generations -> prompts -> documents, as the table every method writes.

`generate_corpus` serves every method and purpose (a method's corpus, a shard of it, the texts
MAUVE compares): the registry says how a method prompts (real contexts fitted to the model's
context, or its fictional code alone through an adapter) and whether it regenerates.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from plainsight.codes.control_code import entities_to_records
from plainsight.generation.params import GenerationSettings
from plainsight.generation.runner import Generator, Request, Result, SamplingSettings
from plainsight.generation.slots import base_model
from plainsight.methods import registry
from plainsight.methods.in_context import fitted_prompts, prompt_budget
from plainsight.methods.planned import PlannedGeneration
from plainsight.methods.prompts import render
from plainsight.methods.trained import cut_unfinished_paragraphs
from plainsight.models import model_placement

log = logging.getLogger(__name__)

CORPUS_COLUMNS = (
    "generation_id",
    "method",
    "seed",
    "segment",
    "text",
    "context_doc_ids",
    "context_segments",
    "context_codes",
    "fictional_code",
    "fictional_entities",
    "regenerations",
    "hit_max_regenerations",
    "leaked_blocked_values",
    "prompt_tokens",
    "new_tokens",
    "trimmed_context_tokens",
    "device",
    "dtype",
)


def corpus_frame(
    method: str,
    seed: int,
    planned: Sequence[PlannedGeneration],
    results: Sequence[Result],
    trimmed: Sequence[int],
    placement: Mapping[str, str],
) -> pd.DataFrame:
    """One row per generation: text, what the prompt showed, generation statistics, and the device and
    dtype it was decoded in (`placement`)."""
    rows = []
    for generation, result, removed in zip(planned, results, trimmed, strict=True):
        rows.append(
            {
                "generation_id": generation.generation_id,
                "method": method,
                "seed": seed,
                "segment": generation.segment,
                "text": result.text,
                "context_doc_ids": [doc_id for doc_id, _ in generation.context_keys],
                "context_segments": [int(segment) for _, segment in generation.context_keys],
                "context_codes": list(generation.context_codes),
                "fictional_code": generation.target_code or "",
                "fictional_entities": entities_to_records(generation.target_entities),
                "regenerations": result.regenerations,
                "hit_max_regenerations": bool(result.leaked_blocked),
                "leaked_blocked_values": list(result.leaked_blocked),
                "prompt_tokens": result.prompt_tokens,
                "new_tokens": result.new_tokens,
                "trimmed_context_tokens": removed,
                **placement,
            }
        )
    return pd.DataFrame(rows, columns=list(CORPUS_COLUMNS))


def join_shards(shards: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The shards of one corpus as the full run writes it: every generation once, in generation id order."""
    # an empty shard (more shards than batches) would turn the typed columns into objects
    frame = pd.concat([shard for shard in shards if len(shard)] or list(shards[:1]), ignore_index=True)
    if frame["generation_id"].duplicated().any():
        raise ValueError("the shards repeat generation ids; were they written with different settings?")
    return frame.sort_values("generation_id", kind="stable", ignore_index=True)


def method_prompts(
    method: registry.Method,
    planned: Sequence[PlannedGeneration],
    tokenizer,
    generation: GenerationSettings,
    context_size: int,
) -> tuple[list[str], list[int]]:
    """Each generation's prompt, and the context tokens cut from it to fit the model's context."""
    if not method.in_context:
        return [render([], g.target_code) for g in planned], [0] * len(planned)
    budget = prompt_budget(generation.max_prompt_tokens, generation.max_new_tokens, context_size)
    prompts, trimmed = fitted_prompts(list(planned), tokenizer, budget)
    if any(trimmed):
        log.info(
            "trimmed context documents of %d prompt(s) to fit %d tokens (%d tokens removed)",
            sum(1 for t in trimmed if t),
            budget,
            sum(trimmed),
        )
    return prompts, trimmed


@dataclass(frozen=True)
class Shard:
    """Which part of its corpus a job writes: shard `index` (0-based) of `count`."""

    index: int = 0
    count: int = 1

    @classmethod
    def from_params(cls, shard: Mapping[str, int]) -> Shard:
        """The rule's `shard` param (`generation_shard` in workflow/rules/functions/generation.smk)."""
        return cls(shard["index"], shard["count"])


WHOLE_CORPUS = Shard()  # one shard: the whole corpus


def generate_corpus(
    method_name: str,
    seed: int,
    planned: Sequence[PlannedGeneration],
    model: Any,
    tokenizer,
    generation: GenerationSettings,
    shard: Shard = WHOLE_CORPUS,
    common_words: frozenset[str] = frozenset(),
) -> pd.DataFrame:
    """Shard `shard` of the corpus of `planned` generations, in generation order.

    `model` is the base model for in-context methods and the adapter model for trained ones;
    `generation` the job's generation settings; `common_words` the corpus's ordinary words,
    which the near-leak check of blocked values does not take for variants.
    """
    method = registry.method(method_name)
    prompts, trimmed = method_prompts(
        method, planned, tokenizer, generation, model.config.max_position_embeddings
    )
    sampling = SamplingSettings.from_generation(generation, method)
    requests = [
        Request(prompt, list(g.blocked_values), list(g.near_words), list(g.digit_runs))
        for prompt, g in zip(prompts, planned)
    ]
    positions, results = Generator(model, tokenizer, sampling, common_words).run_shard(
        requests,
        [g.generation_id for g in planned],
        seed,
        shard.index,
        shard.count,
        desc=f"{method_name} seed {seed} shard {shard.index}/{shard.count}",
    )
    if method.trained:
        cut_unfinished_paragraphs(results, sampling.max_new_tokens)
    return corpus_frame(
        method_name,
        seed,
        [planned[p] for p in positions],
        results,
        [trimmed[p] for p in positions],
        model_placement(base_model(model)),
    )
