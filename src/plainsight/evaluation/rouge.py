"""ROUGE-2 and ROUGE-L F1: the scores of rouge-score's RougeScorer(["rouge2", "rougeL"],
use_stemmer=True), computed from texts tokenised once: fine-tuning compares each generation
with hundreds of training segments, and RougeScorer re-tokenises both texts and fills an n x m LCS table for every pair (about
0.15 s for two 400-token texts; the bit-parallel LCS below takes well under a millisecond).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Sequence

from nltk.stem.porter import PorterStemmer  # the stemmer rouge-score uses (a dependency of rouge-score)
from rouge_score import scoring, tokenize

# The Porter stemmer of RougeScorer(use_stemmer=True), memoised: stemming is most of the cost
# of tokenising, and a corpus repeats its words.
_STEMMER = SimpleNamespace(stem=lru_cache(maxsize=None)(PorterStemmer().stem))


@dataclass(frozen=True)
class RougeText:
    """A text prepared for ROUGE: its stemmed tokens, bigram counts and each token's positions as bits."""

    tokens: tuple[str, ...]
    bigrams: Counter[tuple[str, str]]
    positions: dict[str, int]


def rouge_text(text: str) -> RougeText:
    """Tokenise `text` as RougeScorer(use_stemmer=True) does, once for all its comparisons."""
    tokens = tuple(tokenize.tokenize(text, _STEMMER))
    positions: dict[str, int] = {}
    for index, token in enumerate(tokens):
        positions[token] = positions.get(token, 0) | (1 << index)
    return RougeText(tokens, Counter(zip(tokens, tokens[1:])), positions)


def lcs_length(prediction: RougeText, reference: RougeText) -> int:
    """Length of the longest common token subsequence, bit-parallel (Crochemore et al., 2001).

    Bit i of `row` is 0 where the LCS grows at reference token i; one pass per prediction token.
    """
    full = (1 << len(reference.tokens)) - 1
    row = full
    for token in prediction.tokens:
        matches = row & reference.positions.get(token, 0)
        row = ((row + matches) | (row - matches)) & full
    return len(reference.tokens) - row.bit_count()


def rouge_scores(prediction: RougeText, reference: RougeText) -> tuple[float, float]:
    """ROUGE-2 and ROUGE-L F1 of a prepared prediction against a prepared reference."""
    shared = prediction.bigrams.keys() & reference.bigrams.keys()
    overlap = sum(min(prediction.bigrams[bigram], reference.bigrams[bigram]) for bigram in shared)
    rouge2 = scoring.fmeasure(overlap / max(prediction.bigrams.total(), 1),
                              overlap / max(reference.bigrams.total(), 1))
    if not prediction.tokens or not reference.tokens:
        return rouge2, 0.0
    lcs = lcs_length(prediction, reference)
    return rouge2, scoring.fmeasure(lcs / len(prediction.tokens), lcs / len(reference.tokens))


def rouge(prediction: str, reference: str) -> tuple[float, float]:
    """ROUGE-2 and ROUGE-L F1 of `prediction` against `reference` (stemmed)."""
    return rouge_scores(rouge_text(prediction), rouge_text(reference))


def max_rouge(prediction: RougeText, references: Sequence[RougeText]) -> tuple[float, float]:
    """The best ROUGE-2 and the best ROUGE-L over `references`, each maximised on its own."""
    if not references:
        raise ValueError("no reference text to compare with")
    pairs = [rouge_scores(prediction, reference) for reference in references]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)
