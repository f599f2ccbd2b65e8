"""Membership attacks' scores and their ROC summaries: what the audit's tables read, without torch.

Every attack score is oriented so that higher means "member". AUC and TPR at a fixed FPR, with a
BCa bootstrap that resamples members and non-members separately: each draw counts every text as often
as it was drawn, so a thousand draws are a few array operations, not a thousand ROCs, and the jackknife
that sets BCa's acceleration is one more row per unit.
Where texts come in clusters (a document's segments, a person's documents: its privacy unit), the
bootstrap resamples the units, every text of a drawn unit counted as often as its unit was drawn: the
texts of one unit share one side and what makes them alike, so resampling texts alone would treat them
as independent and narrow the interval.
The token statistics behind the scores come from `plainsight.audit.membership`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from scipy import stats

from plainsight.evaluation.intervals import accelerated_interval, small_sample_factor
from plainsight.rng import stable_rng

MEMBERSHIP_ATTACKS = ("loss", "zlib", "min_k", "reference")
MEMBERSHIP_ATTACK_NAMES = {"loss": "loss", "zlib": "zlib", "min_k": "min-k%", "reference": "reference"}
FPR_BOUNDS = (0.01, 0.1)  # the false-positive rates the tables give the TPR at
CONTROL_MODEL = "base"  # the model name of the control rows: the base model without an adapter
Item = TypeVar("Item")  # a text or a privacy unit a membership attack scores
Units = Sequence[object] | None  # the privacy unit of each text; None: every text a unit of its own


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


def roc_summary(
    member: Sequence[bool],
    score: Sequence[float],
    fpr_bounds: Sequence[float] = (0.01, 0.1),
    resamples: int = 1000,
    seed: int = 0,
    units: Units = None,
) -> RocSummary:
    """AUC and TPR at each FPR bound, with 95% BCa bootstrap intervals (members' and non-members'
    `units` resampled separately, so every resample has both; `intervals.accelerated_interval`). The
    observed values are computed as each draw's are (`weighted_aucs` and `weighted_tprs` of
    `text_counts`), with every text counted once, and so are the jackknife's (`left_out_counts`)."""
    member = np.asarray(member, dtype=bool)
    score = scores_of(member, score)
    counts = text_counts(member, resamples, seed, units)
    left_out, strata = left_out_counts(member, units)
    rows = np.vstack([counts, left_out])
    values = np.column_stack(
        [weighted_aucs(member, score, rows), weighted_tprs(member, score, rows, fpr_bounds)]
    )
    observed, draws, jackknife = values[0], values[1 : len(counts)], values[len(counts) :]
    smallest = smallest_side(member, units)
    low, high = np.array(
        [
            accelerated_interval(
                value, draws[:, column], [jackknife[rows, column] for rows in strata], smallest
            )
            for column, value in enumerate(observed)
        ]
    ).T
    return RocSummary(
        float(observed[0]),
        float(low[0]),
        float(high[0]),
        dict(zip(fpr_bounds, map(float, observed[1:]))),
        dict(zip(fpr_bounds, map(float, low[1:]))),
        dict(zip(fpr_bounds, map(float, high[1:]))),
        int(member.sum()),
        int((~member).sum()),
    )


def paired_auc_difference(
    member: Sequence[bool],
    score: Sequence[float],
    control: Sequence[float],
    resamples: int = 1000,
    seed: int = 0,
    units: Units = None,
) -> tuple[float, float, float]:
    """AUC of `score` minus AUC of `control` on the same texts, with 95% BCa bootstrap bounds (each
    one-sided 97.5%). Paired: every resample draws the same members' and non-members' `units` for both
    scores, so what the two share (the texts, and any difference between the sets) cancels in the
    difference."""
    return auc_resamples(member, [score, control], resamples, seed, units).bounds(0, 1)


def excess_over_resampled_control(
    member: Sequence[bool],
    score: Sequence[float],
    control_pairs: np.ndarray,
    resamples: int = 1000,
    seed: int = 0,
    units: Units = None,
) -> tuple[float, float, float]:
    """AUC of `score` minus the negative control's AUC, with 95% bounds that hold the control corpus's
    own sampling variance. The control's score of a text is its highest over the control corpus's
    generations (`control_pairs`: one row per text, one column per generation). The texts' variance is
    the paired BCa bootstrap's over their `units` (`paired_auc_difference`, the control as written); the
    generations' is `control_auc_variance`'s, and each bound lies that much further out, the two
    distances added in quadrature. The corpus judged is fixed (it is what is released); the control
    stands in for any corpus written without private data, so its generations are a sample. Counted in
    both parts, what is particular to a text and a generation widens the interval (conservative)."""
    member = np.asarray(member, dtype=bool)
    control_pairs = np.asarray(control_pairs, dtype=float)
    if control_pairs.ndim != 2 or control_pairs.shape[0] != len(member) or control_pairs.shape[1] == 0:
        raise ValueError(f"control pair scores of shape {control_pairs.shape} for {len(member)} texts")
    excess, low, high = auc_resamples(
        member, [score, control_pairs.max(axis=1)], resamples, seed, units
    ).bounds(0, 1)
    generations = control_pairs.shape[1]
    spread = 0.0
    if generations > 1:
        spread = (
            stats.norm.ppf(0.975)
            * small_sample_factor(generations)
            * math.sqrt(control_auc_variance(member, control_pairs, resamples, seed))
        )
    return excess, excess - math.hypot(excess - low, spread), excess + math.hypot(high - excess, spread)


def control_auc_variance(member: np.ndarray, pair_scores: np.ndarray, subsets: int, seed: int = 0) -> float:
    """The variance of the AUC of the texts' highest score over a corpus's generations (`pair_scores`:
    one row per text, one column per generation) that comes from which generations the corpus holds:
    the delete-d jackknife (Shao and Wu 1989) over `subsets` random subsets that leave out d = G // 2 of
    the G generations, (G - d) / d times the variance of the subsets' AUCs. Not a bootstrap of the
    generations: a resample holds about 63% of them once or more, and its highest score is not
    distributed as a fresh corpus's (measured: docs/performance.md#clustered-bounds-coverage-and-the-
    gates-family-wise-error). Seeded apart from the texts' draws; 0 with one generation or no subset."""
    generations = pair_scores.shape[1]
    if generations < 2 or subsets == 0:
        return 0.0
    left_out = generations // 2
    kept = np.argsort(np.random.default_rng([seed, 1]).random((subsets, generations)), axis=1)
    nearest = np.stack([pair_scores[:, columns].max(axis=1) for columns in kept[:, left_out:]])
    aucs = row_aucs(member, nearest, np.ones_like(nearest))
    return float((generations - left_out) / left_out * np.var(aucs))


@dataclass(frozen=True)
class AucDraws:
    """Several scores' AUCs on the same texts: as observed, on each bootstrap draw (one row per draw),
    and with each unit left out (one row per unit; `strata`: the rows of each side), one column per
    score."""

    observed: np.ndarray
    drawn: np.ndarray
    left_out: np.ndarray
    strata: tuple[np.ndarray, ...]
    smallest: int  # the fewer units of the two sides: `intervals.small_sample_factor`'s

    def bounds(self, score: int, minus: int | None = None) -> tuple[float, float, float]:
        """The AUC of column `score`, or its difference from column `minus`'s, with its 95% BCa bounds."""

        def value(table: np.ndarray) -> np.ndarray:
            return table[..., score] - (0 if minus is None else table[..., minus])

        observed, left_out = float(value(self.observed)), value(self.left_out)
        jackknife = [left_out[rows] for rows in self.strata]
        return (observed, *accelerated_interval(observed, value(self.drawn), jackknife, self.smallest))


def auc_resamples(
    member: Sequence[bool],
    scores: Sequence[Sequence[float]],
    resamples: int = 1000,
    seed: int = 0,
    units: Units = None,
) -> AucDraws:
    """Each score's AUC as observed, on `resamples` bootstrap draws and with each unit left out, members
    and non-members resampled separately and every score read on the same draw (paired, as
    `paired_auc_difference`): `weighted_aucs` of `text_counts` and `left_out_counts`, so no ROC is built
    per draw: a thousand draws of a hundred texts a side take milliseconds."""
    member = np.asarray(member, dtype=bool)
    counts = text_counts(member, resamples, seed, units)
    left_out, strata = left_out_counts(member, units)
    rows = np.vstack([counts, left_out])
    aucs = np.array([weighted_aucs(member, scores_of(member, score), rows) for score in scores]).T
    return AucDraws(aucs[0], aucs[1 : len(counts)], aucs[len(counts) :], strata, smallest_side(member, units))


def scores_of(member: np.ndarray, score: Sequence[float]) -> np.ndarray:
    """`score` as floats, one per text of `member`; a NaN has no place in a ranking."""
    score = np.asarray(score, dtype=float)
    if score.shape != member.shape:
        raise ValueError(f"{len(score)} scores for {len(member)} texts")
    if np.isnan(score).any():
        raise ValueError(f"{int(np.isnan(score).sum())} scores are NaN: a ROC needs every text ranked")
    return score


def text_counts(member: np.ndarray, resamples: int, seed: int, units: Units = None) -> np.ndarray:
    """How often each text (a column) counts in the texts as observed (row 0: every text once) and in each
    of `resamples` bootstrap draws (rows 1 on): a stratified cluster bootstrap, the members' units and the
    non-members' units resampled separately (each side draws as many units as it holds), every text
    counted as often as its unit was drawn. `units`: each text's privacy unit; None, every text a unit
    of its own. A unit with texts on both sides is a cluster on each, drawn independently."""
    positives, negatives = np.flatnonzero(member), np.flatnonzero(~member)
    if len(positives) == 0 or len(negatives) == 0:
        raise ValueError(f"a ROC needs members and non-members: {len(positives)} and {len(negatives)}")
    units = None if units is None else list(units)  # positions, whatever the sequence's own index
    if units is not None and len(units) != len(member):
        raise ValueError(f"{len(units)} units for {len(member)} texts")
    rng = np.random.default_rng(seed)
    counts = np.ones((1 + resamples, len(member)))
    for side in (positives, negatives):
        cluster = unit_numbers(side, units)
        counts[1:, side] = draw_counts(rng, int(cluster.max()) + 1, resamples)[:, cluster]
    return counts


def smallest_side(member: Sequence[bool], units: Units = None) -> int:
    """The fewer of the members' and the non-members' units: the strata the bootstrap resamples, whose
    smaller one sets how much its percentile interval is widened (`intervals.small_sample_factor`)."""
    member = np.asarray(member, dtype=bool)
    return min(
        int(unit_numbers(np.flatnonzero(side), None if units is None else list(units)).max(initial=-1)) + 1
        for side in (member, ~member)
    )


def left_out_counts(member: np.ndarray, units: Units = None) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The jackknife's rows, as `text_counts`' (how often each text counts): one per unit of each side,
    every text once but that unit's, and the rows of each side. A side of one unit has no row: leaving
    it out would leave no ROC."""
    units = None if units is None else list(units)
    rows, strata = [], []
    for side in (np.flatnonzero(member), np.flatnonzero(~member)):
        cluster = unit_numbers(side, units)
        count = int(cluster.max(initial=-1)) + 1
        count = count if count >= 2 else 0
        strata.append(np.arange(len(rows), len(rows) + count))
        for number in range(count):
            row = np.ones(len(member))
            row[side[cluster == number]] = 0
            rows.append(row)
    return np.array(rows).reshape(len(rows), len(member)), tuple(strata)


def unit_numbers(texts: np.ndarray, units: Units) -> np.ndarray:
    """The unit of each of `texts` (indices) as a number, units numbered in the order they first appear,
    so that with every text a unit of its own the numbers are 0, 1, 2, ... and the draws those of a text
    bootstrap."""
    if units is None:
        return np.arange(len(texts))
    first_seen: dict[object, int] = {}
    return np.array([first_seen.setdefault(units[i], len(first_seen)) for i in texts], dtype=int)


def draw_counts(rng: np.random.Generator, size: int, resamples: int) -> np.ndarray:
    """How often each of `size` items is drawn in each of `resamples` draws of `size` with replacement."""
    drawn = rng.integers(0, size, (resamples, size)) + size * np.arange(resamples)[:, None]
    return np.bincount(drawn.ravel(), minlength=resamples * size).reshape(resamples, size).astype(float)


def weighted_aucs(member: np.ndarray, score: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The AUC of each row of `counts` (each text counted as often as the row says): the Mann-Whitney
    statistic, the share of member and non-member pairs the score orders right with ties counted half,
    which is the area under the ROC (scikit-learn's roc_auc_score). A pair counts as often as the row
    holds both of its texts. Comparisons, not differences, so tied infinite scores are ties."""
    positives, negatives = np.flatnonzero(member), np.flatnonzero(~member)
    above, below = score[positives][:, None], score[negatives][None, :]
    wins = (above > below) + 0.5 * (above == below)
    pairs = counts[:, positives].sum(axis=1) * counts[:, negatives].sum(axis=1)
    return ((counts[:, positives] @ wins) * counts[:, negatives]).sum(axis=1) / pairs


def row_aucs(member: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The AUC of each row of `scores` with its texts counted as the same row of `weights` says, for rows
    whose scores differ (`weighted_aucs` holds one score for every row): a member's weight times the
    non-members' weight under its score and half of that at its score. Each row's scores are ranked into
    tie groups, and the non-members' weight per group and below it is a bincount and a cumulative sum,
    so a thousand rows take one sort rather than a thousand."""
    scores, weights = np.atleast_2d(scores), np.atleast_2d(weights)
    rows, texts = scores.shape
    order = np.argsort(scores, axis=1, kind="stable")
    ranked = np.take_along_axis(scores, order, axis=1)
    starts = np.hstack([np.ones((rows, 1), dtype=bool), ranked[:, 1:] != ranked[:, :-1]])
    group = np.empty_like(order)
    np.put_along_axis(group, order, np.cumsum(starts, axis=1) - 1, axis=1)
    group += texts * np.arange(rows)[:, None]  # groups numbered apart row by row
    at = np.bincount(group[:, ~member].ravel(), weights[:, ~member].ravel(), rows * texts).reshape(
        rows, texts
    )
    under = np.cumsum(at, axis=1) - at
    group -= texts * np.arange(rows)[:, None]
    member_groups = group[:, member]
    row_index = np.arange(rows)[:, None]
    wins = (weights[:, member] * (under[row_index, member_groups] + at[row_index, member_groups] / 2)).sum(
        axis=1
    )
    return wins / (weights[:, member].sum(axis=1) * weights[:, ~member].sum(axis=1))


def weighted_tprs(
    member: np.ndarray, score: np.ndarray, counts: np.ndarray, fpr_bounds: Sequence[float]
) -> np.ndarray:
    """The TPR at each FPR bound (a column) of each row of `counts` (each text counted as often as the row
    says): the highest TPR among the ROC's thresholds whose FPR is within the bound, (0, 0) included.
    The thresholds are the distinct scores, so tied texts are flagged together, and every one is
    kept: scikit-learn's roc_curve drops collinear points by default, which can hide the highest TPR
    within a bound."""
    if not all(0 <= bound <= 1 for bound in fpr_bounds):
        raise ValueError(f"FPR bounds lie in [0, 1]: {list(fpr_bounds)}")
    order = np.argsort(-score, kind="stable")
    ranked = score[order]
    last_of_ties = np.append(np.flatnonzero(ranked[1:] != ranked[:-1]), len(ranked) - 1)
    ordered = counts[:, order]
    flagged = np.cumsum(ordered, axis=1)[:, last_of_ties]
    true_positives = np.cumsum(ordered * member[order], axis=1)[:, last_of_ties]
    start = np.zeros((len(counts), 1))  # the threshold above every score: (0, 0)
    tpr = np.hstack([start, true_positives / true_positives[:, -1:]])
    false_positives = flagged - true_positives
    fpr = np.hstack([start, false_positives / false_positives[:, -1:]])
    rows = np.arange(len(counts))
    at_bounds = np.empty((len(counts), len(fpr_bounds)))
    for column, bound in enumerate(fpr_bounds):
        # both rates grow as the threshold falls, so the highest TPR within the bound is that of the last
        # threshold within it; an FPR equal to the bound is within it, however the two were rounded
        last_within = (fpr <= bound + 1e-12).sum(axis=1) - 1
        at_bounds[:, column] = tpr[rows, last_within]
    return at_bounds


# --- which texts -------------------------------------------------------------------------------


def balanced_sets(
    members: Sequence[Item], non_members: Sequence[Item], seed: int
) -> tuple[list[Item], list[Item]]:
    """Members and non-members of equal count: the larger set subsampled (seeded), both sorted."""
    count = min(len(members), len(non_members))
    rng = stable_rng(seed, "membership sets")
    return sorted(rng.sample(sorted(members), count)), sorted(rng.sample(sorted(non_members), count))
