"""Empirical epsilon: Clopper-Pearson bounds and the epsilon bound against hand-computed values."""

from __future__ import annotations

import math

import pytest

from plainsight.audit.epsilon import (
    best_threshold_epsilon,
    clopper_pearson,
    epsilon_lower_bound,
    max_certifiable_epsilon,
)


def binomial_tail_at_least(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def bisect(function, low: float, high: float) -> float:
    """The root of an increasing `function` on [low, high]."""
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if function(middle) < 0 else (low, middle)
    return (low + high) / 2


def test_clopper_pearson_solves_the_binomial_tail_equations():
    # lower bound on 9 of 10: P(X >= 9 | p) = 0.05; upper bound on 1 of 10: P(X <= 1 | p) = 0.05
    lower = bisect(lambda p: binomial_tail_at_least(9, 10, p) - 0.05, 0, 1)
    upper = bisect(lambda p: 0.05 - (1 - binomial_tail_at_least(2, 10, p)), 0, 1)
    assert clopper_pearson(9, 10, 0.95, "lower") == pytest.approx(lower, abs=1e-9)
    assert clopper_pearson(1, 10, 0.95, "upper") == pytest.approx(upper, abs=1e-9)
    assert lower == pytest.approx(0.6058, abs=1e-4) and upper == pytest.approx(0.3942, abs=1e-4)
    # the closed forms at the edges: all successes (lower) and none (upper)
    assert clopper_pearson(10, 10, 0.95, "lower") == pytest.approx(0.05**0.1)
    assert clopper_pearson(0, 10, 0.95, "upper") == pytest.approx(1 - 0.05**0.1)
    assert clopper_pearson(0, 10, 0.95, "lower") == 0.0 and clopper_pearson(10, 10, 0.95, "upper") == 1.0


def test_epsilon_bound_of_a_hand_made_confusion_table():
    # tp 9, fn 1, fp 1, tn 9: TPR_lo 0.6058, FPR_hi 0.3942 (above); both terms ln(0.6058 / 0.3942)
    assert epsilon_lower_bound(9, 1, 1, 9, delta=0.0) == pytest.approx(math.log(0.60584 / 0.39416), abs=1e-4)
    assert epsilon_lower_bound(9, 1, 1, 9, delta=0.0) == pytest.approx(0.4298, abs=1e-4)
    # delta 0.1 takes 0.1 off each numerator: ln((0.60584 - 0.1) / 0.39416) = 0.2494
    assert epsilon_lower_bound(9, 1, 1, 9, delta=0.1) == pytest.approx(0.2494, abs=1e-4)
    # tp 10 of 10, fp 2 of 20: the first term ln(0.05^0.1 / FPR_hi), FPR_hi solving P(X <= 2 | p) = 0.05
    fpr_high = bisect(lambda p: 0.05 - (1 - binomial_tail_at_least(3, 20, p)), 0, 1)
    expected = max(math.log(0.05**0.1 / fpr_high), math.log((1 - fpr_high) / (1 - 0.05**0.1)))
    assert epsilon_lower_bound(10, 0, 2, 18, delta=0.0) == pytest.approx(expected, abs=1e-6)
    # an attack no better than chance proves nothing
    assert epsilon_lower_bound(5, 5, 5, 5, delta=1e-5) == 0.0


def test_max_certifiable_epsilon_at_10_30_and_100_canaries():
    for n, expected in [(10, 1.0519), (30, 2.2537), (100, 3.4930)]:
        a = 0.05 ** (1 / n)
        assert math.log(a / (1 - a)) == pytest.approx(expected, abs=1e-4)
        assert max_certifiable_epsilon(n, n, delta=0.0) == pytest.approx(expected, abs=1e-4)
    assert max_certifiable_epsilon(30, 30, delta=1e-5) < max_certifiable_epsilon(30, 30, delta=0.0)


def test_perfect_separation_reaches_the_max_and_identical_scores_give_zero():
    members, nonmembers = [float(s) for s in range(10, 20)], [float(s) for s in range(10)]
    perfect = best_threshold_epsilon(members, nonmembers, delta=0.0)
    assert perfect.epsilon == pytest.approx(max_certifiable_epsilon(10, 10, delta=0.0))
    assert (perfect.tp, perfect.fn, perfect.fp, perfect.tn) == (10, 0, 0, 10) and perfect.threshold == 10.0
    same = [0.1 * s for s in range(30)]
    assert best_threshold_epsilon(same, same, delta=1e-5).epsilon == 0.0
    # members scored lower than non-members: this attack's direction proves nothing either
    assert best_threshold_epsilon(nonmembers, members, delta=0.0).epsilon == 0.0


def test_bad_settings_stop_with_one_line():
    for call, message in [
        (lambda: clopper_pearson(11, 10), "successes <= trials"),
        (lambda: clopper_pearson(1, 10, confidence=1.0), "confidence"),
        (lambda: clopper_pearson(1, 10, side="both"), "side"),
        (lambda: epsilon_lower_bound(1, 1, 1, 1, delta=1.0), "delta"),
        (lambda: best_threshold_epsilon([], [1.0], 0.0), "members and non-members"),
        (lambda: best_threshold_epsilon([math.nan], [1.0], 0.0), "finite"),
        (lambda: max_certifiable_epsilon(0, 10, 0.0), "members and non-members"),
    ]:
        with pytest.raises(ValueError, match=message) as error:
            call()
        assert "\n" not in str(error.value)
