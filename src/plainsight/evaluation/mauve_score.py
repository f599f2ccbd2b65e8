"""MAUVE between generated and real text, on features from a configurable featurizer.

`mauve-text` computes the score from two feature matrices, which come from
`plainsight.evaluation.features` (the shipped MiniLM by default, or a Hugging Face model's last
hidden state). FID on the same features goes beside it. With `utility.mauve.resamples` the record adds
a 95% percentile interval: each resample draws (generation, real target) pairs with replacement, the
unit the generations were written for, and scores them as the estimate is (the features are computed
once). mauve-text has no interval of its own; a resample costs a clustering (about 0.15 s at 134 pairs
on one thread), and the default draws none.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from threadpoolctl import threadpool_limits

from plainsight.data.segments import segment_texts
from plainsight.evaluation.diversity import frechet_distance
from plainsight.evaluation.features import FeatureSettings, featurize
from plainsight.evaluation.intervals import percentile_interval
from plainsight.models import dtype_name, resolve_placement
from plainsight.rng import numpy_rng


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


def _compute_mauve(p_features: np.ndarray, q_features: np.ndarray, settings: MauveSettings):
    import mauve

    return mauve.compute_mauve(
        p_features=p_features,
        q_features=q_features,
        num_buckets="auto",
        mauve_scaling_factor=settings.scaling_factor,
        seed=settings.seed,
        verbose=False,
    )


def mauve_from_features(
    p_features: np.ndarray, q_features: np.ndarray, settings: MauveSettings
) -> MauveResult:
    """MAUVE of p (generated) against q (real), with mauve-text's `auto` bucket count: one per ten
    samples of the smaller set, rounded (half to even), at least 2. FID on the same features beside it."""
    result = _compute_mauve(p_features, q_features, settings)
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


def mauve_interval(
    p_features: np.ndarray, q_features: np.ndarray, settings: MauveSettings, resamples: int, seed: object
) -> tuple[float, float]:
    """The 95% percentile interval of MAUVE over `resamples` draws of the (generation, target) pairs with
    replacement (row i of p was written for row i of q); NaN without resamples."""
    if len(p_features) != len(q_features):
        raise ValueError(f"{len(p_features)} generations for {len(q_features)} targets: pairs expected")
    rng = numpy_rng("mauve resamples", seed)
    log = logging.getLogger(__name__)
    draws = []
    for n in range(resamples):
        pairs = rng.integers(len(p_features), size=len(p_features))
        draws.append(float(_compute_mauve(p_features[pairs], q_features[pairs], settings).mauve))
        if (n + 1) % 10 == 0 or n + 1 == resamples:
            log.info("MAUVE resample %d/%d", n + 1, resamples)
    return percentile_interval(np.asarray(draws))


def mauve_score(
    generated: Sequence[str], real: Sequence[str], settings: MauveSettings, resamples: int = 0
) -> tuple[MauveResult, tuple[float, float]]:
    """MAUVE of `generated` against `real` (pairs: text i was written for real text i) with its interval
    over `resamples` resamples of the pairs (NaN at 0)."""
    p_features = featurize(generated, settings, "MAUVE features of the generated texts")
    q_features = featurize(real, settings, "MAUVE features of the real texts")
    result = mauve_from_features(p_features, q_features, settings)
    return result, mauve_interval(p_features, q_features, settings, resamples, settings.seed)


def mauve_record(
    generated: pd.DataFrame, docs: pd.DataFrame, mauve: Mapping, placement: Mapping[str, str], threads: int
) -> dict:
    """Rule `mauve`: MAUVE of a method's texts against the real test segments they were written for
    (`target_doc_id`, `segment`), with the `utility.mauve` settings on the `model` block's placement;
    the record adds its interval over `utility.mauve.resamples` resamples (`mauve_low`, `mauve_high`:
    NaN without) and how many generations were empty."""
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
    # mauve-text's clustering (faiss, OpenMP) would take every core; the job has `threads`
    with threadpool_limits(limits=threads):
        result, (low, high) = mauve_score(
            generated["text"].tolist(), real, settings, mauve.get("resamples", 0)
        )
    logging.getLogger(__name__).info(
        "MAUVE %.4f [%.4f, %.4f] (%s features, %d generated vs %d real, %d buckets)",
        result.mauve,
        low,
        high,
        result.featurizer,
        result.p_samples,
        result.q_samples,
        result.buckets,
    )
    return {
        **dataclasses.asdict(result),
        "mauve_low": low,
        "mauve_high": high,
        "empty_generations": int(generated["text"].str.strip().eq("").sum()),
    }
