"""The release criteria, each declared once: its name, the `release.gate` keys of its thresholds, how its
bounds are judged, how its evidence is planned, which measures feed it and whether its evidence stays
evidence on a corpus that a release filter touched. The gate (`plainsight.audit.gate`) and the evidence
plan (`plainsight.audit.evidence_plan`) iterate over `REGISTRY`; `Gate` is the one parse of
`release.gate` for every job that judges, plans or states a verdict.

- `leak_excess`, `unit_linkage`, `verbatim`: the excess over their held-out control of the leak measures
  that declare the criterion (`plainsight.evaluation.measures`), each against its measure's threshold.
  A leak criterion is declared by its measures: a new one is a measure with a new `criterion`, its
  threshold key in `Gate` and its line in the docs.
- `text_membership`: the text membership attacks' AUC (`text_evidence.TEXT_ATTACKS`), judged as 0.5
  plus its excess over the negative control's AUC where the row has one.
- `epsilon`: the method's formal guarantee for the corpus as released (`dp_epsilon` per privacy unit,
  `dp_delta`, `dp_unit`), refuted where the canary audit's lower bound (`canary_epsilon`) exceeds the
  claim or the threshold, whichever is lower.
- `adapter_membership` (threat model `released_text_and_adapter`, trained methods): the loss attack's
  AUC against the adapter.

The invariant: a criterion passes only when a valid upper bound of its evidence lies at or below its
threshold (`plainsight.audit.outcomes.bounded`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from plainsight.audit.canary_attacks import ATTACKS
from plainsight.audit.canary_table import family_confidence, guesses_per_side
from plainsight.audit.evidence import row_rate_unit
from plainsight.audit.outcomes import (
    BY_CONSTRUCTION,
    FAIL,
    INCONCLUSIVE,
    PASS,
    Outcome,
    bounded,
    evidence,
    worst,
)
from plainsight.audit.sample_sizes import (
    AUC_EFFECT,
    DECIDING_PROBABILITY,
    NULL_AUC,
    PAIRED,
    UNPAIRED,
    auc_deciding_sample,
    canaries_to_refute,
    documents_to_pass,
    guarantee_deciding,
    leak_deciding_sample,
    leak_effect,
    sample_to_decide,
    texts_to_decide,
)
from plainsight.audit.text_evidence import TEXT_ATTACKS, text_membership_bounds
from plainsight.evaluation.measures import LeakMeasure, judged_by, leak_measures

THREAT_MODELS = {
    "released_text": "the adversary holds the released text and knows the rest of the corpus",
    "released_text_and_adapter": (
        "the adversary holds the released text and the trained adapter, and knows the rest of the corpus"
    ),
}
DEFAULT_CRITERIA = ("leak_excess", "text_membership", "unit_linkage", "verbatim", "epsilon")
# What a PASS may rest on: `formal_guarantee` (the default) passes only a release a formal guarantee
# covers; `empirical_evidence` lets the empirical criteria alone pass a method without one (a formal
# claim, where a method states one, is still judged and can be refuted).
POLICIES = ("formal_guarantee", "empirical_evidence")
# What a formal guarantee must protect to cover a release: one privacy unit (the docs' `unit_id`, with
# all its documents). A guarantee per training sequence or per segment lets a unit with several of them
# leak more than its epsilon.
PRIVACY_UNITS = ("unit", "segment", "sequence")


@dataclass(frozen=True)
class Gate:
    """`release.gate`: the threat model, the criteria a verdict needs and their thresholds."""

    threat_model: str = "released_text"
    leak_excess_max: float = 0.05  # share of generations (paired design) or of distinct values (unpaired)
    text_membership_auc_max: float = 0.6
    verbatim_excess_max: float = 0.05
    unit_linkage_excess_max: float = 0.05  # share of generations (paired design) or of units (unpaired)
    epsilon_max: float = 1.0  # per privacy unit
    # A guarantee's delta times the release's privacy units: the chance, at most, that the mechanism's
    # failure event exposes some unit. 0.1 admits the default delta min(1e-5, 1 / (10 N)) and refuses a
    # delta near 1 / N, at which some unit is likely exposed whatever epsilon says.
    delta_units_max: float = 0.1
    privacy_unit: str = "unit"  # what the release protects; a guarantee over another unit never passes
    policy: str = "formal_guarantee"
    adapter_membership_auc_max: float = 0.6
    criteria: tuple[str, ...] = field(default=DEFAULT_CRITERIA)
    # Not a privacy criterion: the share of documents a corpus needs to be called fit to release as text
    # (`plainsight.audit.fitness`), stated beside the verdict.
    documents_min: float = 0.8

    def __post_init__(self):
        if self.threat_model not in THREAT_MODELS:
            raise ValueError(
                f"release.gate.threat_model {self.threat_model!r} is not one of {list(THREAT_MODELS)}"
            )
        if self.policy not in POLICIES:
            raise ValueError(f"release.gate.policy {self.policy!r} is not one of {list(POLICIES)}")
        if self.privacy_unit not in PRIVACY_UNITS:
            raise ValueError(
                f"release.gate.privacy_unit {self.privacy_unit!r} is not one of {list(PRIVACY_UNITS)}"
            )
        unknown = set(self.criteria) - set(configurable_criteria())
        if unknown:
            raise ValueError(
                f"release.gate.criteria: unknown {sorted(unknown)}; known: {list(configurable_criteria())}"
            )

    @classmethod
    def from_config(cls, gate: Mapping[str, Any]) -> Gate:
        """The one parse of `release.gate`: every job that judges or states a verdict goes through it."""
        return cls(**{**gate, "criteria": tuple(gate.get("criteria", DEFAULT_CRITERIA))})

    def threshold(self, key: str) -> float:
        """The threshold of a `release.gate` key, such as a leak measure's `threshold_key`."""
        if not key.endswith("_max") or not hasattr(self, key):
            raise ValueError(f"release.gate has no threshold {key!r}")
        return float(getattr(self, key))

    def requires_formal_guarantee(self) -> bool:
        return "epsilon" in self.criteria and self.policy == "formal_guarantee"


# --- planning -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CriterionPlan:
    """One criterion's planned sample against what deciding it needs."""

    criterion: str
    design: str  # whose sample: in-context (paired), trained (unpaired), all methods
    unit: str
    planned: str  # the config's sample, in words ("-" where the config does not fix it)
    to_pass: str  # what a PASS needs when nothing leaks
    to_fail: str  # what a FAIL needs at the stated effect


@dataclass(frozen=True)
class CanaryPlan:
    """The canary audit as the plan reads it (`audit.canaries`)."""

    single: int
    guesses: float  # the share of candidates guessed on
    in_verdict: bool
    delta: float  # the delta its bounds are stated at


@dataclass(frozen=True)
class PlannedRun:
    """What a config's audited run gives each criterion (`evidence_plan.planned_run` builds it)."""

    generations: int  # per method and seed
    texts: str  # members and held-out texts each, in words ("-": not planned)
    trained: str  # trained methods' members, in words
    corpus_texts: int | None  # the most members and held-out texts each the corpus gives (None: unplanned)
    canaries: CanaryPlan
    formal_epsilons: Mapping[str, float]  # audited methods whose formal epsilon bounds their release


def _count(needed: int | None, unit: str) -> str:
    return f">= {needed:,} {unit}" if needed is not None else "no sample"


def _chance(outcome: str, at: str) -> str:
    return f" to {outcome} with probability {DECIDING_PROBABILITY:g} at {at}"


def _leak_plan(criterion: str, gate: Gate, run: PlannedRun) -> list[CriterionPlan]:
    """The paired and unpaired rows of a leak criterion at the strictest threshold of its measures: the
    samples at which the gate decides with probability DECIDING_PROBABILITY, at no control-only hit."""
    threshold = min(gate.threshold(m.threshold_key) for m in judged_by(criterion))
    effect = leak_effect(threshold)
    to_pass, to_fail = _chance(PASS, "excess 0.00"), _chance(FAIL, f"excess {effect:.2f}")
    documents = documents_to_pass(threshold)
    return [
        CriterionPlan(
            criterion,
            "in-context (paired)",
            "generations per method and seed",
            f"{run.generations:,}",
            _count(sample_to_decide(0.0, threshold, 0.0, PAIRED), "generations") + to_pass,
            _count(sample_to_decide(effect, threshold, 0.0, PAIRED), "generations") + to_fail,
        ),
        CriterionPlan(
            criterion,
            "trained (unpaired)",
            "member documents, values per side",
            run.trained,
            _count(documents, "documents")
            + f", {_count(sample_to_decide(0.0, threshold, 0.0, UNPAIRED), 'values per side')}"
            + to_pass,
            _count(sample_to_decide(effect, threshold, 0.0, UNPAIRED), "values per side") + to_fail,
        ),
    ]


def _texts_needed(auc: float, threshold: float, outcome: str, corpus_texts: int | None) -> str:
    """The texts each side that decide an AUC, and where the corpus holds fewer, that it cannot: members
    are its training segments, so no run on it has more."""
    needed = texts_to_decide(auc, threshold)
    beyond = corpus_texts is not None and (needed is None or corpus_texts < needed)
    return (
        _count(needed, "each")
        + _chance(outcome, f"AUC {auc:.2f}")
        + (f", cannot be decided on this corpus: it has {corpus_texts:,}" if beyond else "")
    )


def _auc_plan(criterion: str, threshold: float, run: PlannedRun) -> list[CriterionPlan]:
    return [
        CriterionPlan(
            criterion,
            "all methods",
            "members and held-out texts, each",
            run.texts,
            _texts_needed(NULL_AUC, threshold, PASS, run.corpus_texts),
            _texts_needed(AUC_EFFECT, threshold, FAIL, run.corpus_texts),
        )
    ]


def _epsilon_plan(gate: Gate, run: PlannedRun) -> list[CriterionPlan]:
    threshold, canaries = gate.epsilon_max, run.canaries
    need = canaries_to_refute(threshold, canaries.delta, canaries.guesses, family_confidence(len(ATTACKS)))
    passing = [name for name, epsilon in run.formal_epsilons.items() if epsilon <= threshold]
    configured = ", ".join(f"{name} {epsilon:g}" for name, epsilon in run.formal_epsilons.items()) or "none"
    return [
        CriterionPlan(
            "epsilon",
            "all methods",
            "single-insertion canaries (guesses)",
            f"{canaries.single:,} ({2 * guesses_per_side(canaries.single, canaries.guesses)})"
            + ("" if canaries.in_verdict else ", not in the verdict"),
            f"a formal epsilon <= {threshold:g} ("
            + (f"{', '.join(passing)} can pass" if passing else "none can pass")
            + f", configured: {configured})",
            f"{_count(need.candidates if need else None, 'canaries')}"
            + (f" ({need.guesses} guesses) to FAIL if every guess is right" if need else ""),
        )
    ]


# --- judging --------------------------------------------------------------------------------------


def _inconclusive_with(outcome: Outcome, deciding: Callable[[], str]) -> Outcome:
    """An INCONCLUSIVE reason with the sample that would decide it appended."""
    result, reason = outcome
    return (result, reason + deciding()) if result == INCONCLUSIVE else outcome


def leak_label(measure: LeakMeasure, row: Mapping[str, Any]) -> str:
    """How a reason names a measure's excess: its label and what its rates are shares of (generations, or
    distinct values, segments, units: `evidence.rate_unit`) where the row says its design."""
    unit = row_rate_unit(measure, row)
    return measure.evidence_label if unit is None else f"{measure.evidence_label} (share of {unit})"


def nothing_to_match(measure: str) -> dict[str, int]:
    """The audit columns of a measure whose items neither side has (a corpus without code values, for the
    code-part leak of a trained method): no members, no controls."""
    return {f"leak_{measure}_members": 0, f"leak_{measure}_controls": 0}


def _matches_something(row: Mapping[str, Any], measure: LeakMeasure) -> bool:
    sides = (row.get(f"leak_{measure.name}_{side}") for side in ("members", "controls"))
    return any(count != 0 for count in sides)


def _judge_leak(criterion: str, row: Mapping[str, Any], gate: Gate) -> Outcome:
    """A leak criterion: the excess of every measure that declares it, each against its threshold. A
    measure with nothing to match in the corpus (`nothing_to_match`) cannot leak and is left out, unless
    it leaves no measure: then there is no evidence."""
    measures = judged_by(criterion)
    judged = []
    for m in [m for m in measures if _matches_something(row, m)] or list(measures):
        threshold = gate.threshold(m.threshold_key)
        outcome = bounded(
            row.get(f"leak_{m.name}_excess_low"),
            row.get(f"leak_{m.name}_excess_high"),
            threshold,
            leak_label(m, row),
        )
        judged.append(
            _inconclusive_with(outcome, lambda m=m, t=threshold: leak_deciding_sample(row, m.name, t))
        )
    return worst(judged)


def _judge_text_membership(row: Mapping[str, Any], gate: Gate) -> Outcome:
    """Every text attack's AUC, less the split's own bias where the row has a negative control."""
    threshold = gate.text_membership_auc_max
    judged = []
    for attack in TEXT_ATTACKS:
        low, high, what = text_membership_bounds(row, attack.name)
        outcome = bounded(low, high, threshold, what)
        judged.append(
            _inconclusive_with(outcome, lambda a=attack: auc_deciding_sample(row, a.name, threshold))
        )
    return worst(judged)


def _judge_epsilon(row: Mapping[str, Any], gate: Gate) -> Outcome:
    """The formal guarantee the row holds, judged as claimed: refuted where the canaries' lower bound
    exceeds the claim or the threshold, whichever is lower; passing only at or under the threshold, with
    a delta small for the release's units and over the release's privacy unit."""
    threshold = gate.epsilon_max
    formal, audited = evidence(row.get("dp_epsilon")), evidence(row.get("canary_epsilon"))
    limit = threshold if formal is None else min(formal, threshold)
    if audited is not None and audited > limit:
        claimed = f", above the claimed {formal:.2f}" if formal is not None and formal < threshold else ""
        return (
            FAIL,
            f"the canary audit shows epsilon >= {audited:.2f} per unit{claimed} (max {threshold:.2f})",
        )
    if formal is None:
        return INCONCLUSIVE, "no formal guarantee: only a differentially private release can pass"
    if formal > threshold:
        return INCONCLUSIVE, f"formal epsilon {formal:.2f} per unit is above the maximum {threshold:.2f}"
    gap = _guarantee_gap(row, gate)
    if gap:
        return INCONCLUSIVE, f"formal epsilon {formal:.2f} {gap}"
    audit = (
        f"not refuted by the canary audit (lower bound {audited:.2f})"
        if audited is not None
        else "no canary audit in this run"
    )
    return PASS, f"formal epsilon {formal:.2f} per unit (max {threshold:.2f}), {audit}"


def _guarantee_gap(row: Mapping[str, Any], gate: Gate) -> str:
    """What keeps a guarantee under the threshold from covering the release ("" where nothing does): a
    privacy unit other than the release's, or a delta too large for the release's units."""
    unit = row.get("dp_unit")
    if not isinstance(unit, str) or unit != gate.privacy_unit:
        stated = f"the privacy unit {unit!r}" if isinstance(unit, str) else "no privacy unit"
        return f"states {stated}; the release protects one {gate.privacy_unit!r}"
    delta, units = evidence(row.get("dp_delta")), evidence(row.get("dp_units"))
    if delta is None or units is None or units < 1:
        return "states no delta and privacy units to judge its delta by"
    if delta * units > gate.delta_units_max:
        return (
            f"has delta {delta:.2g} over {int(units):,} units: delta x units {delta * units:.2g} is above "
            f"{gate.delta_units_max:g}"
        )
    return ""


def _judge_adapter_membership(row: Mapping[str, Any], gate: Gate) -> Outcome:
    return bounded(
        row.get("mia_loss_auc_low"),
        row.get("mia_loss_auc_high"),
        gate.adapter_membership_auc_max,
        "adapter membership AUC (loss)",
    )


# --- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    name: str
    threshold_keys: tuple[str, ...]  # the `release.gate` keys it compares with
    judge: Callable[[Mapping[str, Any], Gate], Outcome]  # one audit row's (outcome, reason)
    plan: Callable[[Gate, PlannedRun], list[CriterionPlan]]  # what deciding it needs under a config
    evidence: tuple[str, ...]  # the measures or attacks that feed it
    # Whether its evidence is still evidence on a corpus a private release filter touched: a filter that
    # drops generations by a detector makes every criterion judged by that detector hold by construction.
    filter_independent: bool
    # Chosen by the gate's threat model rather than by `release.gate.criteria`, and judged for trained
    # methods only (the adapter attack).
    adapter_only: bool = False


def _leak_criterion(name: str) -> Criterion:
    measures = judged_by(name)
    return Criterion(
        name,
        tuple(dict.fromkeys(m.threshold_key for m in measures)),
        lambda row, gate: _judge_leak(name, row, gate),
        lambda gate, run: _leak_plan(name, gate, run),
        tuple(m.name for m in measures),
        # the release filters drop by the leak detectors; verbatim copying is no detector of theirs
        filter_independent=name == "verbatim",
    )


REGISTRY: dict[str, Criterion] = {
    c.name: c
    for c in (
        *(
            _leak_criterion(name)
            for name in dict.fromkeys(m.criterion for m in leak_measures() if m.criterion)
        ),
        Criterion(
            "text_membership",
            ("text_membership_auc_max",),
            _judge_text_membership,
            lambda gate, run: _auc_plan("text_membership", gate.text_membership_auc_max, run),
            tuple(a.name for a in TEXT_ATTACKS),
            filter_independent=True,
        ),
        Criterion(
            "epsilon",
            ("epsilon_max", "delta_units_max"),
            lambda row, gate: _inconclusive_with(
                _judge_epsilon(row, gate),
                lambda: guarantee_deciding(gate.epsilon_max, gate.privacy_unit, gate.delta_units_max),
            ),
            _epsilon_plan,
            ("dp_epsilon", "canary_epsilon"),
            filter_independent=False,  # a filter reads private data after the mechanism
        ),
        Criterion(
            "adapter_membership",
            ("adapter_membership_auc_max",),
            _judge_adapter_membership,
            lambda gate, run: _auc_plan("adapter_membership", gate.adapter_membership_auc_max, run),
            ("mia_loss_auc",),
            filter_independent=True,
            adapter_only=True,
        ),
    )
}


def configurable_criteria() -> tuple[str, ...]:
    """The criteria `release.gate.criteria` may name."""
    return tuple(name for name, c in REGISTRY.items() if not c.adapter_only)


def gate_criteria(gate: Gate) -> list[Criterion]:
    """The criteria a gate judges, in its order: the configured ones, then its threat model's own."""
    adapter = [
        c for c in REGISTRY.values() if c.adapter_only and gate.threat_model == "released_text_and_adapter"
    ]
    return [REGISTRY[name] for name in gate.criteria] + adapter


RELEASE_FILTER = "release_filter"  # an audit row's column: the drop rule that chose its texts, if any


def release_filter(row: Mapping[str, Any]) -> str | None:
    """The private filter that chose a row's texts (`release.drop`'s rule); None for a corpus as written."""
    rule = row.get(RELEASE_FILTER)
    return rule if isinstance(rule, str) and rule != "none" else None


def _judge_filtered(criterion: Criterion, row: Mapping[str, Any], gate: Gate, rule: str) -> Outcome:
    """A criterion on texts a private filter chose: judged as usual where its evidence is independent of
    the filter; satisfied by construction where the filter's detector is its own; and no formal
    guarantee covers them, since the filter read private data after the mechanism."""
    if criterion.filter_independent:
        return criterion.judge(row, gate)
    if criterion.name == "epsilon":
        return INCONCLUSIVE, (
            f"no formal guarantee: the release filter ({rule}) read private data after the mechanism, "
            "so no guarantee covers the filtered texts"
        )
    return BY_CONSTRUCTION, (
        f"the release filter ({rule}) dropped what this criterion's detectors find: it holds by "
        "construction and is no evidence"
    )


def criterion_outcomes(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, Outcome]:
    """Each criterion's (outcome, reason) for one audit row; on texts a private release filter chose
    (`release_filter`), as `_judge_filtered` judges them."""
    rule = release_filter(row)
    return {
        c.name: c.judge(row, gate) if rule is None else _judge_filtered(c, row, gate, rule)
        for c in gate_criteria(gate)
        if trained or not c.adapter_only
    }
