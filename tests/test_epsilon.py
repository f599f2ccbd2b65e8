"""Empirical epsilon: Clopper-Pearson bounds, the two-sample epsilon bound and the one-run audit's bound
against hand-computed and published values."""

from __future__ import annotations

import itertools
import math

import pytest

from plainsight.audit.epsilon import (
    clopper_pearson,
    epsilon_lower_bound,
    one_run_epsilon,
    one_run_max_epsilon,
    one_run_p_value,
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


# (m canaries, r guesses, v right, delta) -> the one-run bound at 95%, recomputed from Steinke, Nasr and
# Jagielski's theorem with scipy's binomial tails and given to 3 decimals; this implementation lies
# within 5e-4 of each, so a tolerance of 2e-3 leaves a margin no rounding can cross
ONE_RUN_KNOWN = [
    (12, 12, 12, 0.0, 1.260),
    (24, 24, 24, 0.0, 2.018),
    (24, 24, 24, 1e-5, 2.017),
    (36, 36, 30, 1e-5, 0.834),
    (100, 100, 100, 0.0, 3.493),
    (100, 100, 81, 1e-5, 1.014),
    (100, 100, 90, 1e-5, 1.630),
    (100, 50, 50, 1e-5, 2.782),
    (1000, 1000, 1000, 0.0, 5.809),
    (1000, 1000, 1000, 1e-5, 5.782),
    (1000, 1000, 755, 1e-5, 1.002),
    (1000, 100, 100, 1e-5, 3.465),
]


@pytest.mark.parametrize(("canaries", "guesses", "correct", "delta", "expected"), ONE_RUN_KNOWN)
def test_one_run_bound_matches_the_known_answers(canaries, guesses, correct, delta, expected):
    bound = one_run_epsilon(canaries, guesses, correct, delta, confidence=0.95)
    assert bound == pytest.approx(expected, abs=2e-3)
    # the bound is where the p-value reaches 0.05: just below it is rejected, just above it is not
    assert one_run_p_value(bound - 1e-3, canaries, guesses, correct, delta) < 0.05
    assert one_run_p_value(bound + 1e-3, canaries, guesses, correct, delta) > 0.05


def test_all_right_guesses_at_delta_0_give_the_closed_form():
    for guesses, confidence in [(10, 0.95), (12, 0.95), (20, 0.975), (100, 0.95), (100, 0.99)]:
        a = (1 - confidence) ** (1 / guesses)
        closed = math.log(a / (1 - a))
        assert one_run_epsilon(guesses, guesses, guesses, 0.0, confidence) == pytest.approx(closed, abs=1e-6)
        assert one_run_max_epsilon(3 * guesses, guesses, 0.0, confidence) == pytest.approx(closed, abs=1e-6)
    # 10 right guesses are the fewest that refute epsilon 1 at 95% (1.05 against 0.92 for 9)
    assert one_run_max_epsilon(10, 10, 1e-5) > 1.0 > one_run_max_epsilon(9, 9, 1e-5)


def test_one_run_p_value_by_hand():
    # delta 0: the binomial tail alone, P[Binomial(4, q) >= 3] at q = e / (1 + e)
    q = math.e / (1 + math.e)
    assert one_run_p_value(1.0, 10, 4, 3, 0.0) == pytest.approx(binomial_tail_at_least(3, 4, q), abs=1e-12)
    # delta 0.01 adds 2 m delta max_i (f(v - i) - f(v)) / i over i = 1..3
    tails = [binomial_tail_at_least(k, 4, q) for k in range(4)]
    spread = max((tails[3 - i] - tails[3]) / i for i in (1, 2, 3))
    expected = tails[3] + 2 * 10 * 0.01 * spread
    assert one_run_p_value(1.0, 10, 4, 3, 0.01) == pytest.approx(expected, abs=1e-12)
    # no right guess proves nothing, whatever epsilon
    assert one_run_p_value(5.0, 10, 4, 0, 0.0) == 1.0 and one_run_epsilon(10, 4, 0, 0.0) == 0.0


def test_one_run_bound_grows_with_right_guesses_and_shrinks_with_delta():
    bounds = [one_run_epsilon(100, 100, correct, 1e-5) for correct in range(101)]
    assert all(later >= earlier for earlier, later in itertools.pairwise(bounds))
    assert bounds[50] == 0.0 and bounds[60] > 0.0 and bounds[100] == one_run_max_epsilon(100, 100, 1e-5)
    # as many right as chance (half of them) refutes nothing; a larger delta weakens every bound
    assert one_run_epsilon(40, 40, 20, 0.0) == 0.0
    assert one_run_epsilon(1000, 1000, 1000, 1e-3) < one_run_epsilon(1000, 1000, 1000, 1e-5)


def test_bad_settings_stop_with_one_line():
    for call, message in [
        (lambda: clopper_pearson(11, 10), "successes <= trials"),
        (lambda: clopper_pearson(1, 10, confidence=1.0), "confidence"),
        (lambda: clopper_pearson(1, 10, side="both"), "side"),
        (lambda: epsilon_lower_bound(1, 1, 1, 1, delta=1.0), "delta"),
        (lambda: one_run_epsilon(10, 12, 12, 0.0), "guesses <= canaries"),
        (lambda: one_run_epsilon(10, 4, 5, 0.0), "correct <= guesses"),
        (lambda: one_run_epsilon(10, 4, 4, delta=1.0), "delta"),
        (lambda: one_run_epsilon(10, 4, 4, 0.0, confidence=0.0), "confidence"),
    ]:
        with pytest.raises(ValueError, match=message) as error:
            call()
        assert "\n" not in str(error.value)
