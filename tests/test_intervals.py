"""Pooled intervals with known answers: Wilson, a seeded bootstrap, exact McNemar on paired generations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from plainsight.evaluation.intervals import (
    bootstrap_interval,
    mcnemar_exact,
    paired_leaks,
    percentile_interval,
    small_sample_factor,
    widened_interval,
    wilson_interval,
)


def test_wilson_interval_hand_computed():
    # 5 of 24: p = 0.2083, z = 1.96: centre (p + z^2/48) / (1 + z^2/24), half-width as in Wilson (1927)
    low, high = wilson_interval(5, 24)
    assert (low, high) == pytest.approx((0.0924, 0.4047), abs=1e-4)
    # no event: the lower bound is 0, the upper 3.84 / (24 + 3.84)
    assert wilson_interval(0, 24) == pytest.approx((0.0, 1.959963984540054**2 / (24 + 1.959963984540054**2)))
    assert wilson_interval(24, 24)[1] == pytest.approx(1.0)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_wilson_interval_hand_computed_to_the_last_digits():
    # 1 of 12, z = 1.959963984540054, z^2 = 3.8414588: centre (1/12 + z^2/24) / (1 + z^2/12)
    # = 0.24339412 / 1.32012157 = 0.18437250; half-width z sqrt(1/12 x 11/12 / 12 + z^2 / 576) / (1 + z^2/12)
    # = 1.95996398 x sqrt(0.00636574 + 0.00666920) / 1.32012157 = 0.16950741
    low, high = wilson_interval(1, 12)
    assert low == pytest.approx(0.18437250 - 0.16950741, abs=2e-8)
    assert high == pytest.approx(0.18437250 + 0.16950741, abs=2e-8)
    z2 = 1.959963984540054**2
    centre, half = (
        (1 / 12 + z2 / 24) / (1 + z2 / 12),
        math.sqrt(z2) * math.sqrt(11 / 144 / 12 + z2 / 576) / (1 + z2 / 12),
    )
    assert (low, high) == pytest.approx((centre - half, centre + half), rel=1e-12)  # the formula itself
    assert wilson_interval(7, 40, level=0.9)[1] < wilson_interval(7, 40)[1]


def generations(values_by_seed: dict[int, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"seed": seed, "generation_id": i, "x": value}
            for seed, values in values_by_seed.items()
            for i, value in enumerate(values)
        ]
    )


def test_bootstrap_is_seeded_and_brackets_the_mean():
    frame = generations({1: [0.1, 0.2, 0.3, 0.4], 2: [0.5, 0.6, 0.7, 0.8]})
    first = bootstrap_interval(frame, lambda g: g["x"].mean(), seed=3)
    assert first == bootstrap_interval(frame, lambda g: g["x"].mean(), seed=3)
    assert first[0] < 0.45 < first[1] and first[0] >= 0.1 and first[1] <= 0.8


def test_bootstrap_of_a_constant_is_that_constant():
    frame = generations({1: [0.25] * 5, 2: [0.25] * 3})
    assert bootstrap_interval(frame, lambda g: g["x"].mean()) == pytest.approx((0.25, 0.25))


def test_bootstrap_keeps_each_seed_count():
    frame = generations({1: [0.0] * 6, 2: [1.0] * 2})
    # resampled within seeds, every resample holds 6 zeros and 2 ones: the mean is always 0.25
    assert bootstrap_interval(frame, lambda g: g["x"].mean(), resamples=200) == pytest.approx((0.25, 0.25))


def test_mcnemar_exact_known_values():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 * 0.5**6)  # 0.03125
    assert mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert mcnemar_exact(1, 4) == pytest.approx(stats.binomtest(1, 5, 0.5).pvalue)


def test_paired_leaks_match_on_seed_and_generation():
    icl = pd.DataFrame(
        {
            "seed": [1, 1, 1, 2, 2],
            "generation_id": [0, 1, 2, 0, 1],
            "leaked": [True, True, False, True, False],
        }
    )
    icl_pe = pd.DataFrame(
        {"seed": [1, 1, 2, 2], "generation_id": [0, 2, 0, 1], "leaked": [False, True, False, False]}
    )
    result = paired_leaks(icl, icl_pe)
    # pairs: (1,0) T/F, (1,2) F/T, (2,0) T/F, (2,1) F/F; (1,1) has no partner
    assert (result.pairs, result.only_first, result.only_second) == (4, 2, 1)
    assert result.p_value == pytest.approx(1.0)


def test_the_percentile_interval_takes_its_tails_at_exactly_half_the_missing_level():
    # 0, 1, ..., 100: the p-th percentile is p itself, so the tails show as they are asked for
    draws = np.arange(101, dtype=float)
    assert percentile_interval(draws) == (2.5, 97.5)
    assert percentile_interval(draws, level=0.9) == (5.0, 95.0)
    # 0 and 10 alone: linear between them, 2.5% of the way and 97.5% of the way
    assert percentile_interval(np.array([10.0, 0.0])) == pytest.approx((0.25, 9.75), abs=1e-12)
    assert all(math.isnan(bound) for bound in percentile_interval(np.array([])))


def test_the_small_sample_factor_by_hand():
    # 96 units: sqrt(96 / 95) = 1.005249, t_95 at 0.975 = 1.985251, z = 1.959964: 1.018277
    assert small_sample_factor(96) == pytest.approx(1.005249 * 1.985251 / 1.959964, abs=2e-6)
    assert small_sample_factor(96) == pytest.approx(1.0183, abs=1e-4)
    # 2 units: sqrt(2) x t_1 (12.706205) / z; many units: 1
    assert small_sample_factor(2) == pytest.approx(math.sqrt(2) * 12.706205 / 1.959964, abs=1e-5)
    assert small_sample_factor(100_000) == pytest.approx(1.0, abs=1e-4)
    assert math.isnan(small_sample_factor(1))


def test_the_widened_interval_moves_each_bound_outward_by_the_factor():
    draws = np.arange(101, dtype=float)  # percentile bounds 2.5 and 97.5
    widen = small_sample_factor(96) - 1
    low, high = widened_interval(40.0, draws, 96)
    assert low == pytest.approx(2.5 - widen * 37.5, abs=1e-9)
    assert high == pytest.approx(97.5 + widen * 57.5, abs=1e-9)
    # an observed value outside the percentile interval never narrows it
    low, high = widened_interval(1.0, draws, 96)
    assert low < 2.5 and high > 97.5
    assert all(math.isnan(bound) for bound in widened_interval(0.5, np.array([]), 96))
