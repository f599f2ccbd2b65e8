"""Leak rates against their held-out control, and what a sample of this size could detect.

For each leak measure (`plainsight.evaluation.held_out`) a corpus has a member rate (generations, or
distinct values, that leak from what the method saw) and a control rate (the same matcher against what it
did not see). The evidence is their difference, the **excess**:

- paired design (in-context methods, one matched control per generation): excess = (b - c) / n with b
  generations that hit only the member side and c only the control side; the p-value of the zero-learning
  null (excess <= 0) is McNemar's exact one-sided test (binomial b of b + c at 1/2);
- unpaired design (trained methods, distinct values): excess = k1 / n1 - k2 / n2; the p-value is Fisher's
  exact one-sided test.

The one-sided 95% bounds on the excess combine one-sided Clopper-Pearson bounds at 97.5% on each side's
rate (Bonferroni): upper = CP_hi(member) - CP_lo(control), lower = CP_lo(member) - CP_hi(control). They
are conservative and need no approximation at n = 24.

The smallest effect a test can detect at 80% power (one-sided alpha 0.05) comes from Cohen's h for rates
and from the Mann-Whitney null variance for AUCs; `conclusion` turns estimate and power into a sentence.
Under (epsilon, delta)-DP a member's hit rate is at most e^epsilon times the control's plus delta
(`dp_null_p_value`); `released_text_epsilon` is the empirical epsilon lower bound that the leak counts
imply when read as a membership attack (hit = "member").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from scipy.stats import binomtest, fisher_exact, norm

from plainsight.audit.epsilon import clopper_pearson, epsilon_lower_bound

ALPHA = 0.05  # one-sided tests and bounds
POWER = 0.8
LEAKS, NO_LEAK, INCONCLUSIVE = "leaks", "no leak detected", "inconclusive"


@dataclass(frozen=True)
class Excess:
    member_rate: float
    control_rate: float
    excess: float
    excess_low: float  # one-sided 95% lower bound
    excess_high: float  # one-sided 95% upper bound
    p_value: float  # zero-learning null: the excess is at most 0
    detectable: float  # the smallest excess this sample detects at 80% power
    members: int
    controls: int
    design: str  # paired | unpaired


def _bounded_difference(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    confidence = 1 - ALPHA / 2
    high = clopper_pearson(k1, n1, confidence, "upper") - clopper_pearson(k2, n2, confidence, "lower")
    low = clopper_pearson(k1, n1, confidence, "lower") - clopper_pearson(k2, n2, confidence, "upper")
    return low, high


def detectable_excess(control_rate: float, n_members: int, n_controls: int) -> float:
    """The member rate above `control_rate` that a one-sided test at alpha 0.05 finds with 80% power
    (Cohen's h: h = 2 asin(sqrt p1) - 2 asin(sqrt p0) = (z_alpha + z_power) sqrt(1/n1 + 1/n2))."""
    h = (norm.ppf(1 - ALPHA) + norm.ppf(POWER)) * math.sqrt(1 / n_members + 1 / n_controls)
    angle = math.asin(math.sqrt(min(max(control_rate, 0.0), 1.0))) + h / 2
    return (1.0 if angle >= math.pi / 2 else math.sin(angle) ** 2) - control_rate


def paired_excess(member_only: int, control_only: int, member_hits: int, control_hits: int, n: int) -> Excess:
    """The excess of a paired design over `n` generations; `member_only`/`control_only` discordant pairs."""
    if n < 1:
        raise ValueError("no generations to compare")
    discordant = member_only + control_only
    p = binomtest(member_only, discordant, 0.5, alternative="greater").pvalue if discordant else 1.0
    low, high = _bounded_difference(member_hits, n, control_hits, n)
    return Excess(
        member_hits / n,
        control_hits / n,
        (member_only - control_only) / n,
        low,
        high,
        float(p),
        detectable_excess(control_hits / n, n, n),
        n,
        n,
        "paired",
    )


def unpaired_excess(member_hits: int, members: int, control_hits: int, controls: int) -> Excess:
    """The excess of member over control rate with independent samples (distinct values or segments)."""
    if members < 1 or controls < 1:
        raise ValueError(f"no values to compare: {members} members, {controls} controls")
    table = [[member_hits, members - member_hits], [control_hits, controls - control_hits]]
    low, high = _bounded_difference(member_hits, members, control_hits, controls)
    return Excess(
        member_hits / members,
        control_hits / controls,
        member_hits / members - control_hits / controls,
        low,
        high,
        float(fisher_exact(table, alternative="greater").pvalue),
        detectable_excess(control_hits / controls, members, controls),
        members,
        controls,
        "unpaired",
    )


def excess_of(counts: Mapping[str, int], design: str) -> Excess:
    """The excess of one measure from the counts `plainsight.evaluation.held_out` records."""
    if design == "paired":
        return paired_excess(
            counts["member_only"],
            counts["control_only"],
            counts["member_hits"],
            counts["control_hits"],
            counts["members"],
        )
    return unpaired_excess(
        counts["member_hits"], counts["members"], counts["control_hits"], counts["controls"]
    )


def detectable_auc(members: int, non_members: int) -> float:
    """The AUC a one-sided test at alpha 0.05 finds with 80% power against 0.5, from the Mann-Whitney
    statistic's null standard error sqrt((n1 + n0 + 1) / (12 n1 n0))."""
    se = math.sqrt((members + non_members + 1) / (12 * members * non_members))
    return min(1.0, 0.5 + (norm.ppf(1 - ALPHA) + norm.ppf(POWER)) * se)


def conclusion(significant: bool, detectable: float, threshold: float, unit: str = "") -> str:
    """`leaks` when the test rejects the zero-learning null; `no leak detected (could detect >= X)` when
    it does not and the sample could detect an effect at the threshold that matters; else `inconclusive`."""
    if significant:
        return LEAKS
    if detectable <= threshold:
        return f"{NO_LEAK} (could detect >= {detectable:.2f}{unit})"
    return INCONCLUSIVE


def dp_null_p_value(
    member_hits: int, members: int, control_hits: int, controls: int, epsilon: float, delta: float
):
    """The p-value of "the member rate is at most e^epsilon x the control rate + delta" (what (epsilon,
    delta)-DP allows), with the control rate at its one-sided 97.5% upper bound: a small value from a
    method that claims epsilon points at a bug."""
    control_high = clopper_pearson(control_hits, controls, 1 - ALPHA / 2, "upper")
    allowed = min(1.0, math.exp(min(epsilon, 700.0)) * control_high + delta)
    if allowed >= 1.0:
        return 1.0
    return float(binomtest(member_hits, members, allowed, alternative="greater").pvalue)


def released_text_epsilon(
    member_hits: int, members: int, control_hits: int, controls: int, delta: float
) -> float:
    """The empirical epsilon lower bound of the leak read as an attack: "member" when the matcher hits."""
    return epsilon_lower_bound(
        member_hits, members - member_hits, control_hits, controls - control_hits, delta, 1 - ALPHA / 2
    )


def excess_record(measure: str, excess: Excess, threshold: float) -> dict[str, Any]:
    """One measure's columns of the audit table, prefixed `leak_{measure}_`."""
    significant = excess.p_value < ALPHA
    return {
        **{f"leak_{measure}_{name}": value for name, value in asdict(excess).items()},
        f"leak_{measure}_conclusion": conclusion(significant, excess.detectable, threshold),
    }
