"""Canary exposure (Carlini et al. 2019, "The Secret Sharer").

A canary is one fixed template with a random secret ("... reference is 318204."), inserted into
fine-tuning documents a number of times. After training, the model's log-perplexity of the canary
with its true secret is compared with that of the same template holding other secrets drawn from
the same space R (all `digits`-digit numbers). Exposure = log2 |R| - log2 rank, where rank is the
true secret's position among all of R by likelihood. R is too large to score whole, so the rank is
estimated from a uniform sample of candidates, as the paper's sampling estimate does:
rank ~ 1 + |R| x (share of sampled candidates the model finds at least as likely as the secret).
A secret the model prefers to every sampled candidate gets the highest exposure this sample can show,
log2 of the sample size plus one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from plainsight.rng import stable_rng


@dataclass(frozen=True)
class Canary:
    secret: str
    repeats: int  # fine-tuning documents it is inserted into

    def text(self, template: str) -> str:
        return template.format(secret=self.secret)


def draw_secrets(count: int, digits: int, seed: int) -> list[str]:
    """`count` distinct random secrets of `digits` digits (leading zeros kept), seeded."""
    if count > 10 ** digits:
        raise ValueError(f"{count} distinct secrets do not fit in {digits} digits")
    rng = stable_rng(seed, "canary secrets")
    secrets: dict[str, None] = {}
    while len(secrets) < count:
        secrets[f"{rng.randrange(10 ** digits):0{digits}d}"] = None
    return list(secrets)


def insert_canaries(texts: Sequence[str], canaries: Sequence[Canary], template: str, seed: int) -> list[str]:
    """The documents with each canary's sentence appended to `repeats` distinct documents (seeded)."""
    out = list(texts)
    rng = stable_rng(seed, "canary documents")
    for canary in canaries:
        if canary.repeats > len(out):
            raise ValueError(f"a canary repeated {canary.repeats} times needs as many documents, not {len(out)}")
        for index in rng.sample(range(len(out)), canary.repeats):
            out[index] = f"{out[index].rstrip()}\n\n{canary.text(template)}"
    return out


def estimated_rank(secret_score: float, candidate_scores: Sequence[float], space: int) -> float:
    """The secret's rank in the whole space, from a uniform sample (scores: negative log-perplexity)."""
    candidates = np.asarray(candidate_scores, dtype=float)
    if len(candidates) == 0:
        raise ValueError("no candidates to rank the secret among")
    share = float((candidates >= secret_score).mean())
    return max(1.0, 1.0 + space * share) if share > 0 else max(1.0, space / (len(candidates) + 1))


def exposure(secret_score: float, candidate_scores: Sequence[float], space: int) -> float:
    """log2 |R| - log2 rank: 0 when the secret is as unlikely as any, up to log2 |R| when it ranks first."""
    return math.log2(space) - math.log2(estimated_rank(secret_score, candidate_scores, space))


def canary_scores(model, tokenizer, template: str, secrets: Sequence[str], max_length: int, batch_size: int = 8
                  ) -> np.ndarray:
    """Negative log-perplexity (summed token log-probability) of the template holding each secret, scored
    as a fine-tuning document with an empty code (the prompt format the adapter was trained on)."""
    from plainsight.evaluation.membership import document_log_probs
    from plainsight.training.loop import build_example

    examples = [build_example(("canary", number), "", template.format(secret=secret), [], tokenizer, max_length)
                for number, secret in enumerate(secrets)]
    return np.array([values.sum() for values in document_log_probs(model, examples, tokenizer.pad_token_id,
                                                                    batch_size)])


def canary_exposures(model, tokenizer, template: str, canaries: Sequence[Canary], digits: int, candidates: int,
                     seed: int, max_length: int) -> list[float]:
    """Exposure of each canary, its rank estimated among `candidates` secrets drawn uniformly (seeded)."""
    space = 10 ** digits
    drawn = draw_secrets(candidates + len(canaries), digits, seed + 1)
    sample = [secret for secret in drawn if secret not in {c.secret for c in canaries}][:candidates]
    candidate_scores = canary_scores(model, tokenizer, template, sample, max_length)
    secret_scores = canary_scores(model, tokenizer, template, [c.secret for c in canaries], max_length)
    return [exposure(score, candidate_scores, space) for score in secret_scores]
