"""Training objectives for prefix tuning, and the private-token mask of the masked variant.

Plain prefix tuning minimises the language-modelling loss on the document. The masked variant
("ft_mask") adds two terms that use the same model with the adapter disabled as a fixed base
(P_base), and the privacy mask M_t (M_t = 0 on tokens of a private value, 1 elsewhere):

    L_LM          = -sum_t log P_theta(y_t | y_<t)
    L_contrastive = -sum_t (1 - M_t) log( P_theta(y_t | y_<t) / (P_theta(y_t | y_<t) + P_base(y_t | y_<t)) )
    L_KL          =  sum_t M_t sum_v P_base(v | y_<t) log( P_base(v | y_<t) / P_theta(v | y_<t) )
    L_total       =  lambda_lm L_LM + lambda_contrastive L_contrastive + lambda_kl L_KL

The sums run over document tokens only (labels != -100 after the causal shift: logits at
position t predict the token at t + 1). The contrastive term ties the adapted model to the base
model on private tokens only, the KL term ties it to the base distribution on every other token.
As written (and implemented here exactly), minimising the contrastive term raises
P_theta(y_t) relative to P_base(y_t) on private tokens: its gradient in P_theta is negative.

Normalisation (our choice; the paper writes plain sums): each term is divided by its own token
count, L_LM by the number of document tokens, L_contrastive by the number of private document
tokens and L_KL by the number of non-private document tokens, so that the lambdas weigh
per-token averages whatever the share of private tokens in a batch. A term with no tokens is
exactly 0 and still supports backward.

Two variants (`prefix_tuning.objective`): `paper` (the above, with the configured lambdas) and
`reference_code`, as the reference implementation's code computes it: fixed weights 1 / 4 / 1.6
for (LM, contrastive, KL), and the KL term averaged over every position of the padded batch
(B x (T - 1) shifted positions: prompt, private and padding positions included), not over the
public document tokens. (That code also clamps the base probabilities at 1e-10; here a zero base
probability adds exactly 0, a difference below 1e-9 per position.)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from plainsight.matching import value_pattern

IGNORE_INDEX = -100


@dataclass(frozen=True)
class Lambdas:
    """Weights of the three terms of the masked objective."""

    lm: float = 1.0
    contrastive: float = 1.0
    kl: float = 1.0


OBJECTIVES = ("paper", "reference_code")
# The reference implementation's weights of (LM, contrastive, KL).
REFERENCE_CODE_LAMBDAS = Lambdas(1.0, 4.0, 1.6)


# --- losses ------------------------------------------------------------------------------------


def _document_positions(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The shifted document mask [B, T-1] and the target tokens at those positions [N]."""
    if logits.dim() != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(
            f"expected logits [B, T, V] and labels [B, T], got {tuple(logits.shape)} "
            f"and {tuple(labels.shape)}"
        )
    shifted = labels[:, 1:]
    doc = shifted != IGNORE_INDEX
    return doc, shifted[doc]


def _target_log_probs(
    logits: torch.Tensor, doc: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-softmax rows [N, V] at document positions, and the log-probability of each target [N].

    Rows are selected before the softmax so that prompt and padding positions cost nothing;
    float32 keeps half-precision logits from losing the small differences the terms depend on.
    """
    log_probs = logits[:, :-1][doc].float().log_softmax(dim=-1)
    return log_probs, log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def _mean(values: torch.Tensor, count: int | None = None) -> torch.Tensor:
    """Mean over a 1-D tensor, or its sum over `count` (the whole batch's count, for one micro-batch of
    it); an empty one gives an exact 0 that still supports backward."""
    return values.sum() / max(values.numel() if count is None else count, 1)


def term_counts(labels: torch.Tensor, private: torch.Tensor, objective: str = "paper") -> dict[str, int]:
    """The token counts each term of a batch is divided by ("lm" also the plain LM loss's). A batch
    split into micro-batches divides each micro-batch's sums by the whole batch's counts, so the
    micro-batches' losses and gradients add up to the batch's."""
    doc = labels[:, 1:] != IGNORE_INDEX
    is_private = private[:, 1:].to(torch.bool) & doc
    kl = doc & ~is_private if objective == "paper" else torch.ones_like(doc)
    return {"lm": int(doc.sum()), "contrastive": int(is_private.sum()), "kl": int(kl.sum())}


def lm_loss(logits: torch.Tensor, labels: torch.Tensor, count: int | None = None) -> torch.Tensor:
    """Mean negative log-likelihood over document tokens (labels != -100 after the shift); with `count`,
    their sum over it (`term_counts`)."""
    doc, targets = _document_positions(logits, labels)
    _, target_lp = _target_log_probs(logits, doc, targets)
    return _mean(-target_lp, count)


def _kl_rows(log_q: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
    """KL(base || theta) of each row of log-probabilities [N, V]; a zero base probability adds 0, not NaN."""
    q = log_q.exp()
    return torch.where(q > 0, q * (log_q - log_p), torch.zeros_like(q)).sum(dim=-1)


def masked_objective(
    logits: torch.Tensor,
    base_logits: torch.Tensor,
    labels: torch.Tensor,
    private: torch.Tensor,
    lambdas: Lambdas,
    objective: str = "paper",
    counts: dict[str, int] | None = None,
) -> dict[str, torch.Tensor]:
    """The weighted total ("loss") and its normalised, unweighted terms ("lm", "contrastive", "kl").

    `base_logits` are a fixed reference (the model without its adapter): they are detached, so
    they may come from a no_grad forward pass. `objective="reference_code"` takes the KL term over
    every position of the padded batch (`lambdas` are the caller's: `REFERENCE_CODE_LAMBDAS` there).
    `counts` (`term_counts` of a whole batch) divides the terms of one micro-batch of it; by default
    each term is divided by its own count in this batch.
    """
    counts = counts or {}
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}: expected one of {OBJECTIVES}")
    if base_logits.shape != logits.shape:
        raise ValueError(f"base_logits {tuple(base_logits.shape)} differ from logits {tuple(logits.shape)}")
    if private.shape != labels.shape:
        raise ValueError(f"private {tuple(private.shape)} differs from labels {tuple(labels.shape)}")
    doc, targets = _document_positions(logits, labels)
    is_private = private[:, 1:].to(torch.bool)[doc]

    log_p, target_lp = _target_log_probs(logits, doc, targets)
    log_q, target_lq = _target_log_probs(base_logits.detach(), doc, targets)

    lm = _mean(-target_lp, counts.get("lm"))

    # log(p / (p + q)) = log p - log(p + q), with log(p + q) taken in log space.
    priv_lp, priv_lq = target_lp[is_private], target_lq[is_private]
    contrastive = _mean(torch.logaddexp(priv_lp, priv_lq) - priv_lp, counts.get("contrastive"))

    if objective == "paper":
        kl = _mean(_kl_rows(log_q[~is_private], log_p[~is_private]), counts.get("kl"))
    else:
        every_p = logits[:, :-1].float().log_softmax(dim=-1).flatten(0, 1)
        every_q = base_logits.detach()[:, :-1].float().log_softmax(dim=-1).flatten(0, 1)
        kl = _mean(_kl_rows(every_q, every_p), counts.get("kl"))

    loss = lambdas.lm * lm + lambdas.contrastive * contrastive + lambdas.kl * kl
    return {"loss": loss, "lm": lm, "contrastive": contrastive, "kl": kl}


# --- private-token mask ------------------------------------------------------------------------


def private_char_spans(text: str, values: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of every occurrence of every value in `text`, sorted.

    Matching is that of the leak metrics (`value_pattern`): case-insensitive, whole word,
    whitespace in a value matching any run, so that the tokens trained against are the ones a
    leak would be counted on. Spans of different values may overlap.
    """
    spans: set[tuple[int, int]] = set()
    for value in dict.fromkeys(values):
        if not value or not value.split():
            continue
        spans.update(match.span() for match in value_pattern(value).finditer(text))
    return sorted(spans)


def private_token_mask(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """Per token, whether its character range overlaps a span (start < span_end and end > span_start).

    `offsets` is a fast tokenizer's offset_mapping. A token with an empty range, such as a
    special token's (0, 0), covers no characters and is never private; nor does an empty span
    mark anything. Overlapping spans are merged into disjoint sorted intervals, so each token
    is one binary search: the first interval ending after the token's start is the only
    candidate, since every later one starts no earlier.
    """
    merged: list[list[int]] = []
    for start, end in sorted((int(s), int(e)) for s, e in spans):
        if end <= start:
            continue
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    starts = [interval[0] for interval in merged]
    ends = [interval[1] for interval in merged]

    mask = []
    for token_start, token_end in offsets:
        token_start, token_end = int(token_start), int(token_end)
        if token_end <= token_start:
            mask.append(False)
            continue
        i = bisect.bisect_right(ends, token_start)
        mask.append(i < len(starts) and starts[i] < token_end)
    return mask
