"""A word n-gram model of a released corpus: what an attacker holding only the synthetic texts can fit
(Meeus et al. 2025, "The Canary's Echo", score a canary by an n-gram model of the synthetic data).

Witten-Bell interpolation (Witten and Bell 1991; Chen and Goodman 1998): the estimate of a word after
a context h mixes the counts seen after h with the estimate after h's shorter tail, weighted by how
many distinct words followed h; the order-0 estimate adds k to every word's count, so a word the
corpus never holds keeps a small probability. nltk.lm's interpolated models give such a word
probability 0 and its add-k model never falls back to shorter contexts
(benchmarks/canary_ngram.py), hence this one.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

START = "\x00<s>"  # pads each text's first contexts; no word equals it


@dataclass(frozen=True)
class NgramModel:
    order: int
    add_k: float
    followers: dict[tuple[str, ...], Counter]  # context (0 to order - 1 words) -> counts of the next word
    totals: dict[tuple[str, ...], int]  # context -> words seen after it
    vocabulary: int  # distinct words of the corpus

    def probability(self, word: str, context: Sequence[str]) -> float:
        """P(word | the last order - 1 words of context), interpolated down to the add-k unigram."""
        estimate = (self.followers[()][word] + self.add_k) / (
            self.totals[()] + self.add_k * (self.vocabulary + 1)
        )
        history = tuple(context)[len(context) - self.order + 1 :] if self.order > 1 else ()
        for length in range(1, len(history) + 1):
            tail = history[-length:]
            seen = self.followers.get(tail)
            if seen is None:
                break  # a longer context that ends in this one was never seen either
            estimate = (seen[word] + len(seen) * estimate) / (self.totals[tail] + len(seen))
        return estimate


def fit_ngram(texts: Iterable[Sequence[str]], order: int, add_k: float) -> NgramModel:
    """The model of word sequences `texts` (each padded with order - 1 start markers)."""
    if order < 1 or add_k <= 0:
        raise ValueError(f"an n-gram model needs order >= 1 and add_k > 0, not {order} and {add_k}")
    followers: dict[tuple[str, ...], Counter] = defaultdict(Counter)
    for words in texts:
        padded = [START] * (order - 1) + list(words)
        for position in range(order - 1, len(padded)):
            for length in range(order):
                followers[tuple(padded[position - length : position])][padded[position]] += 1
    followers.setdefault((), Counter())
    totals = {context: sum(counts.values()) for context, counts in followers.items()}
    return NgramModel(order, add_k, dict(followers), totals, len(followers[()]))


def continuation_log_prob(model: NgramModel, context: Sequence[str], words: Sequence[str]) -> float:
    """Mean natural-log probability of `words` following `context`, word by word."""
    if not words:
        raise ValueError("no words to score")
    history = [START] * (model.order - 1) + list(context)
    total = 0.0
    for word in words:
        total += math.log(model.probability(word, history))
        history.append(word)
    return total / len(words)
