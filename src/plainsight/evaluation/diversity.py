"""Diversity of a synthetic corpus and its distance from the real one.

- Self-BLEU: each text's BLEU-4 (nltk, smoothing method 1) against all the other texts of the
  corpus as references, averaged; 1 when every text is the same, near 0 for unrelated texts.
- distinct-n: distinct word n-grams over all word n-grams of the corpus, pooled over its texts.
- length: words per text; the two-sample Kolmogorov-Smirnov statistic against the real texts'
  lengths (0: the same distribution, 1: no overlap).
- vocabulary: distinct words of the corpus, and the share of them the real corpus uses too.
- entity types: the Jensen-Shannon distance (base 2, 0 to 1) between the entity types of the
  fictional values the synthetic texts hold and those of the real codes' values.
- FID: the Fréchet distance between Gaussians fitted to the sentence features of the two samples
  (the FID of image generation, on MiniLM features): |mu1 - mu2|^2 + Tr(S1 + S2 - 2 (S1 S2)^1/2).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import linalg, stats
from scipy.spatial.distance import jensenshannon

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Case-folded word tokens: the unit of every measure here."""
    return _WORD.findall(text.casefold())


def self_bleu(texts: Sequence[str]) -> float:
    """Mean BLEU-4 of each text against the others; NaN for fewer than two non-empty texts."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    tokenized = [words(text) for text in texts]
    tokenized = [tokens for tokens in tokenized if tokens]
    if len(tokenized) < 2:
        return math.nan
    smoothing = SmoothingFunction().method1
    scores = [
        sentence_bleu(tokenized[:i] + tokenized[i + 1 :], hypothesis, smoothing_function=smoothing)
        for i, hypothesis in enumerate(tokenized)
    ]
    return float(np.mean(scores))


def corpus_distinct_n(texts: Iterable[str], n: int) -> float:
    """Distinct word n-grams over all word n-grams of the texts (n-grams do not cross texts)."""
    grams: list[tuple[str, ...]] = []
    for text in texts:
        tokens = words(text)
        grams += [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return len(set(grams)) / len(grams) if grams else math.nan


def length_distance(synthetic: Sequence[str], real: Sequence[str]) -> float:
    """The Kolmogorov-Smirnov statistic between the word counts of the two sets of texts."""
    if not synthetic or not real:
        return math.nan
    lengths = [[len(words(text)) for text in texts] for texts in (synthetic, real)]
    return float(stats.ks_2samp(*lengths).statistic)


def vocabulary(texts: Iterable[str]) -> set[str]:
    return {word for text in texts for word in words(text)}


def real_vocabulary_share(synthetic: Iterable[str], real: Iterable[str]) -> float:
    """The share of the synthetic corpus's distinct words that the real corpus also uses."""
    own = vocabulary(synthetic)
    return len(own & vocabulary(real)) / len(own) if own else math.nan


def type_distance(synthetic_types: Iterable[str], real_types: Iterable[str]) -> float:
    """Jensen-Shannon distance (base 2) between two entity-type frequency distributions."""
    synthetic, real = Counter(synthetic_types), Counter(real_types)
    if not synthetic or not real:
        return math.nan
    types = sorted(set(synthetic) | set(real))
    return float(jensenshannon([synthetic[t] for t in types], [real[t] for t in types], base=2))


def frechet_distance(first: np.ndarray, second: np.ndarray) -> float:
    """The Fréchet distance between Gaussians fitted to two feature matrices (rows: samples)."""
    if len(first) < 2 or len(second) < 2:
        raise ValueError("the Fréchet distance needs at least two samples on each side")
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    mean_gap = first.mean(axis=0) - second.mean(axis=0)
    cov_first, cov_second = (np.atleast_2d(np.cov(features, rowvar=False)) for features in (first, second))
    root = linalg.sqrtm(cov_first @ cov_second)
    # sqrtm of a product of singular covariances (fewer samples than dimensions) has tiny
    # imaginary parts from rounding; the distance is the real part.
    trace = np.trace(cov_first) + np.trace(cov_second) - 2 * np.trace(np.real(root))
    return float(max(0.0, mean_gap @ mean_gap + trace))
