"""ROUGE-2 and ROUGE-L F1: the scores of rouge-score's RougeScorer(["rouge2", "rougeL"],
use_stemmer=True), computed from texts tokenised once: fine-tuning compares each generation
with hundreds of training segments, and RougeScorer re-tokenises both texts and fills an n x m LCS
table in Python for every pair (about 0.15 s for two 400-token texts). The longest common token
subsequence comes from rapidfuzz's `LCSseq` (compiled, bit-parallel), one `cdist` row per generation.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from nltk.stem.porter import PorterStemmer  # the stemmer rouge-score uses (a dependency of rouge-score)
from rapidfuzz import process
from rapidfuzz.distance import LCSseq
from rouge_score import scoring, tokenize

# The Porter stemmer of RougeScorer(use_stemmer=True), memoised: stemming is most of the cost
# of tokenising, and a corpus repeats its words.
_STEMMER = SimpleNamespace(stem=lru_cache(maxsize=None)(PorterStemmer().stem))


@dataclass(frozen=True)
class RougeText:
    """A text prepared for ROUGE: its stemmed tokens and their bigram counts."""

    tokens: tuple[str, ...]
    bigrams: Counter[tuple[str, str]]


def rouge_text(text: str) -> RougeText:
    """Tokenise `text` as RougeScorer(use_stemmer=True) does, once for all its comparisons."""
    tokens = tuple(tokenize.tokenize(text, _STEMMER))
    return RougeText(tokens, Counter(itertools.pairwise(tokens)))


def lcs_length(prediction: RougeText, reference: RougeText) -> int:
    """Length of the longest common token subsequence."""
    return LCSseq.similarity(prediction.tokens, reference.tokens)


def rouge2(prediction: RougeText, reference: RougeText) -> float:
    shared = prediction.bigrams.keys() & reference.bigrams.keys()
    overlap = sum(min(prediction.bigrams[bigram], reference.bigrams[bigram]) for bigram in shared)
    return scoring.fmeasure(
        overlap / max(prediction.bigrams.total(), 1), overlap / max(reference.bigrams.total(), 1)
    )


def rouge_l(lcs: int, prediction_tokens: int, reference_tokens: int) -> float:
    """ROUGE-L F1 from the LCS length; 0 when either text has no token."""
    if not prediction_tokens or not reference_tokens:
        return 0.0
    return scoring.fmeasure(lcs / prediction_tokens, lcs / reference_tokens)


def rouge_scores(prediction: RougeText, reference: RougeText) -> tuple[float, float]:
    """ROUGE-2 and ROUGE-L F1 of a prepared prediction against a prepared reference."""
    lcs = lcs_length(prediction, reference)
    return rouge2(prediction, reference), rouge_l(lcs, len(prediction.tokens), len(reference.tokens))


def rouge(prediction: str, reference: str) -> tuple[float, float]:
    """ROUGE-2 and ROUGE-L F1 of `prediction` against `reference` (stemmed)."""
    return rouge_scores(rouge_text(prediction), rouge_text(reference))


def max_rouge(prediction: RougeText, references: Sequence[RougeText]) -> tuple[float, float]:
    """The best ROUGE-2 and the best ROUGE-L over `references`, each maximised on its own."""
    if not references:
        raise ValueError("no reference text to compare with")
    lcs = process.cdist(
        [prediction.tokens],
        [reference.tokens for reference in references],
        scorer=LCSseq.similarity,
        dtype=np.int32,
    )[0]
    best_l = max(
        rouge_l(int(length), len(prediction.tokens), len(reference.tokens))
        for length, reference in zip(lcs, references)
    )
    return max(rouge2(prediction, reference) for reference in references), best_l
