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

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from plainsight.progress import Progress
from plainsight.training.loop import TrainingExample, TrainingSettings, train
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

    def weights_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype to load the model in, given `model.dtype`: float32 when every weight is trained."""
        return torch.float32 if self.mode == "full" else dtype


@dataclass(frozen=True)
class Perplexity:
    perplexity: float
    nll_sum: float
    tokens: int  # predicted tokens


def windows(token_ids: Sequence[int], max_length: int) -> list[list[int]]:
    """Consecutive windows of at most `max_length` tokens; windows of one token predict nothing and are dropped."""
    if max_length < 2:
        raise ValueError("max_length must be at least 2 to predict a token")
    pieces = [list(token_ids[i:i + max_length]) for i in range(0, len(token_ids), max_length)]
    return [piece for piece in pieces if len(piece) > 1]


@torch.inference_mode()
def corpus_perplexity(model, tokenizer, texts: Sequence[str], max_length: int, batch_size: int = 4,
                      desc: str = "perplexity") -> Perplexity:
    """exp(mean token negative log-likelihood over every predicted token of `texts`)."""
    pieces = [w for text in texts if text.strip()
              for w in windows(tokenizer(text, add_special_tokens=False).input_ids, max_length)]
    if not pieces:
        raise ValueError("no text to score: every text is empty or a single token")
    pieces.sort(key=len)  # similar lengths per batch: little padding
    model.eval()
    device = next(model.parameters()).device
    nll_sum, tokens = 0.0, 0
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with Progress(len(pieces), desc, "windows") as progress:
        for start in range(0, len(pieces), batch_size):
            batch = pieces[start:start + batch_size]
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
    nll = F.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]), targets.reshape(-1),
                          ignore_index=IGNORE_INDEX, reduction="sum").item()
    return nll, int((targets != IGNORE_INDEX).sum())


def text_examples(texts: Sequence[str], tokenizer, max_length: int) -> list[TrainingExample]:
    """Plain language-modelling examples (loss on every token, end of text included), one per window."""
    examples = []
    for number, text in enumerate(texts):
        if not text.strip():
            continue
        ids = tokenizer(text, add_special_tokens=False).input_ids + [tokenizer.eos_token_id]
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

    config = LoraConfig(r=settings.lora_rank, lora_alpha=2 * settings.lora_rank, lora_dropout=0.0,
                        target_modules="all-linear", task_type="CAUSAL_LM")
    return get_peft_model(model, config)


def finetune(model, tokenizer, texts: Sequence[str], settings: FinetuneSettings, seed: int,
             desc: str = "fine-tune") -> tuple[object, list[dict[str, float]]]:
    """Fine-tune `model` on `texts` with the plain LM loss; returns the tuned model and the step losses.

    With no usable text (every synthetic text empty) the model is returned unchanged.
    """
    examples = text_examples(texts, tokenizer, settings.max_length)
    if not examples:
        log.warning("%s: no non-empty text to fine-tune on; the model stays as it is", desc)
        return model, []
    tuned = trainable(model, settings)
    history = train(tuned, examples, TrainingSettings(settings.epochs, settings.learning_rate,
                                                      settings.batch_size, settings.max_length),
                    masked=False, seed=seed, pad_token_id=tokenizer.pad_token_id, desc=desc)
    return tuned, history
