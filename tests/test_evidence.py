"""The excess of a leak over its held-out control, its bounds, p-values and detectable effects: hand-made
tables and simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, norm

from plainsight.audit.evidence import (
    INCONCLUSIVE,
    LEAKS,
    conclusion,
    detectable_auc,
    detectable_excess,
    dp_null_p_value,
    excess_record,
    paired_excess,
    released_text_epsilon,
    unpaired_excess,
)


def test_a_method_that_copies_every_time_against_a_control_that_never_matches():
    excess = paired_excess(member_only=10, control_only=0, member_hits=10, control_hits=0, n=10)
    lower_of_all = 0.025 ** (1 / 10)  # one-sided 97.5% Clopper-Pearson lower bound of 10 of 10
    assert excess.excess == 1.0
    assert excess.excess_low == pytest.approx(lower_of_all - (1 - lower_of_all), abs=1e-9)  # 0.383
    assert excess.excess_high == pytest.approx(1.0)
    assert excess.p_value == pytest.approx(0.5**10)  # McNemar: all ten discordant pairs one way


def test_no_hit_on_either_side_bounds_the_excess_by_the_sample_size():
    excess = unpaired_excess(member_hits=0, members=20, control_hits=0, controls=20)
    upper_of_none = 1 - 0.025 ** (1 / 20)  # 0.168
    assert (excess.excess, excess.p_value) == (0.0, 1.0)
    assert excess.excess_high == pytest.approx(upper_of_none, abs=1e-9)
    assert excess.excess_low == pytest.approx(-upper_of_none, abs=1e-9)


def test_a_phantom_leak_has_no_excess():
    # a value generic text writes anyway: 8 of 24 generations hit the member side, 8 the control side
    excess = paired_excess(member_only=2, control_only=2, member_hits=8, control_hits=8, n=24)
    assert excess.excess == 0.0 and excess.p_value == pytest.approx(11 / 16)  # P(X >= 2 | 4, 1/2)
    assert excess.excess_low < 0 < excess.excess_high


def test_fishers_test_on_a_hand_made_table():
    # 3 of 4 member values against 0 of 4 control values: P = C(4,3)C(4,0)/C(8,3) + 0 = 4/56
    excess = unpaired_excess(3, 4, 0, 4)
    assert excess.p_value == pytest.approx(4 / 56)
    assert excess.excess == pytest.approx(0.75)


def test_the_detectable_excess_has_80_percent_power_in_a_simulation():
    rng = np.random.default_rng(7)
    for control_rate, n in ((0.1, 100), (0.0, 60), (0.3, 40)):
        member_rate = control_rate + detectable_excess(control_rate, n, n)
        k1, k2 = rng.binomial(n, member_rate, 4000), rng.binomial(n, control_rate, 4000)
        h = 2 * np.arcsin(np.sqrt(k1 / n)) - 2 * np.arcsin(np.sqrt(k2 / n))
        power = float(np.mean(h / math.sqrt(2 / n) > norm.ppf(0.95)))
        assert 0.74 < power < 0.86, (control_rate, n, power)


def test_the_detectable_auc_has_80_percent_power_in_a_simulation():
    rng = np.random.default_rng(11)
    members = non_members = 48
    auc = detectable_auc(members, non_members)
    assert 0.63 < auc < 0.66
    shift = math.sqrt(2) * norm.ppf(auc)  # binormal: AUC = Phi(shift / sqrt 2)
    rejected = [
        mannwhitneyu(
            rng.normal(shift, 1, members), rng.normal(0, 1, non_members), alternative="greater"
        ).pvalue
        < 0.05
        for _ in range(1500)
    ]
    assert 0.74 < np.mean(rejected) < 0.88


def test_conclusions():
    assert conclusion(True, 0.3, 0.05) == LEAKS
    assert conclusion(False, 0.04, 0.05) == "no leak detected (could detect >= 0.04)"
    assert conclusion(False, 0.3, 0.05) == INCONCLUSIVE
    record = excess_record("exact", paired_excess(10, 0, 10, 0, 10), 0.05)
    assert record["leak_exact_conclusion"] == LEAKS and record["leak_exact_design"] == "paired"


def test_the_dp_null_holds_for_a_large_epsilon_and_rejects_a_copy_at_a_small_one():
    assert dp_null_p_value(20, 20, 0, 20, epsilon=8.0, delta=1e-5) == 1.0  # e^8 x anything >= 1
    assert dp_null_p_value(20, 20, 0, 20, epsilon=0.1, delta=1e-5) < 1e-6


def test_the_released_text_epsilon_is_zero_without_excess_and_positive_for_a_copy():
    assert released_text_epsilon(5, 24, 5, 24, delta=1e-5) == 0.0
    assert released_text_epsilon(24, 24, 0, 24, delta=1e-5) > 1.0


def test_bad_sizes_stop():
    with pytest.raises(ValueError, match="no generations"):
        paired_excess(0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="no values"):
        unpaired_excess(0, 0, 0, 3)
