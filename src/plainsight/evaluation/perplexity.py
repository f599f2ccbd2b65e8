"""Perplexity as a utility metric: fine-tune a fresh model on synthetic text, score real test text.

Perplexity is taken over the corpus, not per document: exp(total negative
log-likelihood / number of predicted tokens). Each text is scored in windows of
at most `max_length` tokens; the first token of a window has no context and is
not predicted, as in the usual evaluation of causal language models.

The model runs on its device in `model.dtype`, except under full fine-tuning: there every weight
is trained, and trained weights stay float32 (`weights_dtype`), as the optimizer's small updates
are lost in half precision. The reference (base model) row uses the same rule, so every row of a
utility table is scored in the same precision.

Scoring logs its progress (windows scored, tokens/s, time left) every 30 s (`plainsight.progress`).
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
import torch.nn.functional as F

from plainsight.data.segments import segment_texts, test_segments
from plainsight.evaluation.utility import BASE_MODEL_METHOD
from plainsight.io import write_json
from plainsight.models import load_model, model_placement, resolve_placement
from plainsight.progress import Progress
from plainsight.rng import cuda_indices, seeded_torch
from plainsight.training.examples import TrainingExample
from plainsight.training.loop import TrainingSettings, fit
from plainsight.training.objectives import IGNORE_INDEX

log = logging.getLogger(__name__)

FINETUNE_MODES = ("full", "lora")


@dataclass(frozen=True)
class FinetuneSettings:
    mode: str  # "full": every weight; "lora": low-rank adapters on the attention projections
    epochs: int
    learning_rate: float
    batch_size: int
    max_length: int
    lora_rank: int = 8

    def __post_init__(self):
        if self.mode not in FINETUNE_MODES:
            raise ValueError(f"fine-tuning mode {self.mode!r} is not one of {FINETUNE_MODES}")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> FinetuneSettings:
        """The settings of the config's `utility.perplexity` block."""
        return cls(
            params["finetune"],
            params["epochs"],
            params["learning_rate"],
            params["batch_size"],
            params["max_length"],
            params["lora_rank"],
        )

    def weights_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype to load the model in, given `model.dtype`: float32 when every weight is trained."""
        return torch.float32 if self.mode == "full" else dtype


@dataclass(frozen=True)
class Perplexity:
    perplexity: float
    nll_sum: float
    tokens: int  # predicted tokens


def windows(token_ids: Sequence[int], max_length: int) -> list[list[int]]:
    """Consecutive windows of at most `max_length` tokens; windows of one token predict nothing and
    are dropped."""
    if max_length < 2:
        raise ValueError("max_length must be at least 2 to predict a token")
    pieces = [list(token_ids[i : i + max_length]) for i in range(0, len(token_ids), max_length)]
    return [piece for piece in pieces if len(piece) > 1]


@torch.inference_mode()
def corpus_perplexity(
    model, tokenizer, texts: Sequence[str], max_length: int, batch_size: int = 4, desc: str = "perplexity"
) -> Perplexity:
    """exp(mean token negative log-likelihood over every predicted token of `texts`)."""
    pieces = [
        w
        for text in texts
        if text.strip()
        for w in windows(tokenizer(text, add_special_tokens=False).input_ids, max_length)
    ]
    if not pieces:
        raise ValueError("no text to score: every text is empty or a single token")
    pieces.sort(key=len)  # similar lengths per batch: little padding
    model.eval()
    device = next(model.parameters()).device
    nll_sum, tokens = 0.0, 0
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with Progress(len(pieces), desc, "windows") as progress:
        for start in range(0, len(pieces), batch_size):
            batch = pieces[start : start + batch_size]
            nll, predicted = _batch_nll(model, batch, pad, device)
            nll_sum += nll
            tokens += predicted
            progress.update(len(batch), tokens=sum(map(len, batch)))
    return Perplexity(math.exp(nll_sum / tokens), nll_sum, tokens)


def _batch_nll(model, batch: Sequence[list[int]], pad: int, device) -> tuple[float, int]:
    """(summed negative log-likelihood, predicted tokens) of one right-padded batch of windows."""
    width = max(len(p) for p in batch)
    input_ids = torch.tensor([p + [pad] * (width - len(p)) for p in batch], device=device)
    attention = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in batch], device=device)
    labels = torch.tensor([p + [IGNORE_INDEX] * (width - len(p)) for p in batch], device=device)
    logits = model(input_ids=input_ids, attention_mask=attention).logits
    targets = labels[:, 1:]
    nll = F.cross_entropy(
        logits[:, :-1].float().reshape(-1, logits.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="sum",
    ).item()
    return nll, int((targets != IGNORE_INDEX).sum())


def text_examples(texts: Sequence[str], tokenizer, max_length: int) -> list[TrainingExample]:
    """Plain language-modelling examples (loss on every token, end of text included), one per window."""
    examples = []
    for number, text in enumerate(texts):
        if not text.strip():
            continue
        ids = [*tokenizer(text, add_special_tokens=False).input_ids, tokenizer.eos_token_id]
        for part, window in enumerate(windows(ids, max_length)):
            examples.append(TrainingExample((str(number), part), window, list(window), [False] * len(window)))
    return examples


def trainable(model, settings: FinetuneSettings):
    """The model to fine-tune: every weight trainable, or wrapped with LoRA adapters."""
    if settings.mode == "full":
        for parameter in model.parameters():
            parameter.requires_grad_(True)
        return model
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=settings.lora_rank,
        lora_alpha=2 * settings.lora_rank,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def finetune(
    model, tokenizer, texts: Sequence[str], settings: FinetuneSettings, seed: int, desc: str = "fine-tune"
) -> tuple[object, list[dict[str, float]]]:
    """Fine-tune `model` on `texts` with the plain LM loss; returns the tuned model and the step losses.

    With no usable text (every synthetic text empty) the model is returned unchanged.
    """
    examples = text_examples(texts, tokenizer, settings.max_length)
    if not examples:
        log.warning("%s: no non-empty text to fine-tune on; the model stays as it is", desc)
        return model, []
    # LoRA's A matrices start random: drawn from generators seeded here, not from the process's.
    with seeded_torch(seed, "lora init", devices=cuda_indices(next(model.parameters()).device)):
        tuned = trainable(model, settings)
    history = fit(
        tuned,
        examples,
        TrainingSettings(settings.epochs, settings.learning_rate, settings.batch_size, settings.max_length),
        seed=seed,
        pad_token_id=tokenizer.pad_token_id,
        desc=desc,
    )
    return tuned, history


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
