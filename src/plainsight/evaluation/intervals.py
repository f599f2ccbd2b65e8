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
from collections.abc import Callable
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


def widened_interval(
    observed: float, draws: np.ndarray, units: int, level: float = 0.95
) -> tuple[float, float]:
    """The percentile interval of `draws` at `level`, each bound moved away from `observed` by the
    `small_sample_factor` of `units` (the fewest resampled units of a stratum); NaN without draws."""
    low, high = percentile_interval(draws, level)
    widen = small_sample_factor(units, level) - 1  # outward only, even where `observed` lies outside
    return low - widen * abs(observed - low), high + widen * abs(high - observed)


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
