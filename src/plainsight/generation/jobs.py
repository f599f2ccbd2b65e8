"""The generate jobs: rules `generate_icl`, `generate_trained` (a method's corpus, or one shard of it) and
`mauve_texts` (one text per sampled real test segment, from that segment's real code, for MAUVE).

`GenerateJob` is what such a job reads from its rule; `generate_texts` plans the generations, loads the
model (with the method's adapter) and decodes them (`plainsight.generation.corpus.generate_corpus`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import torch

from plainsight.codes.surrogates import fictional_drawer
from plainsight.data.segments import SegmentKey, mauve_targets, segment_texts
from plainsight.generation.corpus import generate_corpus
from plainsight.methods import in_context, registry, trained
from plainsight.methods.in_context import Blocking
from plainsight.models import load_model, resolve_placement
from plainsight.training.prefix import load_adapter

PURPOSES = ("corpus", "mauve")


@dataclass(frozen=True)
class GenerateJob:
    """One generate job: its method, seed and purpose, its input files (None where the rule has none),
    the model and the settings its rule hands it."""

    method: str
    seed: int
    purpose: str  # "corpus": the method's synthetic corpus; "mauve": texts for MAUVE's test segments
    codes: str
    model: str
    placement: Mapping[str, Any]
    generation: Mapping[
        str, Any
    ]  # the rule's `generation` params (plainsight.generation.corpus.generation_params)
    docs: str | None = None
    spans: str | None = None
    pools: str | None = None
    surrogates: str = "paper"  # codes.surrogates: how an in-context method's fictional codes are drawn
    surrogate_lists: str | None = None
    fictional: str | None = None
    adapter: str | None = None
    generations: int | None = None  # a trained method's corpus size
    mauve_samples: int | None = None
    shard: int = 0
    shards: int = 1
    threads: int = 1

    def __post_init__(self):
        if self.purpose not in PURPOSES:
            raise ValueError(f"purpose {self.purpose!r} is not one of {PURPOSES}")


def blocking(job: GenerateJob, method: registry.Method, codes: pd.DataFrame, texts) -> Blocking:
    """What the method blocks: nothing unless it blocks its context values (then as configured)."""
    if not method.blocks_context_values:
        return Blocking()
    return Blocking.for_corpus(job.generation["blocking"], codes, texts)


def corpus_plan(job: GenerateJob, method: registry.Method, codes: pd.DataFrame, texts, blocked: Blocking):
    if method.trained:
        return trained.plan(pd.read_parquet(job.fictional), codes, job.seed, job.generations)
    draw = fictional_drawer(codes, pd.read_parquet(job.spans), job.pools, job.surrogates, job.surrogate_lists)
    return in_context.plan(
        method.name,
        codes,
        texts,
        draw,
        job.seed,
        job.generation["generations_per_segment"],
        job.generation["context_documents"],
        blocked,
    )


def mauve_plan(
    job: GenerateJob,
    method: registry.Method,
    codes: pd.DataFrame,
    texts,
    targets: list[SegmentKey],
    blocked: Blocking,
):
    if method.trained:
        return trained.plan_for_segments(codes, targets)
    return in_context.plan_for_segments(
        method.name, codes, texts, targets, job.seed, job.generation["context_documents"], blocked
    )


def load_job_model(job: GenerateJob, method: registry.Method):
    """(model, tokenizer): the configured model where the job says, with the method's adapter if it
    has one."""
    model, tokenizer = load_model(job.model, *resolve_placement(job.placement))
    return (load_adapter(model, job.adapter) if method.trained else model), tokenizer


def generate_texts(job: GenerateJob) -> pd.DataFrame:
    """The job's texts as the corpus table (`plainsight.generation.corpus.CORPUS_COLUMNS`); MAUVE's texts
    also name the real test document each was written for (`target_doc_id`, after `segment`)."""
    method = registry.method(job.method)
    torch.set_num_threads(job.threads)
    codes = pd.read_parquet(job.codes)
    docs = pd.read_parquet(job.docs) if method.in_context or job.purpose == "mauve" else None
    texts = segment_texts(docs) if docs is not None else {}
    blocked = blocking(job, method, codes, texts)
    targets = mauve_targets(docs, job.mauve_samples) if job.purpose == "mauve" else None
    planned = (
        mauve_plan(job, method, codes, texts, targets, blocked)
        if targets is not None
        else corpus_plan(job, method, codes, texts, blocked)
    )
    model, tokenizer = load_job_model(job, method)
    frame = generate_corpus(
        job.method,
        job.seed,
        planned,
        model,
        tokenizer,
        job.generation,
        job.shard,
        job.shards,
        blocked.common_words,
    )
    if targets is not None:
        frame.insert(4, "target_doc_id", [targets[g][0] for g in frame["generation_id"]])
    return frame
