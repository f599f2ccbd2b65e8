"""Temperature and nucleus (top-p) sampling, each row from its own random generator.

`generate(do_sample=True, top_p=...)` sorts the whole vocabulary of every row at
every step and then draws with `torch.multinomial` over all of it, which on a
CPU costs as much per row as a good share of the model's forward pass (49k
tokens for SmolLM2), so it erodes what batching gains. The nucleus of a
language model is almost always a few dozen tokens: `nucleus` takes the
`candidates` most probable ones with `topk`, doubles that number until every
row's candidates hold `top_p` of the probability, and the draw is over those
alone. On a GPU it sorts the whole vocabulary at once, as `generate` does: that
costs less there than asking the host whether the candidates suffice. The
distribution is the one `TemperatureLogitsWarper` + `TopPLogitsWarper` +
multinomial sampling give: a token is kept while the probability of the tokens
above it is below `top_p`.

Each document draws its random numbers from its own generator, as one block of
`max_new_tokens` uniforms when it is prefilled (`uniform_block`): its k-th token takes the
k-th of them (inverse transform sampling), whichever slot and step it runs in and whichever
rows share its batch. A step draws no random numbers at all: it gathers each slot's uniform
from the block on the device. On the CPU a block is the numbers one draw per token gives, so
a seed gives the texts it gave with a draw per step.

The tokens the value blockers ban are (slot, token) pairs kept on the device (`SlotBans`) and
copied there again only when a slot's set changes; on a GPU a step copies nothing to the host
but the drawn ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch


def nucleus(probs: torch.Tensor, top_p: float, candidates: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities, token ids) of each row's most probable tokens, most probable first, the
    probabilities outside the nucleus set to zero; as many columns as the row that needs the most."""
    vocabulary = probs.shape[-1]
    count = vocabulary if top_p >= 1 or probs.device.type != "cpu" else min(candidates, vocabulary)
    while True:
        top_probs, top_ids = probs.topk(count, dim=-1)
        if count == vocabulary or bool((top_probs.sum(-1) >= top_p).all()):
            break
        count = min(2 * count, vocabulary)
    mass_above = top_probs.cumsum(-1) - top_probs
    return top_probs.masked_fill(mass_above >= top_p, 0.0), top_ids


def inverse_transform(weights: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Per row of `weights` (non-negative, the zeros after the positive ones), the column whose cumulative
    weight first exceeds the row's uniform number in [0, 1) times its total: a draw in proportion to the
    weights that uses one random number per row."""
    cumulative = weights.cumsum(-1)
    picks = torch.searchsorted(cumulative, uniforms[:, None] * cumulative[:, -1:], right=True)[:, 0]
    # rounding may carry the pick past the last positive weight, into the zeros after it
    return torch.minimum(picks, (weights > 0).sum(-1) - 1)


def mask_banned(scores: torch.Tensor, banned: Sequence[Iterable[int]]) -> None:
    """Set `scores[row, token]` to -inf for every token id `banned[row]` holds (ids beyond the scores'
    vocabulary are left out), in one write from one small tensor of (row, token) pairs."""
    vocabulary = scores.shape[-1]
    pairs = [(row, token) for row, tokens in enumerate(banned) for token in tokens if token < vocabulary]
    if pairs:
        rows, tokens = torch.tensor(pairs, device=scores.device).T
        scores[rows, tokens] = float("-inf")


def uniform_block(generator: torch.Generator, count: int, device: torch.device) -> torch.Tensor:
    """`count` uniform numbers in [0, 1) from `generator` (on its own device), in one call, moved to `device`:
    the numbers `count` one-number draws would give on the CPU."""
    return torch.rand(count, generator=generator, device=generator.device).to(device)


class SlotBans:
    """The tokens each batch slot may not draw next, kept on the device as one tensor of (slot, token) pairs.

    A blocker's set changes only when the text comes to end in the start of a blocked value, so the
    pairs are copied to the device when a slot's set changes (or slots leave the batch), not at every
    step. `uploads` counts those copies.
    """

    def __init__(self, slots: int, device: torch.device):
        self.sets: list[frozenset[int]] = [frozenset()] * slots
        self.device = device
        self.pairs: tuple[torch.Tensor, torch.Tensor] | None = None  # (slots, tokens); None: stale
        self.uploads = 0

    def update(self, slot: int, tokens: Iterable[int]) -> None:
        tokens = frozenset(tokens)
        if tokens != self.sets[slot]:
            self.sets[slot] = tokens
            self.pairs = None

    def keep(self, slots: Sequence[int]) -> None:
        """Only `slots` stay in the batch, renumbered in their order."""
        self.sets = [self.sets[slot] for slot in slots]
        self.pairs = None

    def apply(self, scores: torch.Tensor, slots: range) -> None:
        """-inf at the banned tokens of `slots`, whose scores are the rows of `scores`."""
        if len(slots) != len(self.sets):  # a prefill's single row: its own set, once per prompt
            mask_banned(scores, [self.sets[slot] for slot in slots])
            return
        if self.pairs is None:
            vocabulary = scores.shape[-1]
            pairs = [
                (slot, token)
                for slot, tokens in enumerate(self.sets)
                for token in tokens
                if token < vocabulary
            ]
            self.pairs = torch.tensor(pairs, dtype=torch.long, device=self.device).reshape(-1, 2).T.unbind()
            self.uploads += 1
        rows, tokens = self.pairs
        if len(rows):
            scores[rows, tokens] = float("-inf")


class NucleusSampler:
    """Draws one token per row of scores (logits, -inf for banned tokens); see the module docstring."""

    def __init__(self, temperature: float, top_p: float, candidates: int = 64):
        if temperature <= 0 or not 0 < top_p <= 1:
            raise ValueError(f"need temperature > 0 and 0 < top_p <= 1, got {temperature} and {top_p}")
        self.temperature = temperature
        self.top_p = top_p
        self.candidates = candidates

    def draw(self, scores: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
        """The drawn token id of each row, row i taking `uniforms[i]` (in [0, 1), on the scores' device)."""
        if uniforms.shape != scores.shape[:1]:
            raise ValueError(f"{len(scores)} rows of scores but {tuple(uniforms.shape)} uniform numbers")
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        probs, token_ids = nucleus(probs, self.top_p, self.candidates)
        return token_ids.gather(-1, inverse_transform(probs, uniforms)[:, None])[:, 0]
