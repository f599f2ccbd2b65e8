"""Empirical epsilon: the privacy loss an attack's results prove at least.

Two bounds, each a lower bound on the true epsilon, never an estimate of it:

- `epsilon_lower_bound` (Jagielski et al. 2020; Nasr et al. 2021): an (epsilon, delta)-DP mechanism
  bounds every test's rates, TPR <= e^eps FPR + delta and 1 - FPR <= e^eps (1 - TPR) + delta, so rates
  measured on independent trials prove eps >= ln((TPR - delta) / FPR) and ln((1 - delta - FPR) /
  (1 - TPR)), each rate replaced by its one-sided Clopper-Pearson bound in the direction that weakens
  the claim.
- `one_run_epsilon` (Steinke, Nasr and Jagielski 2023, "Privacy Auditing with One (1) Training Run"):
  m canaries, each included in one training run by an independent fair coin; the attack makes r
  guesses (included or not) fixed in number before it sees any score and abstains on the rest; v of
  them are right. If training is (epsilon, delta)-DP,
  P[V >= v] <= f(v) + 2 m delta max_{i = 1..v} (f(v - i) - f(v)) / i, with f(k) = P[Binomial(r, q) >= k]
  and q = e^eps / (1 + e^eps): a p-value for "training is (epsilon, delta)-DP" that grows with epsilon.
  Every epsilon whose p-value lies at or under 1 - confidence is rejected; the bound is where the
  p-value reaches it. With delta 0 and every guess right it is logit((1 - confidence)^(1/r)): the most
  r guesses can ever show (`one_run_max_epsilon`), 1.26 at 12, 3.49 at 100 (95%).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import expit
from scipy.stats import beta, binom

# The bisection stops when the epsilon interval is this narrow, far below the 2 decimals shown.
EPSILON_TOLERANCE = 1e-9
# expit(64) rounds to 1 in double precision: every guess is right with probability 1 and the p-value
# is 1, so the bound lies below it.
EPSILON_CEILING = 64.0


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")


def clopper_pearson(
    successes: int, trials: int, confidence: float = 0.95, side: Literal["lower", "upper"] = "lower"
) -> float:
    """The exact one-sided bound on a binomial rate: the `lower` bound p with P(X >= successes | p) =
    1 - confidence (0 when successes is 0), or the `upper` bound with P(X <= successes | p) =
    1 - confidence (1 when every trial succeeded)."""
    if not 0 <= successes <= trials or trials < 1:
        raise ValueError(f"a rate needs 0 <= successes <= trials and trials >= 1: {successes} of {trials}")
    _check_confidence(confidence)
    if side == "lower":
        return 0.0 if successes == 0 else float(beta.ppf(1 - confidence, successes, trials - successes + 1))
    if side == "upper":
        return 1.0 if successes == trials else float(beta.ppf(confidence, successes + 1, trials - successes))
    raise ValueError(f"side must be 'lower' or 'upper', not {side!r}")


def _log_ratio(numerator: float, denominator: float) -> float:
    return math.log(numerator / denominator) if numerator > 0 and denominator > 0 else -math.inf


def epsilon_lower_bound(tp: int, fn: int, fp: int, tn: int, delta: float, confidence: float = 0.95) -> float:
    """max(0, ln((TPR_lo - delta) / FPR_hi), ln((1 - delta - FPR_hi) / (1 - TPR_lo))), where TPR_lo is
    the lower Clopper-Pearson bound on tp / (tp + fn) and FPR_hi the upper bound on fp / (fp + tn), each
    one-sided at `confidence` (together they hold with probability at least 1 - 2 (1 - confidence))."""
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1), not {delta}")
    tpr_low = clopper_pearson(tp, tp + fn, confidence, "lower")
    fpr_high = clopper_pearson(fp, fp + tn, confidence, "upper")
    return max(
        0.0,
        _log_ratio(tpr_low - delta, fpr_high),
        _log_ratio(1 - delta - fpr_high, 1 - tpr_low),
    )


def _check_one_run(canaries: int, guesses: int, correct: int, delta: float) -> None:
    if not 0 <= correct <= guesses <= canaries:
        raise ValueError(
            f"a one-run audit needs 0 <= correct <= guesses <= canaries: {correct}, {guesses}, {canaries}"
        )
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1), not {delta}")


def one_run_p_value(epsilon: float, canaries: int, guesses: int, correct: int, delta: float) -> float:
    """The bound on P[correct guesses >= `correct`] of an (epsilon, delta)-DP run (module docstring)."""
    _check_one_run(canaries, guesses, correct, delta)
    # f(k) for k = 0..correct: the chance that at least k of the guesses are right at rate q
    at_least = binom.sf(np.arange(correct + 1) - 1, guesses, expit(epsilon))
    tail = float(at_least[correct])
    if correct == 0 or delta == 0:
        return min(1.0, tail)
    steps = np.arange(1, correct + 1)
    spread = float(np.max((at_least[correct - steps] - tail) / steps))
    return min(1.0, tail + 2 * canaries * delta * spread)


def one_run_epsilon(
    canaries: int, guesses: int, correct: int, delta: float, confidence: float = 0.95
) -> float:
    """The one-run lower bound on epsilon at `delta`: the epsilon where `one_run_p_value` reaches
    1 - `confidence`, found by bisection (0 where even epsilon 0 is not rejected)."""
    _check_one_run(canaries, guesses, correct, delta)
    _check_confidence(confidence)
    level = 1 - confidence

    def rejected(epsilon: float) -> bool:
        return one_run_p_value(epsilon, canaries, guesses, correct, delta) <= level

    if guesses == 0 or not rejected(0.0):
        return 0.0
    low, high = 0.0, EPSILON_CEILING
    while high - low > EPSILON_TOLERANCE:
        middle = (low + high) / 2
        low, high = (middle, high) if rejected(middle) else (low, middle)
    return low


def one_run_max_epsilon(canaries: int, guesses: int, delta: float, confidence: float = 0.95) -> float:
    """The most an audit of `canaries` with `guesses` guesses can show: every guess right."""
    return one_run_epsilon(canaries, guesses, guesses, delta, confidence)
