"""The samples that decide a release criterion, read off the bounds the audit itself computes
(`plainsight.audit.evidence`, `plainsight.audit.epsilon`): the smallest at which it can PASS when nothing
leaks, the smallest at which it FAILs at a stated effect, and, for a row the gate leaves INCONCLUSIVE,
the sample at which its own observed rates would decide (`leak_deciding_sample`, `auc_deciding_sample`).

- Leak criteria, paired design (in-context methods): the excess bounds of `evidence.paired_excess`,
  CP_hi(b of n) - CP_lo(c of n) and CP_lo(b of n) - CP_hi(c of n), each Clopper-Pearson bound
  one-sided at `CELL_CONFIDENCE`, at the expected discordant counts of n generations: c = r n at a
  control-only rate r (0 unless a run observed one), b = c + excess x n. Nothing leaking is an excess
  of 0; the stated effect is an excess of `LEAK_EFFECT_MULTIPLE` times the threshold. At r = 0 and a
  threshold of 0.05 passing needs 72 generations: 1 - 0.025^(1/n) <= 0.05.
- Leak criteria, unpaired design (trained methods): the same bounds on each side's values, taken as
  independent (Fisher's design, `evidence.unpaired_excess`), at equal sizes per side. Where values
  come with their documents, no side's upper bound falls under what its documents certify without
  hits, 1 - 0.025^(1/documents) (`evidence.document_rate_bounds`): passing needs that many member
  documents as well. Values that cluster within documents need more.
- Membership AUCs: the AUC's bounds at the Mann-Whitney statistic's null standard error, one-sided at
  `evidence.AUC_ALPHA` (as `evidence.detectable_auc`), with as many members as held-out texts
  (`roc.balanced_sets`). The audit's bootstrap interval is close to it at an AUC of 0.5 and narrower
  under an effect, so the FAIL size errs towards more texts. Where the gate judges an AUC beside its
  negative control (`text_evidence`), the difference of two AUCs on the same texts varies more: these
  sizes are the least it needs.
- Epsilon: the canaries can refute a formal guarantee: with every one of r guesses right, the one-run
  bound (`epsilon.one_run_max_epsilon`) is what a perfect attack shows; `canaries_to_refute` gives the
  fewest single-insertion canaries whose guesses could show more than a threshold. At delta 0 that bound
  is logit(gamma^(1/r)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import logit
from scipy.stats import norm

from plainsight.audit.canary_table import guesses_per_side
from plainsight.audit.epsilon import clopper_pearson, one_run_max_epsilon
from plainsight.audit.evidence import AUC_ALPHA, CELL_CONFIDENCE, FISHER, document_rate_bounds
from plainsight.audit.outcomes import evidence
from plainsight.audit.text_evidence import TextAttack, has_negative_control, membership_size_columns

LEAK_EFFECT_MULTIPLE = 3  # the stated leak effect: an excess three times the threshold
NULL_AUC = 0.5
AUC_EFFECT = 0.75  # the stated membership effect
LARGEST_SAMPLE = 10**8  # beyond it a sample counts as unreachable
LARGEST_GUESSES_PER_SIDE = 10**4


# --- searching the smallest sample ------------------------------------------------------------------


def smallest_sample(holds: Callable[[int], bool], low: int = 1) -> int | None:
    """The smallest n >= `low` at which `holds`, for a condition that stays true once it holds (every
    bound here narrows as the sample grows): doubling, then bisection. None beyond LARGEST_SAMPLE."""
    high = low
    while not holds(high):
        if high >= LARGEST_SAMPLE:
            return None
        low, high = high + 1, min(2 * high, LARGEST_SAMPLE)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle + 1, high)
    return high


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


@lru_cache(maxsize=1024)  # the gate asks again for every inconclusive row
def sample_to_decide(excess: float, threshold: float, control_rate: float = 0.0) -> int | None:
    """The fewest generations (paired; `control_rate` the control-only rate) or values per side
    (unpaired) at which an observed `excess` over `control_rate` decides the criterion: its upper bound
    at or under `threshold` (PASS) when the excess is under it, its lower bound above (FAIL) when the
    excess is above. None for an excess at the threshold, or rates outside [0, 1]."""
    control_rate = max(control_rate, 0.0)
    member_rate = max(control_rate + excess, 0.0)
    if member_rate > 1 or control_rate > 1 or math.isclose(excess, threshold, abs_tol=1e-12):
        return None
    if excess < threshold:
        return smallest_sample(lambda n: excess_bounds(member_rate * n, control_rate * n, n)[1] <= threshold)
    return smallest_sample(lambda n: excess_bounds(member_rate * n, control_rate * n, n)[0] > threshold)


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
    sqrt((n1 + n0 + 1) / (12 n1 n0)), one-sided at AUC_ALPHA: the error and level of
    `evidence.detectable_auc`."""
    half_width = norm.ppf(1 - AUC_ALPHA) * math.sqrt(
        (members + non_members + 1) / (12 * members * non_members)
    )
    return auc - half_width, auc + half_width


@lru_cache(maxsize=1024)  # the gate asks again for every inconclusive row
def texts_to_decide(auc: float, threshold: float) -> int | None:
    """The fewest members (and as many held-out texts) at which an observed `auc` decides the
    criterion: upper bound at or under `threshold` under it, lower bound above it over it."""
    if math.isclose(auc, threshold, abs_tol=1e-12):
        return None
    if auc < threshold:
        return smallest_sample(lambda n: auc_bounds(auc, n, n)[1] <= threshold)
    return smallest_sample(lambda n: auc_bounds(auc, n, n)[0] > threshold)


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


# --- what would decide an INCONCLUSIVE criterion ----------------------------------------------------


def _sizes(*sizes: float | None) -> str:
    if all(size is None for size in sizes):
        return "none"
    return " and ".join(f"{int(size):,}" if size is not None else "none" for size in sizes)


def leak_deciding_sample(row: Mapping[str, Any], measure: str, threshold: float) -> str:
    """What would decide a leak measure's INCONCLUSIVE excess, in parentheses to append to its reason: the
    sample at which the row's own observed excess and control-only rate (an excess of 0 and no control
    hit where it has none) would pass or fail at `threshold`, and the sample it has. It never holds "; ",
    which separates criteria."""
    observed = evidence(row.get(f"leak_{measure}_excess"))
    rate = evidence(row.get(f"leak_{measure}_control_rate")) or 0.0
    excess = 0.0 if observed is None else observed
    needed = sample_to_decide(excess, threshold, rate)
    if needed is None:
        return " (no sample decides an excess at its maximum)"
    at = "when nothing leaks" if observed is None else f"at excess {excess:.2f} and control rate {rate:.2f}"
    members, controls = (evidence(row.get(f"leak_{measure}_{side}")) for side in ("members", "controls"))
    if row.get("leak_design") == "paired":
        return f" (needs >= {needed:,} generations to decide {at}, this run has {_sizes(members)})"
    documents = documents_to_pass(threshold)
    from_documents = (
        f" from >= {documents:,} documents"
        if excess < threshold and row.get(f"leak_{measure}_inference") != FISHER and documents
        else ""
    )
    return (
        f" (needs >= {needed:,} independent values per side{from_documents} to decide {at}, "
        f"this run has {_sizes(members, controls)})"
    )


def auc_deciding_sample(row: Mapping[str, Any], attack: str, threshold: float) -> str:
    """What would decide a text attack's INCONCLUSIVE AUC, as `leak_deciding_sample` says it, at the row's
    AUC (0.5 where it has none)."""
    beside_control = has_negative_control(row, attack)
    if beside_control:  # the gate judges 0.5 plus the excess over the negative control
        excess = evidence(row.get(TextAttack(attack).excess_column()))
        auc = None if excess is None else NULL_AUC + excess
    else:
        auc = evidence(row.get(TextAttack(attack).auc_column()))
    needed = texts_to_decide(NULL_AUC if auc is None else auc, threshold)
    if needed is None:
        return " (no sample decides an AUC at its maximum)"
    at = "when nothing leaks" if auc is None else f"at AUC {auc:.2f}"
    # the difference of two AUCs on the same texts varies more than one AUC: it needs more texts
    least = f"more than {needed:,}" if beside_control else f">= {needed:,}"
    members, held_out = (evidence(row.get(column)) for column in membership_size_columns(row, attack))
    return (
        f" (needs {least} members and as many held-out texts to decide {at}, "
        f"this run has {_sizes(members, held_out)})"
    )
