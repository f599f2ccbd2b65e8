"""Plain language-model fine-tuning on texts (every weight, or LoRA adapters; the one loop, `fit`), and
the negative log-likelihood of texts under a model. Two stages use them: the utility table's perplexity
(`plainsight.evaluation.perplexity`: a fresh model tuned on a synthetic corpus, scored on real test
text) and RPSG's surrogate model (`plainsight.generation.seed_rewrite`: tuned on the method's variants,
its NLL filtering the final texts).

Each text is scored in windows of at most `max_length` tokens; the first token of a window has no
context and is not predicted, as in the usual evaluation of causal language models. Scoring logs its
progress (windows scored, tokens/s, time left) every 30 s (`plainsight.progress`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from plainsight.progress import Progress
from plainsight.rng import cuda_indices, seeded_torch
from plainsight.training.examples import TrainingExample
from plainsight.training.loop import Tracking, TrainingSettings, fit
from plainsight.training.scoring import scored_batches

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
        """The settings of a config block with these keys: `utility.perplexity`, RPSG's `surrogate`."""
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


def windows(token_ids: Sequence[int], max_length: int) -> list[list[int]]:
    """Consecutive windows of at most `max_length` tokens; windows of one token predict nothing and are
    dropped."""
    if max_length < 2:
        raise ValueError("max_length must be at least 2 to predict a token")
    pieces = [list(token_ids[i : i + max_length]) for i in range(0, len(token_ids), max_length)]
    return [piece for piece in pieces if len(piece) > 1]


@torch.inference_mode()
def text_nlls(
    model, tokenizer, texts: Sequence[str], max_length: int, batch_size: int = 4, desc: str = "score"
) -> list[tuple[float, int]]:
    """(summed negative log-likelihood, predicted tokens) of each text over its windows; (0, 0) for a
    text that is empty or a single token."""
    examples = text_examples(texts, tokenizer, max_length, end_of_text=False)
    model.eval()
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    totals = [(0.0, 0)] * len(texts)
    with Progress(len(examples), desc, "windows") as progress:
        for batch in scored_batches(model, examples, pad, batch_size, progress):
            for row, index in enumerate(batch.positions):
                number = int(examples[index].key[0])
                nll, predicted = -batch.log_probs[row].sum(), batch.labelled[row].sum()
                totals[number] = (totals[number][0] + float(nll), totals[number][1] + int(predicted))
    return totals


def text_examples(
    texts: Sequence[str], tokenizer, max_length: int, end_of_text: bool = True
) -> list[TrainingExample]:
    """Plain language-modelling examples (every token labelled), one per window of each non-empty text,
    keyed (the text's number, the window's); with `end_of_text` (fine-tuning: the model learns to
    stop) each text ends with the end-of-text token, without it (scoring) the text is as written."""
    examples = []
    for number, text in enumerate(texts):
        if not text.strip():
            continue
        ids = tokenizer(text, add_special_tokens=False).input_ids
        if end_of_text:
            ids = [*ids, tokenizer.eos_token_id]
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

    With no usable text (every text empty) the model is returned unchanged.
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
        tracking=Tracking(desc),
    )
    return tuned, history
