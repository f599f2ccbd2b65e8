"""Perplexity as a utility metric: fine-tune a fresh model on synthetic text, score real test text.

Perplexity is taken over the corpus, not per document: exp(total negative
log-likelihood / number of predicted tokens), each text scored in windows of at most
`max_length` tokens (`plainsight.training.finetune`, where the fine-tuning is too).

The model runs on its device in `model.dtype`, except under full fine-tuning: there every weight
is trained, and trained weights stay float32 (`weights_dtype`), as the optimizer's small updates
are lost in half precision. The reference (base model) row uses the same rule, so every row of a
utility table is scored in the same precision.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from plainsight.data.segments import segment_texts, test_segments
from plainsight.evaluation.utility import BASE_MODEL_METHOD
from plainsight.io import write_json
from plainsight.models import load_model, model_placement, resolve_placement
from plainsight.training.finetune import FinetuneSettings, finetune, text_nlls

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Perplexity:
    perplexity: float
    nll_sum: float
    tokens: int  # predicted tokens


def corpus_perplexity(
    model, tokenizer, texts: Sequence[str], max_length: int, batch_size: int = 4, desc: str = "perplexity"
) -> Perplexity:
    """exp(mean token negative log-likelihood over every predicted token of `texts`)."""
    scored = text_nlls(model, tokenizer, texts, max_length, batch_size, desc)
    tokens = sum(predicted for _, predicted in scored)
    if not tokens:
        raise ValueError("no text to score: every text is empty or a single token")
    nll_sum = sum(nll for nll, _ in scored)
    return Perplexity(math.exp(nll_sum / tokens), nll_sum, tokens)


@dataclass(frozen=True)
class PerplexityJob:
    """One perplexity record: of a copy of the model fine-tuned on a synthetic corpus, or (no `corpus`)
    of the model untouched, the reference row."""

    docs: Path
    settings: FinetuneSettings
    model: str  # a model folder or id
    placement: Mapping[str, str]  # the config's `model` block: device and dtype
    output: Path
    corpus: Path | None = None
    method: str | None = None
    seed: int | None = None
    setting: str | None = None
    threads: int = 1


def write_perplexity(job: PerplexityJob) -> None:
    """Fine-tune (with a corpus) and score the real test split; write the record as JSON."""
    torch.set_num_threads(job.threads)
    docs = pd.read_parquet(job.docs)
    texts = segment_texts(docs)
    test_texts = [texts[key] for key in test_segments(docs)]
    device, dtype = resolve_placement(job.placement)
    model, tokenizer = load_model(job.model, device, job.settings.weights_dtype(dtype))
    record: dict[str, Any] = {"method": BASE_MODEL_METHOD}
    if job.corpus is not None:
        synthetic = pd.read_parquet(job.corpus)["text"].tolist()
        model, history = finetune(
            model,
            tokenizer,
            synthetic,
            job.settings,
            job.seed,
            desc=f"fine-tune on {job.method} seed {job.seed}",
        )
        record = {
            "method": job.method,
            "seed": job.seed,
            "setting": job.setting,
            "training_texts": sum(1 for t in synthetic if t.strip()),
            "training_steps": len(history),
            "final_loss": history[-1]["loss"] if history else None,
        }
    scored = corpus_perplexity(model, tokenizer, test_texts, job.settings.max_length, job.settings.batch_size)
    log.info(
        "perplexity %.3f over %d test tokens (%d test segments)",
        scored.perplexity,
        scored.tokens,
        len(test_texts),
    )
    write_json(
        {
            **record,
            "perplexity": scored.perplexity,
            "test_tokens": scored.tokens,
            "test_segments": len(test_texts),
            "finetune": dataclasses.asdict(job.settings),
            **model_placement(model),
        },
        job.output,
    )
