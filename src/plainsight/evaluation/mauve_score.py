"""MAUVE between generated and real text, on features from a configurable featurizer.

`mauve-text` computes the score from two feature matrices, which come from
`plainsight.evaluation.features` (the shipped MiniLM by default, or a Hugging Face model's last
hidden state). FID on the same features goes beside it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from plainsight.data.segments import segment_texts
from plainsight.evaluation.diversity import frechet_distance
from plainsight.evaluation.features import FeatureSettings, featurize
from plainsight.models import dtype_name, resolve_placement


@dataclass(frozen=True)
class MauveSettings(FeatureSettings):
    scaling_factor: float = 5.0
    seed: int = 25  # the k-means seed inside mauve-text


@dataclass(frozen=True)
class MauveResult:
    mauve: float
    featurizer: str
    p_samples: int
    q_samples: int
    scaling_factor: float
    buckets: int
    device: str  # where the featurizer ran, and its dtype
    dtype: str
    fid: float  # the Fréchet distance of the same two feature sets (plainsight.evaluation.diversity)


def mauve_from_features(
    p_features: np.ndarray, q_features: np.ndarray, settings: MauveSettings
) -> MauveResult:
    """MAUVE of p (generated) against q (real), with mauve-text's `auto` bucket count: one per ten
    samples of the smaller set, rounded (half to even), at least 2. FID on the same features beside it."""
    import mauve

    result = mauve.compute_mauve(
        p_features=p_features,
        q_features=q_features,
        num_buckets="auto",
        mauve_scaling_factor=settings.scaling_factor,
        seed=settings.seed,
        verbose=False,
    )
    return MauveResult(
        float(result.mauve),
        settings.featurizer,
        len(p_features),
        len(q_features),
        settings.scaling_factor,
        int(result.num_buckets),
        str(settings.device),
        dtype_name(settings.dtype),
        frechet_distance(p_features, q_features),
    )


def mauve_score(generated: Sequence[str], real: Sequence[str], settings: MauveSettings) -> MauveResult:
    return mauve_from_features(
        featurize(generated, settings, "MAUVE features of the generated texts"),
        featurize(real, settings, "MAUVE features of the real texts"),
        settings,
    )


def mauve_record(
    generated: pd.DataFrame, docs: pd.DataFrame, mauve: Mapping, placement: Mapping[str, str], threads: int
) -> dict:
    """Rule `mauve`: MAUVE of a method's texts against the real test segments they were written for
    (`target_doc_id`, `segment`), with the `utility.mauve` settings on the `model` block's placement;
    the record adds how many generations were empty."""
    torch.set_num_threads(threads)
    texts = segment_texts(docs)
    real = [
        texts[(str(doc_id), int(segment))]
        for doc_id, segment in zip(generated["target_doc_id"], generated["segment"])
    ]
    device, dtype = resolve_placement(placement)
    settings = MauveSettings(
        featurizer=mauve["featurizer"],
        max_tokens=mauve["max_tokens"],
        device=device,
        dtype=dtype,
        scaling_factor=mauve["scaling_factor"],
    )
    result = mauve_score(generated["text"].tolist(), real, settings)
    logging.getLogger(__name__).info(
        "MAUVE %.4f (%s features, %d generated vs %d real, %d buckets)",
        result.mauve,
        result.featurizer,
        result.p_samples,
        result.q_samples,
        result.buckets,
    )
    return {
        **dataclasses.asdict(result),
        "empty_generations": int(generated["text"].str.strip().eq("").sum()),
    }
