"""Empirical epsilon: the privacy loss a membership attack's results prove at least (Jagielski et al.
2020, "Auditing Differentially Private Machine Learning"; Nasr et al. 2021, "Adversary Instantiation").

An (epsilon, delta)-DP training run bounds every attack's rates: TPR <= e^eps FPR + delta and
1 - FPR <= e^eps (1 - TPR) + delta. An attack that reaches a TPR with a low FPR on canaries therefore
proves eps >= ln((TPR - delta) / FPR) and eps >= ln((1 - delta - FPR) / (1 - TPR)). The rates come from
few canaries, so each is replaced by its one-sided Clopper-Pearson bound in the direction that weakens
the claim (TPR by its lower bound, FPR by its upper bound), each at `confidence`. The result is a lower
bound on the true epsilon, not an estimate of it: few canaries cap what it can show
(`max_certifiable_epsilon`), however strong the attack.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import beta


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


@dataclass(frozen=True)
class ThresholdBound:
    """The epsilon bound of the threshold that gives the largest one, with its confusion table."""

    epsilon: float
    threshold: float  # scores at or above it are called members
    tp: int
    fn: int
    fp: int
    tn: int


def best_threshold_epsilon(
    member_scores: Sequence[float],
    nonmember_scores: Sequence[float],
    delta: float,
    confidence: float = 0.95,
) -> ThresholdBound:
    """The largest `epsilon_lower_bound` over every threshold on the scores (higher score = called a
    member). The threshold is chosen on the same canaries the bound is computed from, as is common in
    audits with few canaries: this is optimistic (the best of many thresholds is reported at a
    confidence meant for one), so read it as an upper end of what these canaries show, not as a
    certified bound."""
    members, nonmembers = np.asarray(member_scores, float), np.asarray(nonmember_scores, float)
    if len(members) == 0 or len(nonmembers) == 0:
        raise ValueError(f"a bound needs members and non-members: {len(members)} and {len(nonmembers)}")
    if not (np.isfinite(members).all() and np.isfinite(nonmembers).all()):
        raise ValueError("attack scores must be finite numbers")
    best = ThresholdBound(0.0, math.inf, 0, len(members), 0, len(nonmembers))
    for threshold in np.unique(np.concatenate([members, nonmembers])):
        tp, fp = int((members >= threshold).sum()), int((nonmembers >= threshold).sum())
        fn, tn = len(members) - tp, len(nonmembers) - fp
        epsilon = epsilon_lower_bound(tp, fn, fp, tn, delta, confidence)
        if epsilon > best.epsilon:
            best = ThresholdBound(epsilon, float(threshold), tp, fn, fp, tn)
    return best


def max_certifiable_epsilon(
    n_members: int, n_nonmembers: int, delta: float, confidence: float = 0.95
) -> float:
    """The bound of a perfect attack (every member called, no non-member): the most `n_members` and
    `n_nonmembers` canaries can certify. With delta 0 and n of each it is ln(a / (1 - a)) for
    a = (1 - confidence)^(1/n): about 1.05 at n = 10, 2.25 at 30, 3.49 at 100."""
    if n_members < 1 or n_nonmembers < 1:
        raise ValueError(f"a bound needs members and non-members: {n_members} and {n_nonmembers}")
    return epsilon_lower_bound(n_members, 0, 0, n_nonmembers, delta, confidence)
