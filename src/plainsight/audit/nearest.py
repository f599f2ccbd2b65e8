"""The real training segments nearest to each generation: embedding cosine and shared word n-grams.

For every generation of a synthetic corpus, the `NEAREST_RANKS` real fine-tuning segments (train
split of the codes) with the highest cosine between their MiniLM sentence embeddings (the embedder
of `plainsight.evaluation.mauve_score`), and the longest run of words the two texts share.

Words are runs of word characters (`\\w+`), case-folded, so punctuation and case do not break a
copied passage. The longest shared run is the longest common contiguous block of the two word
sequences (difflib's `find_longest_match`, without its junk heuristic, which would skip frequent words).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from plainsight.audit.shared_runs import longest_shared_ngram
from plainsight.data.segments import segment_texts
from plainsight.evaluation.features import FeatureSettings, sentence_features
from plainsight.matching import words
from plainsight.methods.trained import training_keys

NEAREST_RANKS = 3
NEAREST_COLUMNS = {
    "generation": "int64",
    "rank": "int64",
    "doc_id": "string",
    "segment": "int64",
    "cosine": "float64",
    "longest_shared_ngram": "int64",
}


def unit_rows(features: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero), so dot products are cosines."""
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.maximum(norms, 1e-12)


def top_cosines(queries: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For each query row, the indices of the k most cosine-similar key rows (best first) and those cosines.

    Ties keep the lower key index first, so the result does not depend on the sort's internals.
    """
    cosines = unit_rows(queries).astype(np.float64) @ unit_rows(keys).astype(np.float64).T
    k = min(k, keys.shape[0])
    order = np.argsort(-cosines, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(cosines, order, axis=1)


def training_segments(codes: pd.DataFrame, docs: pd.DataFrame) -> tuple[list[tuple[str, int]], list[str]]:
    """The fine-tuning segments (keys, in `training_keys` order) and their texts."""
    texts = segment_texts(docs)
    keys = training_keys(codes)
    return keys, [texts[key] for key in keys]


def embed(texts: Sequence[str], settings: FeatureSettings) -> np.ndarray:
    # An empty generation is embedded as a space, as the MAUVE featurizer does.
    return sentence_features([text if text.strip() else " " for text in texts], settings)


def nearest_rows(
    generations: Sequence[str],
    keys: Sequence[tuple[str, int]],
    texts: Sequence[str],
    order: np.ndarray,
    cosines: np.ndarray,
) -> pd.DataFrame:
    """One row per (generation, rank) from the cosine ranking, with the longest shared word n-gram."""
    segment_words = [words(text) for text in texts]
    rows = []
    for generation, text in enumerate(generations):
        generation_words = words(text)
        for rank, (index, cosine) in enumerate(zip(order[generation], cosines[generation]), start=1):
            doc_id, segment = keys[index]
            rows.append(
                (
                    generation,
                    rank,
                    doc_id,
                    segment,
                    float(cosine),
                    longest_shared_ngram(generation_words, segment_words[index]),
                )
            )
    return pd.DataFrame(rows, columns=list(NEAREST_COLUMNS)).astype(NEAREST_COLUMNS)
