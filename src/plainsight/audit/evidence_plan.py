"""The evidence plan: for the configured gate, the smallest sample at which each criterion can PASS when
nothing leaks, and the smallest at which it FAILs at a stated effect, read off the bounds the audit
itself computes (`plainsight.audit.evidence`, `plainsight.audit.epsilon`).

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
- `text_membership` (and `adapter_membership`): the AUC's bounds at the Mann-Whitney statistic's null
  standard error, one-sided at `evidence.AUC_ALPHA` (as `evidence.detectable_auc`), with as many
  members as held-out texts (`roc.balanced_sets`). The audit's bootstrap interval is close to it at an
  AUC of 0.5 and narrower under an effect, so the FAIL size errs towards more texts. Where the gate
  judges an AUC beside its negative control (`text_evidence`), the difference of two AUCs on the same
  texts varies more: these sizes are the least it needs.
- `epsilon`: only a formal guarantee at or under the threshold passes. The canaries can refute it:
  with every one of r guesses right, the one-run bound (`epsilon.one_run_max_epsilon`) is what a
  perfect attack shows; the plan gives the fewest single-insertion canaries whose guesses could show
  more than the threshold, at the audit's delta and the confidence of a method's three attacks
  together (`canary_table.family_confidence`). At delta 0 that bound is logit(gamma^(1/r)).

`deciding_sample` turns a row's own sizes and observed rates into the sample an INCONCLUSIVE reason
names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from numbers import Real
from typing import Any, Protocol

import numpy as np
from scipy.special import logit
from scipy.stats import norm

from plainsight.audit.canary_attacks import ATTACKS
from plainsight.audit.canary_table import family_confidence, guesses_per_side
from plainsight.audit.epsilon import clopper_pearson, one_run_max_epsilon
from plainsight.audit.evidence import AUC_ALPHA, CELL_CONFIDENCE, FISHER, document_rate_bounds
from plainsight.audit.text_evidence import has_negative_control, membership_size_columns
from plainsight.evaluation.measures import judged_by
from plainsight.methods.registry import METHODS, Method, audited_private_selection, method


class GateThresholds(Protocol):
    """What the plan reads of `plainsight.audit.gate.Gate` (which imports this module)."""

    criteria: tuple[str, ...]
    threat_model: str
    text_membership_auc_max: float
    epsilon_max: float
    adapter_membership_auc_max: float

    def threshold(self, key: str) -> float: ...


LEAK_EFFECT_MULTIPLE = 3  # the stated leak effect: an excess three times the threshold
NULL_AUC = 0.5
AUC_EFFECT = 0.75  # the stated membership effect
LARGEST_SAMPLE = 10**8  # beyond it a sample counts as unreachable
LARGEST_GUESSES_PER_SIDE = 10**4
DEFAULT_DELTA = 1e-5  # the largest delta the audit defaults to (`training.dp.default_delta`)


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


# --- the plan of a config ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CriterionPlan:
    """One criterion's planned sample against what deciding it needs."""

    criterion: str
    design: str  # whose sample: in-context (paired), trained (unpaired), all methods
    unit: str
    planned: str  # the config's sample, in words ("-" where the config does not fix it)
    to_pass: str  # what a PASS needs when nothing leaks
    to_fail: str  # what a FAIL needs at the stated effect


def _count(needed: int | None, unit: str) -> str:
    return f">= {needed:,} {unit}" if needed is not None else "no sample"


def leak_plans(criterion: str, threshold: float, generations: int, trained: str) -> list[CriterionPlan]:
    """The paired and unpaired rows of a leak criterion at `threshold`."""
    effect = leak_effect(threshold)
    at_effect = f" (excess {effect:.2f})"
    documents = documents_to_pass(threshold)
    values_to_pass, values_to_fail = sample_to_decide(0.0, threshold), sample_to_decide(effect, threshold)
    return [
        CriterionPlan(
            criterion,
            "in-context (paired)",
            "generations per method and seed",
            f"{generations:,}",
            _count(values_to_pass, "generations"),
            _count(values_to_fail, "generations") + at_effect,
        ),
        CriterionPlan(
            criterion,
            "trained (unpaired)",
            "member documents, values per side",
            trained,
            _count(documents, "documents") + f", {_count(values_to_pass, 'values per side')}",
            _count(values_to_fail, "values per side") + at_effect,
        ),
    ]


def auc_plan(criterion: str, threshold: float, planned: str) -> CriterionPlan:
    return CriterionPlan(
        criterion,
        "all methods",
        "members and held-out texts, each",
        planned,
        _count(texts_to_decide(NULL_AUC, threshold), "each") + f" (AUC {NULL_AUC:.2f})",
        _count(texts_to_decide(AUC_EFFECT, threshold), "each") + f" (AUC {AUC_EFFECT:.2f})",
    )


def _guarantees_release(m: Method) -> bool:
    """DP training's accountant and a private selection of whole texts bound the released corpus; a
    selection that rewrites private seeds bounds its seeds, not the release."""
    return m.differentially_private or (m.private_selection and not m.rewrites_seeds)


def formal_epsilons(config: Mapping[str, Any]) -> dict[str, float]:
    """The audited methods whose formal epsilon (their config block's `epsilon`) bounds the release."""
    audited = [*config["methods"], *audited_private_selection(config)]
    return {name: float(config[name]["epsilon"]) for name in audited if _guarantees_release(method(name))}


def audit_delta(config: Mapping[str, Any]) -> float:
    """The delta the canary audit states its bounds at: DP training's configured one, else the largest
    default (`training.dp.default_delta`), which asks the most canaries."""
    trained_dp = next(m.name for m in METHODS.values() if m.differentially_private)
    return config[trained_dp].get("delta") or DEFAULT_DELTA


def epsilon_plan(threshold: float, config: Mapping[str, Any]) -> CriterionPlan:
    canaries = config["audit"]["canaries"]
    share, delta = float(canaries["guesses"]), audit_delta(config)
    need = canaries_to_refute(threshold, delta, share, family_confidence(len(ATTACKS)))
    formal = formal_epsilons(config)
    passing = [name for name, epsilon in formal.items() if epsilon <= threshold]
    configured = ", ".join(f"{name} {epsilon:g}" for name, epsilon in formal.items()) or "none"
    return CriterionPlan(
        "epsilon",
        "all methods",
        "single-insertion canaries (guesses)",
        f"{canaries['single']:,} ({2 * guesses_per_side(canaries['single'], share)})"
        + ("" if canaries.get("in_verdict") else ", not in the verdict"),
        f"a formal epsilon <= {threshold:g} ("
        + (f"{', '.join(passing)} can pass" if passing else "none can pass")
        + f", configured: {configured})",
        f"{_count(need.candidates if need else None, 'canaries')}"
        + (f" ({need.guesses} guesses, all right)" if need else ""),
    )


def evidence_plan(
    gate: GateThresholds, config: Mapping[str, Any], segments: Callable[[str, str], int] | None = None
) -> list[CriterionPlan]:
    """Each configured criterion's plan for `config`'s audited run; `segments(dataset, split)` counts a
    split's segments (the cost plan's counter), without which texts are not planned."""
    dataset = config["audit"]["datasets"][0]
    ranges = len(config["datasets"][dataset]["segments"])
    generations = config["generation"]["generations_per_segment"] * ranges
    texts = trained = "-"
    train, held_out = (
        sum(_split_or_none(segments, dataset, split) for split in splits) if segments else 0
        for splits in (("train",), ("dev", "test"))
    )
    if train and held_out:
        # members are at most the training segments, each side of the balanced sets at most the smaller
        texts, trained = f"<= {min(train, held_out):,}", f"<= {train:,} training segments"
    plans: list[CriterionPlan] = []
    for criterion in gate.criteria:
        if criterion == "text_membership":
            plans.append(auc_plan(criterion, gate.text_membership_auc_max, texts))
        elif criterion == "epsilon":
            plans.append(epsilon_plan(gate.epsilon_max, config))
        else:
            # the strictest threshold among the measures the criterion judges
            threshold = min(gate.threshold(m.threshold_key) for m in judged_by(criterion))
            plans += leak_plans(criterion, threshold, generations, trained)
    if gate.threat_model == "released_text_and_adapter":
        plans.append(auc_plan("adapter_membership", gate.adapter_membership_auc_max, texts))
    return plans


def _split_or_none(segments: Callable[[str, str], int], dataset: str, split: str) -> int:
    """A split's segments; 0 where neither the built codes nor `resources.planned_segments` have it (the
    plan then leaves the texts unplanned rather than stopping)."""
    try:
        return segments(dataset, split)
    except ValueError:
        return 0


# --- what would decide an INCONCLUSIVE criterion ----------------------------------------------------


def _observed(row: Mapping[str, Any], key: str) -> float | None:
    """A row's number; None where it has none (absent, NA, NaN, a string, a flag), as the gate reads it."""
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(float(value)):
        return None
    return float(value)


def _sizes(*sizes: float | None) -> str:
    if all(size is None for size in sizes):
        return "none"
    return " and ".join(f"{int(size):,}" if size is not None else "none" for size in sizes)


def _leak_decision(row: Mapping[str, Any], measure: str, threshold: float) -> str:
    observed = _observed(row, f"leak_{measure}_excess")
    rate = _observed(row, f"leak_{measure}_control_rate") or 0.0
    excess = 0.0 if observed is None else observed
    needed = sample_to_decide(excess, threshold, rate)
    if needed is None:
        return " (no sample decides an excess at its maximum)"
    at = "when nothing leaks" if observed is None else f"at excess {excess:.2f} and control rate {rate:.2f}"
    members, controls = (_observed(row, f"leak_{measure}_{side}") for side in ("members", "controls"))
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


def _auc_decision(row: Mapping[str, Any], attack: str, threshold: float) -> str:
    beside_control = has_negative_control(row, attack)
    if beside_control:  # the gate judges 0.5 plus the excess over the negative control
        excess = _observed(row, f"text_mia_excess_{attack}")
        auc = None if excess is None else NULL_AUC + excess
    else:
        auc = _observed(row, f"text_mia_auc_{attack}")
    needed = texts_to_decide(NULL_AUC if auc is None else auc, threshold)
    if needed is None:
        return " (no sample decides an AUC at its maximum)"
    at = "when nothing leaks" if auc is None else f"at AUC {auc:.2f}"
    # the difference of two AUCs on the same texts varies more than one AUC: it needs more texts
    least = f"more than {needed:,}" if beside_control else f">= {needed:,}"
    members, held_out = (_observed(row, column) for column in membership_size_columns(row, attack))
    return (
        f" (needs {least} members and as many held-out texts to decide {at}, "
        f"this run has {_sizes(members, held_out)})"
    )


def deciding_sample(row: Mapping[str, Any], evidence_name: str, threshold: float) -> str:
    """What would decide an INCONCLUSIVE criterion, in parentheses to append to its reason: the sample at
    which the row's own observed rates (an excess of 0 and no control hit, or an AUC of 0.5, where it has
    none) would pass or fail at `threshold`, and the sample it has. `evidence_name` is a leak measure's
    name or a text attack's (`text_mia_auc_<attack>`). It never holds "; ", which separates criteria."""
    if evidence_name.startswith("text_mia_auc_"):
        return _auc_decision(row, evidence_name.removeprefix("text_mia_auc_"), threshold)
    return _leak_decision(row, evidence_name, threshold)
