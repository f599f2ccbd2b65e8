"""Temperature and nucleus (top-p) sampling, each row from its own random generator.

`generate(do_sample=True, top_p=...)` sorts the whole vocabulary of every row at
every step and then draws with `torch.multinomial` over all of it, which on a
CPU costs as much per row as a good share of the model's forward pass (49k
tokens for SmolLM2), so it erodes what batching gains. The nucleus of a
language model is almost always a few dozen tokens: `nucleus` takes the
`candidates` most probable ones with `topk`, doubles that number until every
row's candidates hold `top_p` of the probability, and the draw is over those
alone. The distribution is the one `TemperatureLogitsWarper` +
`TopPLogitsWarper` + multinomial sampling give: a token is kept while the
probability of the tokens above it is below `top_p`.

Each row draws from its own `torch.Generator`, so a document's random numbers
are its own whichever rows share its batch.
"""

from __future__ import annotations

from typing import Sequence

import torch


def nucleus(probs: torch.Tensor, top_p: float, candidates: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities, token ids) of each row's most probable tokens, the probabilities outside the
    nucleus set to zero; as many columns as the row that needs the most."""
    vocabulary = probs.shape[-1]
    count = min(candidates, vocabulary)
    while True:
        top_probs, top_ids = probs.topk(count, dim=-1)
        if count == vocabulary or bool((top_probs.sum(-1) >= top_p).all()):
            break
        count = min(2 * count, vocabulary)
    mass_above = top_probs.cumsum(-1) - top_probs
    return top_probs.masked_fill(mass_above >= top_p, 0.0), top_ids


class NucleusSampler:
    """Draws one token per row of scores (logits, -inf for banned tokens); see the module docstring."""

    def __init__(self, temperature: float, top_p: float, candidates: int = 64):
        if temperature <= 0 or not 0 < top_p <= 1:
            raise ValueError(f"need temperature > 0 and 0 < top_p <= 1, got {temperature} and {top_p}")
        self.temperature = temperature
        self.top_p = top_p
        self.candidates = candidates

    def draw(self, scores: torch.Tensor, generators: Sequence[torch.Generator]) -> torch.Tensor:
        """The drawn token id of each row, row i drawing from `generators[i]`."""
        if len(generators) != len(scores):
            raise ValueError(f"{len(scores)} rows of scores but {len(generators)} generators")
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        if self.top_p == 1:
            return torch.cat([torch.multinomial(row, 1, generator=generator)
                              for row, generator in zip(probs, generators)])
        probs, token_ids = nucleus(probs, self.top_p, self.candidates)
        sizes = (probs > 0).sum(-1).tolist()
        # each row draws over its own nucleus only: `multinomial` uses one random number per entry,
        # and the columns beyond a row's nucleus depend on the other rows
        picks = [torch.multinomial(row[:size], 1, generator=generator)
                 for row, size, generator in zip(probs, sizes, generators)]
        return token_ids.gather(-1, torch.stack(picks))[:, 0]
