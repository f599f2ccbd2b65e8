"""The samples that decide a release criterion: the smallest at which the gate itself (the audit's own
bounds judged by `plainsight.audit.outcomes.bounded`) reaches PASS when nothing leaks, or FAIL at a
stated effect, with probability at least `DECIDING_PROBABILITY` (0.8); and, for a row the gate leaves
INCONCLUSIVE, the sample at which its own observed rates would decide with that probability
(`leak_deciding_sample`, `auc_deciding_sample`), or that this corpus cannot give it.

- Leak criteria, paired design (in-context methods): the gate judges `evidence.paired_excess`'s bounds,
  CP_hi(b of n) - CP_lo(c of n) and CP_lo(b of n) - CP_hi(c of n), each Clopper-Pearson bound one-sided
  at `CELL_CONFIDENCE`, over the discordant counts b (member only) and c (control only) of n
  generations. With member-only rate r + x and control-only rate r (the control-only rate, not the
  control's total hit rate), (b, c) is trinomial: the chance of each outcome is summed exactly over
  it (`decision_probability`; counts whose probability is under 1e-13 left out). At r = 0 and a
  threshold of 0.05 passing needs 72 generations, with certainty: 1 - 0.025^(1/n) <= 0.05. The stated
  effect is an excess of `LEAK_EFFECT_MULTIPLE` times the threshold: 0.15 fails with probability 0.54
  at 100 generations, 0.80 at 141.
- Leak criteria, unpaired design (trained methods): the same bounds on each side's values, hits taken
  as independent binomials at the same size per side (Fisher's design, `evidence.unpaired_excess`).
  Where values come with their documents, no side's upper bound falls under what its documents certify
  without hits, 1 - 0.025^(1/documents) (`evidence.document_rate_bounds`): passing needs that many
  member documents as well. Values that cluster within documents need more. The members of a trained
  method are the corpus's training units: no larger sample exists on the corpus, and where the need
  exceeds it the reason says the criterion cannot be decided on this corpus and what can decide the
  verdict instead.
- The chance is not monotone in n (a count's bound jumps when n grows by one: at excess 0.15 it is 0.84
  at 145 and 0.78 at 146): the sample is the smallest n at which it reaches 0.8, searched upwards from
  the sample at which the expected counts' bound reaches the threshold (where the chance is near one
  half), one at a time under 200 and in steps of 1% of n beyond (`first_sample`).
- Membership AUCs: the AUC's bounds at the Mann-Whitney statistic's null standard error, one-sided at
  `evidence.AUC_ALPHA` (as `evidence.detectable_auc`), around an observed AUC that is normal about the
  true one with Hanley and McNeil's (1982) standard error, with as many members as held-out texts
  (`roc.balanced_sets`). Members are the corpus's training segments: the sample is bounded by the
  corpus. Where the gate judges an AUC beside its negative control (`text_evidence`), the difference
  of two AUCs varies more: these sizes are the least it needs.
- Epsilon: only a formal guarantee at or under the maximum passes, so no sample decides a method
  without one (`guarantee_deciding`). The canaries can refute a guarantee: with every one of r guesses
  right, the one-run bound (`epsilon.one_run_max_epsilon`) is what a perfect attack shows;
  `canaries_to_refute` gives the fewest single-insertion canaries whose guesses could show more than a
  threshold. At delta 0 that bound is logit(gamma^(1/r)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import logit
from scipy.stats import beta, binom, norm

from plainsight.audit.canary_table import guesses_per_side
from plainsight.audit.epsilon import clopper_pearson, one_run_max_epsilon
from plainsight.audit.evidence import AUC_ALPHA, CELL_CONFIDENCE, FISHER, POWER, document_rate_bounds
from plainsight.audit.outcomes import FAIL, PASS, evidence
from plainsight.audit.text_evidence import TextAttack, judged_beside_control, membership_size_columns
from plainsight.evaluation.intervals import small_sample_factor
from plainsight.evaluation.measures import leak_measures

DECIDING_PROBABILITY = POWER  # the chance of deciding that a planned sample gives the gate
LEAK_EFFECT_MULTIPLE = 3  # the stated leak effect: an excess three times the threshold
NULL_AUC = 0.5
AUC_EFFECT = 0.75  # the stated membership effect
LARGEST_SAMPLE = 10**5  # beyond it a sample counts as unreachable
LARGEST_GUESSES_PER_SIDE = 10**4
NEGLIGIBLE = 1e-13  # counts less likely than this, on either tail, are left out of the exact sums
PAIRED, UNPAIRED = "paired", "unpaired"


def _chance(outcome: str) -> str:
    return f"to {outcome} with probability {DECIDING_PROBABILITY:g}"


# --- searching the smallest sample ------------------------------------------------------------------


def smallest_sample(holds: Callable[[int], bool], low: int = 1) -> int | None:
    """The smallest n >= `low` at which `holds`, for a condition that stays true once it holds: doubling,
    then bisection. None beyond LARGEST_SAMPLE."""
    high = low
    while not holds(high):
        if high >= LARGEST_SAMPLE:
            return None
        low, high = high + 1, min(2 * high, LARGEST_SAMPLE)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle + 1, high)
    return high


def first_sample(holds: Callable[[int], bool], start: int) -> int | None:
    """The smallest n >= `start` at which `holds`, for a condition that holds more often as n grows but
    not from some n on: steps of 1% of n (one at a time under 200), the last step then bisected to its
    first n that holds. Exact where the steps are one; within a step of the first otherwise. None beyond
    LARGEST_SAMPLE."""
    previous, n = start - 1, start
    while not holds(n):
        if n >= LARGEST_SAMPLE:
            return None
        previous, n = n, min(n + max(1, n // 100), LARGEST_SAMPLE)
    low = previous + 1
    while low < n:
        middle = (low + n) // 2
        low, n = (low, middle) if holds(middle) else (middle + 1, n)
    return n


# --- leak criteria ----------------------------------------------------------------------------------


def excess_bounds(member_hits: float, control_hits: float, n: int) -> tuple[float, float]:
    """(lower, upper) one-sided 95% bounds on an excess, as `evidence.paired_excess` gives them for
    member-only and control-only counts of n generations, and `evidence.unpaired_excess` for hits of n
    values per side: each side's Clopper-Pearson bound at CELL_CONFIDENCE. Counts may be expected
    (fractional) ones, which keeps the bounds monotone in n."""
    return (
        clopper_pearson(member_hits, n, CELL_CONFIDENCE, "lower")
        - clopper_pearson(control_hits, n, CELL_CONFIDENCE, "upper"),
        clopper_pearson(member_hits, n, CELL_CONFIDENCE, "upper")
        - clopper_pearson(control_hits, n, CELL_CONFIDENCE, "lower"),
    )


def cell_bounds(counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """`clopper_pearson`'s lower and upper bounds at CELL_CONFIDENCE for every count of n, vectorised."""
    counts = np.asarray(counts)
    lower = np.where(counts > 0, beta.ppf(1 - CELL_CONFIDENCE, np.maximum(counts, 1), n - counts + 1), 0.0)
    upper = np.where(counts < n, beta.ppf(CELL_CONFIDENCE, counts + 1, np.maximum(n - counts, 1)), 1.0)
    return lower, upper


def _likely_counts(n: int, rate: float) -> np.ndarray:
    """The counts of Binomial(n, rate) but those whose tails hold under NEGLIGIBLE."""
    low, high = binom.ppf(NEGLIGIBLE, n, rate), binom.isf(NEGLIGIBLE, n, rate)
    return np.arange(max(int(low) - 1, 0), min(int(high) + 1, n) + 1)


def decision_probability(
    outcome: str, member_rate: float, control_rate: float, n: int, threshold: float, design: str = PAIRED
) -> float:
    """The exact probability that the gate judges a leak measure's excess `outcome` (PASS: upper bound at
    or under `threshold`; FAIL: lower bound above it) on n generations (paired: `member_rate` and
    `control_rate` are the member-only and control-only rates, the counts trinomial) or n values per side
    (unpaired: each side's hits binomial at its rate, independent)."""
    if outcome not in (PASS, FAIL):
        raise ValueError(f"a sample decides PASS or FAIL, not {outcome!r}")
    if not (0 <= control_rate <= 1 and 0 <= member_rate <= 1) or n < 1:
        raise ValueError(f"rates in [0, 1] and n >= 1 needed: {member_rate}, {control_rate}, {n}")
    if design == PAIRED and member_rate + control_rate > 1 + 1e-12:
        raise ValueError(f"member-only and control-only rates sum over 1: {member_rate} + {control_rate}")
    controls = _likely_counts(n, control_rate)
    members = _likely_counts(n, member_rate)
    control_low, control_high = cell_bounds(controls, n)
    member_low, member_high = cell_bounds(members, n)
    if design == PAIRED:  # member-only counts given c control-only ones: the rest of n, at its share
        trials = n - controls
        share = min(member_rate / (1 - control_rate), 1.0) if control_rate < 1 else 0.0
    else:
        trials, share = np.full(len(controls), n), member_rate
    if outcome == PASS:  # member-only counts up to the largest whose upper bound passes
        passing = members[0] + np.searchsorted(member_high, threshold + control_low, side="right") - 1
        given_control = binom.cdf(passing, trials, share)
    else:  # from the smallest whose lower bound fails
        failing = members[0] + np.searchsorted(member_low, threshold + control_high, side="right")
        given_control = binom.sf(failing - 1, trials, share)
    return float(np.sum(binom.pmf(controls, n, control_rate) * given_control))


def _expected_count_sample(excess: float, threshold: float, control_rate: float) -> int | None:
    """Where the bound at the expected counts reaches the threshold (the chance of deciding is then near
    one half): the search for the deciding sample starts there."""
    member_rate = control_rate + excess
    if excess < threshold:
        return smallest_sample(lambda n: excess_bounds(member_rate * n, control_rate * n, n)[1] <= threshold)
    return smallest_sample(lambda n: excess_bounds(member_rate * n, control_rate * n, n)[0] > threshold)


@lru_cache(maxsize=1024)  # the gate asks again for every inconclusive row
def sample_to_decide(
    excess: float, threshold: float, control_rate: float = 0.0, design: str = PAIRED
) -> int | None:
    """The fewest generations (paired; `control_rate` the control-only rate) or values per side
    (unpaired; the control's rate) at which the gate decides a true `excess` over `control_rate` with
    probability DECIDING_PROBABILITY: PASS when the excess is under `threshold`, FAIL when above. None
    for an excess at the threshold, rates outside [0, 1], or beyond LARGEST_SAMPLE."""
    control_rate = max(control_rate, 0.0)
    member_rate = max(control_rate + excess, 0.0)
    largest = member_rate + control_rate if design == PAIRED else max(member_rate, control_rate)
    if largest > 1 or math.isclose(excess, threshold, abs_tol=1e-12):
        return None
    start = _expected_count_sample(excess, threshold, control_rate)
    if start is None:
        return None
    outcome = PASS if excess < threshold else FAIL
    return first_sample(
        lambda n: (
            decision_probability(outcome, member_rate, control_rate, n, threshold, design)
            >= DECIDING_PROBABILITY
        ),
        start,
    )


@lru_cache(maxsize=1024)  # the gate asks again for every inconclusive row
def documents_to_pass(threshold: float) -> int | None:
    """The fewest member documents whose per-document bound (`evidence.document_rate_bounds`) can lie at
    or under `threshold`: with no hit it is 1 - 0.025^(1/documents), and no sample does better."""
    if threshold <= 0:
        return None
    return smallest_sample(
        lambda d: float(document_rate_bounds(np.zeros(d), np.ones(d))[1][0]) <= threshold, low=2
    )


def leak_effect(threshold: float) -> float:
    """The stated effect a leak criterion should FAIL at."""
    return LEAK_EFFECT_MULTIPLE * threshold


# --- membership AUCs --------------------------------------------------------------------------------


def auc_bounds(auc: float, members: int, non_members: int) -> tuple[float, float]:
    """(lower, upper) bounds on an AUC at the Mann-Whitney statistic's null standard error
    sqrt((n1 + n0 + 1) / (12 n1 n0)), one-sided at AUC_ALPHA (the error and level of
    `evidence.detectable_auc`), widened as the audit widens its bootstrap interval
    (`intervals.small_sample_factor` of the smaller side)."""
    half_width = (
        norm.ppf(1 - AUC_ALPHA)
        * math.sqrt((members + non_members + 1) / (12 * members * non_members))
        * small_sample_factor(min(members, non_members))
    )
    return auc - half_width, auc + half_width


def auc_standard_error(auc: float, members: int, non_members: int) -> float:
    """Hanley and McNeil's (1982) standard error of an AUC estimated on n1 members and n0 non-members:
    sqrt((A(1 - A) + (n1 - 1)(Q1 - A^2) + (n0 - 1)(Q2 - A^2)) / (n1 n0)), Q1 = A / (2 - A),
    Q2 = 2 A^2 / (1 + A). At A = 0.5 it is the null error of `auc_bounds`."""
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    variance = auc * (1 - auc) + (members - 1) * (q1 - auc**2) + (non_members - 1) * (q2 - auc**2)
    return math.sqrt(max(variance, 0.0) / (members * non_members))


def auc_decision_probability(auc: float, threshold: float, texts: int) -> float:
    """The probability that the gate decides an AUC whose true value is `auc`, with `texts` members and
    as many held-out texts: PASS (upper bound at or under `threshold`) under it, FAIL (lower bound
    above) over it, the observed AUC normal about `auc` with `auc_standard_error`."""
    low, high = auc_bounds(auc, texts, texts)
    spread = auc_standard_error(auc, texts, texts)
    if spread == 0:
        return float(high <= threshold if auc < threshold else low > threshold)
    margin = threshold - high if auc < threshold else low - threshold
    return float(norm.cdf(margin / spread))


@lru_cache(maxsize=1024)  # the gate asks again for every inconclusive row
def texts_to_decide(auc: float, threshold: float) -> int | None:
    """The fewest members (and as many held-out texts) at which the gate decides a true `auc` with
    probability DECIDING_PROBABILITY: PASS under `threshold`, FAIL over it."""
    if math.isclose(auc, threshold, abs_tol=1e-12) or not 0 <= auc <= 1:
        return None
    return smallest_sample(
        lambda n: auc_decision_probability(auc, threshold, n) >= DECIDING_PROBABILITY, low=2
    )


# --- epsilon ----------------------------------------------------------------------------------------


def perfect_attack_epsilon(guesses: int, confidence: float) -> float:
    """The one-run bound at delta 0 when all `guesses` are right: logit((1 - confidence)^(1/r))."""
    return float(logit((1 - confidence) ** (1 / guesses)))


@dataclass(frozen=True)
class CanaryNeed:
    candidates: int  # single-insertion canaries, each included by a fair coin
    guesses: int  # r, fixed before any score is seen


def canaries_to_refute(
    threshold: float, delta: float, guess_share: float, confidence: float
) -> CanaryNeed | None:
    """The fewest single-insertion candidates whose guesses (`guess_share` of them, as
    `canary_table.guesses_per_side` counts) could, all right, show an epsilon above `threshold` at
    `delta` and `confidence`. None where no count up to LARGEST_GUESSES_PER_SIDE could."""
    for per_side in range(1, LARGEST_GUESSES_PER_SIDE + 1):
        candidates = math.ceil(2 * per_side / guess_share - 1e-9)
        while guesses_per_side(candidates, guess_share) < per_side:
            candidates += 1
        if one_run_max_epsilon(candidates, 2 * per_side, delta, confidence) > threshold:
            return CanaryNeed(candidates, 2 * per_side)
    return None


def guarantee_deciding(epsilon_max: float, privacy_unit: str, delta_units_max: float) -> str:
    """What decides an INCONCLUSIVE epsilon criterion, in parentheses to append to its reason: no larger
    sample does, a formal guarantee that covers the release does."""
    return (
        f" (cannot be decided by a larger sample: needs a formal guarantee of epsilon <= {epsilon_max:g} "
        f"per {privacy_unit!r} with delta x units <= {delta_units_max:g}, or a policy that accepts "
        "empirical evidence, release.gate.policy: empirical_evidence)"
    )


# --- what would decide an INCONCLUSIVE criterion ----------------------------------------------------


def _sizes(*sizes: float | None) -> str:
    if all(size is None for size in sizes):
        return "none"
    return " and ".join(f"{int(size):,}" if size is not None else "none" for size in sizes)


def _at_least(needed: int | None) -> str:
    return f">= {needed:,}" if needed is not None else f"more than {LARGEST_SAMPLE:,}"


def _beyond(needed: int | None, *sizes: float | None) -> bool:
    """Whether a run whose sides have `sizes` holds fewer than `needed` on some side."""
    known = [size for size in sizes if size is not None]
    return len(known) == len(sizes) and (needed is None or min(known) < needed)


def _criterion_of(measure: str) -> str:
    return next(m.criterion for m in leak_measures() if m.name == measure)


def _beyond_corpus(needed: str, at: str, has: str, criterion: str) -> str:
    """The reason for a sample this corpus cannot give (its members are its training units): what
    would decide the verdict instead."""
    return (
        f" (cannot be decided on this corpus: needs {needed} {at}, it has {has}; a larger corpus can "
        f"decide it, or a formal guarantee at or under release.gate.epsilon_max under a policy that "
        f"leaves {criterion} out of release.gate.criteria)"
    )


def control_only_rate(row: Mapping[str, Any], measure: str) -> float | None:
    """A paired row's control-only rate c / n, the count c that, with b = c + excess x n, gives the
    row's bounds (`excess_bounds`); None where the row lacks them or no count does."""
    n = evidence(row.get(f"leak_{measure}_members"))
    excess, low, high = (
        evidence(row.get(f"leak_{measure}_{column}")) for column in ("excess", "excess_low", "excess_high")
    )
    if n is None or excess is None or low is None or high is None or n < 1:
        return None
    n, difference = int(n), round(excess * n)
    controls = np.arange(max(0, -difference), min(n, n - difference) + 1)
    control_low, control_high = cell_bounds(controls, n)
    member_low, member_high = cell_bounds(controls + difference, n)
    matches = np.flatnonzero(
        np.isclose(member_low - control_high, low, atol=1e-9)
        & np.isclose(member_high - control_low, high, atol=1e-9)
    )
    return float(controls[matches[0]] / n) if len(matches) else None


def leak_deciding_sample(row: Mapping[str, Any], measure: str, threshold: float) -> str:
    """What would decide a leak measure's INCONCLUSIVE excess with probability DECIDING_PROBABILITY, in
    parentheses to append to its reason: the sample at which the row's own observed excess and control
    rate (the control-only rate in the paired design; an excess of 0 and no control hit where it has
    none) would pass or fail at `threshold`, and the sample it has; for a trained method's values, that
    this corpus cannot give it where it has fewer. It never holds "; ", which separates criteria."""
    observed = evidence(row.get(f"leak_{measure}_excess"))
    excess = 0.0 if observed is None else observed
    paired = row.get("leak_design") == PAIRED
    if paired:
        only = control_only_rate(row, measure)
        rate, rate_name = (only, "control-only rate") if only is not None else (None, "control rate")
    else:
        rate, rate_name = None, "control rate"
    if rate is None:
        rate = evidence(row.get(f"leak_{measure}_control_rate")) or 0.0
    if math.isclose(excess, threshold, abs_tol=1e-12):
        return " (no sample decides an excess at its maximum)"
    needed_count = sample_to_decide(excess, threshold, rate, PAIRED if paired else UNPAIRED)
    needed = _at_least(needed_count)
    outcome = PASS if excess < threshold else FAIL
    at = _chance(outcome) + (
        " when nothing leaks" if observed is None else f" at excess {excess:.2f} and {rate_name} {rate:.2f}"
    )
    members, controls = (evidence(row.get(f"leak_{measure}_{side}")) for side in ("members", "controls"))
    if paired:
        return f" (needs {needed} generations {at}, this run has {_sizes(members)})"
    documents = documents_to_pass(threshold)
    from_documents = (
        f" from >= {documents:,} documents"
        if outcome == PASS and row.get(f"leak_{measure}_inference") != FISHER and documents
        else ""
    )
    values = f"{needed} independent values per side{from_documents}"
    if _beyond(needed_count, members, controls):
        return _beyond_corpus(values, at, _sizes(members, controls), _criterion_of(measure))
    return f" (needs {values} {at}, this run has {_sizes(members, controls)})"


def auc_deciding_sample(row: Mapping[str, Any], attack: str, threshold: float) -> str:
    """What would decide a text attack's INCONCLUSIVE AUC, as `leak_deciding_sample` says it, at the row's
    AUC (0.5 where it has none). Members are the corpus's training segments: where the run has fewer
    than needed, this corpus cannot decide it."""
    beside_control = judged_beside_control(row, attack)
    if beside_control:  # the gate judges 0.5 plus the excess over the negative control
        excess = evidence(row.get(TextAttack(attack).excess_column()))
        auc = None if excess is None else NULL_AUC + excess
    else:
        auc = evidence(row.get(TextAttack(attack).auc_column()))
    true_auc = NULL_AUC if auc is None else auc
    if math.isclose(true_auc, threshold, abs_tol=1e-12):
        return " (no sample decides an AUC at its maximum)"
    needed = texts_to_decide(true_auc, threshold)
    at = _chance(PASS if true_auc < threshold else FAIL) + (
        " when nothing leaks" if auc is None else f" at AUC {auc:.2f}"
    )
    # the difference of two AUCs on the same texts varies more than one AUC: it needs more texts
    least = f"more than {needed:,}" if beside_control and needed is not None else _at_least(needed)
    texts = f"{least} members and as many held-out texts"
    members, held_out = (evidence(row.get(column)) for column in membership_size_columns(row, attack))
    if _beyond(needed, members, held_out):
        return _beyond_corpus(texts, at, _sizes(members, held_out), "text_membership")
    return f" (needs {texts} {at}, this run has {_sizes(members, held_out)})"
