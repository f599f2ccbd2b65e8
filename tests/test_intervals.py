"""Pooled intervals with known answers: Wilson, a seeded bootstrap, exact McNemar on paired generations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from plainsight.evaluation.intervals import (
    accelerated_interval,
    accelerated_tails,
    acceleration,
    bootstrap_interval,
    mcnemar_exact,
    paired_leaks,
    percentile_interval,
    small_sample_factor,
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


def test_the_acceleration_of_a_mean_by_hand():
    # the jackknife of a mean of 0, 0, 0, 1: influence values x - 0.25 = -0.25 (three times) and 0.75, so
    # a = (3 x -0.015625 + 0.421875) / (6 x 0.75^1.5) = 0.375 / 3.897114 = 0.096225
    values = np.array([0.0, 0.0, 0.0, 1.0])
    left_out = np.array([(values.sum() - x) / 3 for x in values])
    assert acceleration([left_out]) == pytest.approx(0.375 / (6 * 0.75**1.5), abs=1e-12)
    assert acceleration([left_out]) == pytest.approx(0.096225, abs=1e-6)
    # two samples: each stratum's influence values scaled by its own size; a mirror-image pair cancels
    assert acceleration([left_out, 2 - left_out]) == pytest.approx(0.0, abs=1e-12)
    # nothing moves, or a stratum of one unit: no acceleration
    assert acceleration([np.full(5, 0.7)]) == 0.0
    assert acceleration([np.array([0.3])]) == 0.0
    assert acceleration([np.array([0.3]), left_out]) == acceleration([left_out])


def test_without_bias_or_acceleration_the_tails_are_the_percentile_intervals():
    draws = np.arange(101, dtype=float)  # median 50
    assert accelerated_tails(50.0, draws, 0.0, 0.95) == pytest.approx([2.5, 97.5], abs=1e-9)
    # 60.5 of 101 draws under 60 (60 under, one tied): z0 = Phi^-1(0.599010) = 0.250785; the tails
    # Phi(2 z0 -/+ 1.959964) = Phi(-1.458394), Phi(2.461534): 7.2366% and 99.3083%
    assert accelerated_tails(60.0, draws, 0.0, 0.95) == pytest.approx([7.2366, 99.3083], abs=1e-4)
    # acceleration 0.1 at z0 = 0: Phi(z / (1 - 0.1 z)) = Phi(-1.638771), Phi(2.437755): 5.0631%, 99.2611%
    assert accelerated_tails(50.0, draws, 0.1, 0.95) == pytest.approx([5.0631, 99.2611], abs=1e-4)
    # a draw equal to the observed value but for rounding is a tie, not a draw under it
    assert accelerated_tails(50.0 + 1e-14, draws, 0.0, 0.95) == pytest.approx([2.5, 97.5], abs=1e-9)
    # every draw under it: z0 stays finite, at half a draw from the end; a correction that turns over
    # sends its tail to the end of the draws
    assert np.isfinite(accelerated_tails(500.0, draws, 0.0, 0.95)).all()
    assert accelerated_tails(50.0, draws, 0.6, 0.95)[1] == 100.0


def test_the_accelerated_interval_moves_each_bound_outward_by_the_factor():
    draws = np.arange(101, dtype=float)  # percentile bounds 2.5 and 97.5 at z0 = a = 0
    widen = small_sample_factor(96) - 1
    symmetric = [np.array([1.0, 2.0, 3.0])]  # no skew: acceleration 0
    low, high = accelerated_interval(50.0, draws, symmetric, 96)
    assert low == pytest.approx(2.5 - widen * 47.5, abs=1e-9)
    assert high == pytest.approx(97.5 + widen * 47.5, abs=1e-9)
    # an observed value outside the interval never narrows it
    low, high = accelerated_interval(200.0, draws, symmetric, 96)
    assert low < draws.max() and high >= draws.max()
    assert all(math.isnan(bound) for bound in accelerated_interval(0.5, np.array([]), symmetric, 96))
    # a positive acceleration (a long right tail: the mean of 0, 0, 0, 1 falls where its 1 is left out)
    # moves both percentiles up
    skewed = [np.array([1.0, 1.0, 1.0, 0.0]) / 3]
    assert (
        accelerated_interval(50.0, draws, skewed, 96)[0] > accelerated_interval(50.0, draws, symmetric, 96)[0]
    )
