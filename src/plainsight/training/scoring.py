"""Examples scored by a causal language model: the log-probability of each labelled token given the
tokens before it, one forward pass per batch of examples of similar length.

Both scores of texts derive from it: the negative log-likelihood of texts
(`plainsight.training.finetune.text_nlls`: perplexity, RPSG's filter) and the token log-probabilities
of the membership attacks and canaries (`plainsight.audit.membership.document_log_probs`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from plainsight.progress import Progress
from plainsight.training.examples import TrainingExample, collate
from plainsight.training.objectives import IGNORE_INDEX


@dataclass(frozen=True)
class ScoredBatch:
    """One batch of scored examples: their positions in the list scored; each labelled token's
    log-probability, [rows, width - 1] on the model's device, 0 where a position has no label (the
    causal shift: column t scores the token at t + 1); and where a position has one."""

    positions: list[int]
    log_probs: torch.Tensor
    labelled: torch.Tensor


@torch.inference_mode()
def scored_batches(
    model,
    examples: Sequence[TrainingExample],
    pad_token_id: int,
    batch_size: int,
    progress: Progress | None = None,
) -> Iterator[ScoredBatch]:
    """The examples scored in batches of `batch_size`, by length (then position) so that a batch needs
    little padding; `progress` counts the examples and their tokens."""
    device = next(model.parameters()).device
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i].input_ids), i))
    for start in range(0, len(order), batch_size):
        positions = order[start : start + batch_size]
        batch = collate([examples[i] for i in positions], pad_token_id)
        logits = model(
            input_ids=batch["input_ids"].to(device), attention_mask=batch["attention_mask"].to(device)
        ).logits[:, :-1]
        targets = batch["labels"][:, 1:].to(device)
        labelled = targets != IGNORE_INDEX
        log_probs = logits.float().log_softmax(-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        yield ScoredBatch(positions, log_probs.masked_fill(~labelled, 0.0), labelled)
        if progress is not None:
            progress.update(len(positions), tokens=int(batch["attention_mask"].sum()))
