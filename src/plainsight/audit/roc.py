"""Membership attacks' scores and their ROC summaries: what the audit's tables read, without torch.

Every attack score is oriented so that higher means "member". AUC and TPR at a fixed FPR come from
scikit-learn's ROC, with a percentile bootstrap that resamples members and non-members separately.
The token statistics behind the scores come from `plainsight.audit.membership`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from plainsight.rng import stable_rng

ATTACKS = ("loss", "zlib", "min_k", "reference")
CONTROL_MODEL = "base"  # the model name of the control rows: the base model without an adapter


@dataclass(frozen=True)
class RocSummary:
    auc: float
    auc_low: float
    auc_high: float
    tpr: dict[float, float]  # TPR at each FPR bound
    tpr_low: dict[float, float]
    tpr_high: dict[float, float]
    members: int
    non_members: int


def attack_scores(target: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """The four attack scores (higher = member) of one model's rows, with the base model's rows of
    the same texts (matched on doc_id and segment) as the reference. Texts without a scored document
    token (a code that fills `max_length`, as in training) are left out."""
    keys = ["doc_id", "segment"]
    joined = target.merge(
        base[[*keys, "nll_mean"]],
        on=keys,
        how="left",
        suffixes=("", "_base"),
        validate="one_to_one",
        indicator=True,
    )
    if (joined["_merge"] != "both").any():
        raise ValueError("the base model did not score every text of the target model")
    joined = joined[joined["tokens"] > 0].reset_index(drop=True)
    return pd.DataFrame(
        {
            "doc_id": joined["doc_id"],
            "segment": joined["segment"],
            "member": joined["member"].astype(bool),
            "loss": -joined["nll_mean"],
            "zlib": -joined["nll_sum"] / joined["zlib_bytes"],
            "min_k": joined["min_k"],
            "reference": joined["nll_mean_base"] - joined["nll_mean"],
        }
    )


def _tpr_within(fpr: np.ndarray, tpr: np.ndarray, fpr_bound: float) -> float:
    """The highest TPR of a threshold whose FPR is at most `fpr_bound`."""
    return float(tpr[fpr <= fpr_bound + 1e-12].max())


def roc_point(
    member: np.ndarray, score: np.ndarray, fpr_bounds: Sequence[float]
) -> tuple[float, list[float]]:
    """AUC (the area under scikit-learn's ROC, as roc_auc_score computes it) and the TPR at each FPR bound."""
    from sklearn.metrics import auc, roc_curve

    fpr, tpr, _ = roc_curve(member, score)
    return float(auc(fpr, tpr)), [_tpr_within(fpr, tpr, bound) for bound in fpr_bounds]


def roc_summary(
    member: Sequence[bool],
    score: Sequence[float],
    fpr_bounds: Sequence[float] = (0.01, 0.1),
    resamples: int = 1000,
    seed: int = 0,
) -> RocSummary:
    """AUC and TPR at each FPR bound, with 95% percentile bootstrap intervals (members and
    non-members resampled separately, so every resample has both)."""
    member, score = np.asarray(member, dtype=bool), np.asarray(score, dtype=float)
    positives, negatives = np.flatnonzero(member), np.flatnonzero(~member)
    if len(positives) == 0 or len(negatives) == 0:
        raise ValueError(f"a ROC needs members and non-members: {len(positives)} and {len(negatives)}")
    auc, tprs = roc_point(member, score, fpr_bounds)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        chosen = np.concatenate(
            [rng.choice(positives, len(positives)), rng.choice(negatives, len(negatives))]
        )
        resampled_auc, resampled_tprs = roc_point(member[chosen], score[chosen], fpr_bounds)
        draws.append([resampled_auc, *resampled_tprs])
    low, high = (
        np.percentile(np.array(draws), [2.5, 97.5], axis=0)
        if draws
        else (np.full(1 + len(tprs), np.nan),) * 2
    )
    return RocSummary(
        auc,
        float(low[0]),
        float(high[0]),
        dict(zip(fpr_bounds, tprs)),
        dict(zip(fpr_bounds, map(float, low[1:]))),
        dict(zip(fpr_bounds, map(float, high[1:]))),
        len(positives),
        len(negatives),
    )


def paired_auc_difference(
    member: Sequence[bool],
    score: Sequence[float],
    control: Sequence[float],
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """AUC of `score` minus AUC of `control` on the same texts, with 95% percentile bootstrap bounds (each
    one-sided 97.5%). Paired: every resample draws the same members and non-members for both scores, so
    what the two share (the texts, and any difference between the sets) cancels in the difference."""
    member = np.asarray(member, dtype=bool)
    score, control = np.asarray(score, dtype=float), np.asarray(control, dtype=float)
    positives, negatives = np.flatnonzero(member), np.flatnonzero(~member)
    if len(positives) == 0 or len(negatives) == 0:
        raise ValueError(f"a ROC needs members and non-members: {len(positives)} and {len(negatives)}")

    def difference(chosen: np.ndarray) -> float:
        return (
            roc_point(member[chosen], score[chosen], ())[0]
            - roc_point(member[chosen], control[chosen], ())[0]
        )

    rng = np.random.default_rng(seed)
    draws = [
        difference(
            np.concatenate([rng.choice(positives, len(positives)), rng.choice(negatives, len(negatives))])
        )
        for _ in range(resamples)
    ]
    low, high = np.percentile(draws, [2.5, 97.5]) if draws else (np.nan, np.nan)
    return difference(np.arange(len(member))), float(low), float(high)


# --- which texts -------------------------------------------------------------------------------


def balanced_sets(
    members: Sequence[tuple[str, int]], non_members: Sequence[tuple[str, int]], seed: int
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Members and non-members of equal count: the larger set subsampled (seeded), both sorted."""
    count = min(len(members), len(non_members))
    rng = stable_rng(seed, "membership sets")
    return sorted(rng.sample(sorted(members), count)), sorted(rng.sample(sorted(non_members), count))
