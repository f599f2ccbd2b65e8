"""Temperature and nucleus (top-p) sampling as a logits processor.

`generate(do_sample=True, top_p=...)` sorts the whole vocabulary of every row at
every step and then draws with `torch.multinomial` over all of it, which on a
CPU costs as much per row as a good share of the model's forward pass (49k
tokens for SmolLM2), so it erodes what batching gains. The nucleus of a
language model is almost always a few dozen tokens: this processor takes the
`candidates` most probable ones with `topk`, doubles that number until every
row's candidates hold `top_p` of the probability, and draws from those alone.
The distribution is the one `TemperatureLogitsWarper` + `TopPLogitsWarper` +
multinomial sampling give: a token is kept while the probability of the tokens
above it is below `top_p`.

It must run last, with `generate(do_sample=False)`: it returns scores that are
-inf everywhere except at the drawn token, which greedy decoding then picks.
The draw uses torch's global generator, so `torch.manual_seed` fixes it.
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor


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


class NucleusSampler(LogitsProcessor):
    """Draws one token per row; see the module docstring."""

    def __init__(self, temperature: float, top_p: float, candidates: int = 64):
        if temperature <= 0 or not 0 < top_p <= 1:
            raise ValueError(f"need temperature > 0 and 0 < top_p <= 1, got {temperature} and {top_p}")
        self.temperature = temperature
        self.top_p = top_p
        self.candidates = candidates

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        if self.top_p < 1:
            probs, token_ids = nucleus(probs, self.top_p, self.candidates)
            drawn = token_ids.gather(-1, torch.multinomial(probs, 1))
        else:
            drawn = torch.multinomial(probs, 1)
        return torch.full_like(scores, float("-inf")).scatter_(-1, drawn, 0.0)
