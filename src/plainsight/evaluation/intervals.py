"""Intervals that can be read with few seeds: pooled over every generation of every seed.

The paper's intervals are t intervals of the mean over seeds; with three seeds (t = 4.30) and a
few generations per seed they are too wide to tell methods apart. Pooling the generations of all
seeds gives:

- a Wilson score interval for a rate (PIPP, partial leaks, documents): k events in n generations;
- a seeded percentile bootstrap for any other statistic of the generations (ELP, ROUGE), the
  generations resampled within each seed so every seed keeps its count;
- for two methods that share their prompts (in-context methods draw the same contexts and
  fictional codes per seed and generation), the paired difference: how many generations leak
  under one and not the other, with the exact McNemar p-value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


def wilson_interval(events: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, as fractions (scipy's); (nan, nan) without trials."""
    if trials <= 0:
        return math.nan, math.nan
    if not 0 <= events <= trials:
        raise ValueError(f"{events} events in {trials} trials")
    interval = stats.binomtest(events, trials).proportion_ci(confidence_level=level, method="wilson")
    return float(interval.low), float(interval.high)


def percentile_interval(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap draws at `level` (each bound one-sided (1 + level) / 2);
    NaN without draws. The tails are 50 -/+ 50 `level` percent: exactly 2.5 and 97.5 at 95%."""
    if len(draws) == 0:
        return math.nan, math.nan
    low, high = np.percentile(draws, [50 - 50 * level, 50 + 50 * level])
    return float(low), float(high)


def small_sample_factor(units: int, level: float = 0.95) -> float:
    """How much wider than a percentile bootstrap's an interval of `units` independent draws must be to
    hold its level: sqrt(n / (n - 1)) t_{n-1} / z. The bootstrap's spread is the plug-in one (divided by
    n, not n - 1) and its tails the normal's; at 96 units the factor is 1.018, at 1,000 1.002. Measured:
    without it the units' AUC bootstrap misses on one side 2.8% of the time against 2.5%
    (docs/performance.md#clustered-bounds-coverage-and-the-gates-family-wise-error)."""
    if units < 2:
        return math.nan
    tail = (1 + level) / 2
    return math.sqrt(units / (units - 1)) * stats.t.ppf(tail, units - 1) / stats.norm.ppf(tail)


def accelerated_interval(
    observed: float,
    draws: np.ndarray,
    left_out: Sequence[np.ndarray],
    units: int,
    level: float = 0.95,
) -> tuple[float, float]:
    """The BCa interval of bootstrap `draws` at `level` (Efron 1987), each bound then moved away from
    `observed` by the `small_sample_factor` of `units` (the fewest resampled units of a stratum); NaN
    without draws. BCa takes the percentiles at tails corrected for the draws' median bias against
    `observed` and for the statistic's skew, its `acceleration` from `left_out` (per stratum, the
    statistic with each of its units left out): a plain percentile interval of an AUC near 0.6 leaves
    part of that skew in its lower tail (docs/performance.md, clustered bounds)."""
    draws = np.asarray(draws, dtype=float)
    if len(draws) == 0:
        return math.nan, math.nan
    low, high = np.percentile(draws, accelerated_tails(observed, draws, acceleration(left_out), level))
    widen = small_sample_factor(units, level) - 1  # outward only, even where `observed` lies outside
    return float(low - widen * abs(observed - low)), float(high + widen * abs(high - observed))


def accelerated_tails(observed: float, draws: np.ndarray, accelerated: float, level: float) -> np.ndarray:
    """BCa's two percentiles (in percent): Phi(z0 + (z0 + z) / (1 - a (z0 + z))) at z for each tail of
    `level`, z0 the normal quantile of the share of draws under `observed` (ties, to 1e-12, counted half;
    kept within half a draw of 0 and 1 so that it stays finite). With z0 = a = 0 they are the percentile
    interval's; a tail whose correction turns over (a (z0 + z) >= 1) goes to that end of the draws."""
    tied = np.isclose(draws, observed, rtol=0, atol=1e-12)  # a draw equal to it but for rounding is a tie
    share = (np.sum((draws < observed) & ~tied) + 0.5 * np.sum(tied)) / len(draws)
    bias = stats.norm.ppf(np.clip(share, 0.5 / len(draws), 1 - 0.5 / len(draws)))
    z = stats.norm.ppf([(1 - level) / 2, (1 + level) / 2])
    denominator = 1 - accelerated * (bias + z)
    corrected = np.where(
        denominator > 0, bias + (bias + z) / np.where(denominator > 0, denominator, 1), z * np.inf
    )
    return 100 * stats.norm.cdf(corrected)


def acceleration(left_out: Sequence[np.ndarray]) -> float:
    """BCa's acceleration from jackknife values, per stratum the statistic with each of its n units left
    out: with influence values l = (n - 1)(mean - value), a = sum_k n_k^-3 sum l^3 / (6 (sum_k n_k^-2
    sum l^2)^(3/2)) (Davison and Hinkley 1997, 5.3, for several samples); 0 where nothing moves. A
    stratum of one unit has no jackknife and brings nothing."""
    cubed = squared = 0.0
    for values in left_out:
        values = np.asarray(values, dtype=float)
        if len(values) < 2:
            continue
        influence = (len(values) - 1) * (values.mean() - values) / len(values)
        cubed, squared = cubed + np.sum(influence**3), squared + np.sum(influence**2)
    return 0.0 if squared == 0 else float(cubed / (6 * squared**1.5))


def bootstrap_interval(
    generations: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    seed: int = 0,
    resamples: int = 2000,
    strata: str = "seed",
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of `statistic` over resamples of the rows, drawn within each stratum."""
    if generations.empty:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    groups = [
        np.flatnonzero(generations[strata].to_numpy() == value) for value in generations[strata].unique()
    ]
    values = np.empty(resamples)
    for r in range(resamples):
        rows = np.concatenate([rng.choice(group, size=group.size, replace=True) for group in groups])
        values[r] = statistic(generations.iloc[rows])
    values = values[~np.isnan(values)]
    if not values.size:
        return math.nan, math.nan
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedLeaks:
    pairs: int  # generations present under both methods
    only_first: int  # leak under the first method, not under the second
    only_second: int
    p_value: float  # exact McNemar: two-sided binomial test of only_first against only_second


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """The exact McNemar p-value: discordant pairs split as a fair coin would (1 without any)."""
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(only_first, discordant, 0.5).pvalue)


def paired_leaks(first: pd.DataFrame, second: pd.DataFrame, column: str = "leaked") -> PairedLeaks:
    """Generations of two methods matched on (seed, generation_id), compared on a boolean column."""
    keys = ["seed", "generation_id"]
    joined = first[[*keys, column]].merge(second[[*keys, column]], on=keys, suffixes=("_first", "_second"))
    a, b = joined[f"{column}_first"].astype(bool), joined[f"{column}_second"].astype(bool)
    only_first, only_second = int((a & ~b).sum()), int((~a & b).sum())
    return PairedLeaks(len(joined), only_first, only_second, mcnemar_exact(only_first, only_second))
