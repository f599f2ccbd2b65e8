"""The release verdict of each audited method: `PASS`, `FAIL` or `INCONCLUSIVE` under a stated threat model.

Each criterion compares a bound of the audit's evidence with a threshold (`release.gate` in the config,
parsed here once, by `Gate.from_config`, for every job that judges or states a verdict):

- `leak_excess`: the excess over their held-out control of the leak measures that declare this criterion
  (`plainsight.evaluation.measures`: the near and any-identifier leaks);
- `text_membership`: the text membership attacks' AUC (`text_evidence.TEXT_MEMBERSHIP_ATTACKS`: the
  nearest synthetic document's cosine and n-gram, and the re-identification attack's rare evidence),
  judged as 0.5 plus its excess over the negative control's AUC where the row has one;
- `unit_linkage`: the excess over its control of unit linkage, generations whose values single out one
  privacy unit of the corpus (the measure that declares it; `plainsight.evaluation.linkage`);
- `verbatim`: the excess of verbatim copying over its control (the measure that declares it);
- `epsilon`: the method's formal guarantee for the corpus as released (`dp_epsilon`, per privacy unit),
  against the canary audit's epsilon lower bound where the run has one (`canary_epsilon`);
- `adapter_membership` (threat model `released_text_and_adapter`, trained methods): the loss attack's AUC
  against the adapter.

The invariant: a criterion passes only when a valid upper bound of its evidence lies at or below its
threshold. An evidence criterion fails when the lower bound lies above the threshold and is inconclusive
otherwise, or when the row has no such evidence (absent, NA, NaN or not a number). The epsilon criterion
passes only on a formal guarantee at or under the threshold that the canary audit did not refute (the
canaries give a lower bound on epsilon, never an upper one), fails when the canaries' lower bound exceeds
the threshold, and is inconclusive otherwise: a method without a formal guarantee never passes it.

The verdict is `FAIL` when a criterion fails, else `INCONCLUSIVE` when one is inconclusive, else `PASS`.
Over several seeds the gate runs per seed and the worst seed wins, so a seed without some evidence
leaves the method INCONCLUSIVE. A PASS states its kind: a formal guarantee the audit did not refute
(the epsilon criterion passed), or empirical evidence only (the gate leaves the epsilon criterion out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from plainsight.audit.evidence import row_rate_unit
from plainsight.audit.evidence_plan import deciding_sample
from plainsight.audit.text_evidence import TEXT_MEMBERSHIP_ATTACKS, text_membership_bounds
from plainsight.evaluation.measures import LeakMeasure, judged_by, leak_measures

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
THREAT_MODELS = {
    "released_text": "the adversary holds the released text and knows the rest of the corpus",
    "released_text_and_adapter": (
        "the adversary holds the released text and the trained adapter, and knows the rest of the corpus"
    ),
}
CRITERIA = ("leak_excess", "text_membership", "unit_linkage", "verbatim", "epsilon")
FORMAL, EMPIRICAL = "formal guarantee, not refuted by the audit", "empirical evidence only"


def known_criteria() -> tuple[str, ...]:
    """The criteria a gate may name: the built-in ones and any a leak measure declares."""
    return tuple(dict.fromkeys([*CRITERIA, *(m.criterion for m in leak_measures() if m.criterion)]))


@dataclass(frozen=True)
class Gate:
    threat_model: str = "released_text"
    leak_excess_max: float = 0.05  # share of generations (paired design) or of distinct values (unpaired)
    text_membership_auc_max: float = 0.6
    verbatim_excess_max: float = 0.05
    unit_linkage_excess_max: float = 0.05  # share of generations (paired design) or of units (unpaired)
    epsilon_max: float = 1.0  # per privacy unit
    adapter_membership_auc_max: float = 0.6
    criteria: tuple[str, ...] = field(default=CRITERIA)
    # Not a privacy criterion: the share of documents a corpus needs to be called fit to release as text
    # (`plainsight.audit.fitness`), stated beside the verdict.
    documents_min: float = 0.8

    def __post_init__(self):
        if self.threat_model not in THREAT_MODELS:
            raise ValueError(
                f"release.gate.threat_model {self.threat_model!r} is not one of {list(THREAT_MODELS)}"
            )
        unknown = set(self.criteria) - set(known_criteria())
        if unknown:
            raise ValueError(
                f"release.gate.criteria: unknown {sorted(unknown)}; known: {list(known_criteria())}"
            )

    @classmethod
    def from_config(cls, gate: Mapping[str, Any]) -> Gate:
        """The one parse of `release.gate`: every job that judges or states a verdict goes through it."""
        return cls(**{**gate, "criteria": tuple(gate.get("criteria", CRITERIA))})

    def threshold(self, key: str) -> float:
        """The threshold of a `release.gate` key, such as a leak measure's `threshold_key`."""
        if not key.endswith("_max") or not hasattr(self, key):
            raise ValueError(f"release.gate has no threshold {key!r}")
        return float(getattr(self, key))


def evidence(value: Any) -> float | None:
    """A piece of evidence as a number; None where there is none (absent, NA, NaN, a string, a flag)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def bounded(low: Any, high: Any, threshold: float, what: str) -> tuple[str, str]:
    """(outcome, reason) of evidence with bounds [low, high] against a maximum."""
    low, high = evidence(low), evidence(high)
    if low is None or high is None:
        return INCONCLUSIVE, f"{what}: no evidence in this run"
    if high <= threshold:
        return PASS, f"{what} <= {high:.2f} (max {threshold:.2f})"
    if low > threshold:
        return FAIL, f"{what} >= {low:.2f} (max {threshold:.2f})"
    return INCONCLUSIVE, f"{what} in [{low:.2f}, {high:.2f}] straddles {threshold:.2f}"


def _worst(outcomes: list[tuple[str, str]]) -> tuple[str, str]:
    for outcome in (FAIL, INCONCLUSIVE, PASS):
        chosen = [reason for result, reason in outcomes if result == outcome]
        if chosen:
            return outcome, ", ".join(chosen)  # "; " separates the criteria
    raise ValueError("no outcomes")


def epsilon_outcome(row: Mapping[str, Any], threshold: float) -> tuple[str, str]:
    """The formal guarantee against the threshold, refuted where the canaries' lower bound exceeds it."""
    formal, audited = evidence(row.get("dp_epsilon")), evidence(row.get("canary_epsilon"))
    if audited is not None and audited > threshold:
        return FAIL, f"the canary audit shows epsilon >= {audited:.2f} per unit (max {threshold:.2f})"
    if formal is None:
        return INCONCLUSIVE, "no formal guarantee: only a differentially private release can pass"
    if formal > threshold:
        return INCONCLUSIVE, f"formal epsilon {formal:.2f} per unit is above the maximum {threshold:.2f}"
    audit = (
        f"not refuted by the canary audit (lower bound {audited:.2f})"
        if audited is not None
        else "no canary audit in this run"
    )
    return PASS, f"formal epsilon {formal:.2f} per unit (max {threshold:.2f}), {audit}"


def _decidable(
    outcome: tuple[str, str], row: Mapping[str, Any], evidence_name: str, threshold: float
) -> tuple[str, str]:
    """An INCONCLUSIVE reason with the sample that would decide it (`evidence_plan.deciding_sample`)."""
    result, reason = outcome
    if result != INCONCLUSIVE:
        return outcome
    return result, reason + deciding_sample(row, evidence_name, threshold)


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


def leak_outcome(row: Mapping[str, Any], gate: Gate, criterion: str) -> tuple[str, str]:
    """A leak criterion: the excess of every measure that declares it, each against its threshold. A
    measure with nothing to match in the corpus (`nothing_to_match`) cannot leak and is left out, unless
    it leaves no measure: then there is no evidence."""
    judged = [m for m in judged_by(criterion) if _matches_something(row, m)] or list(judged_by(criterion))
    return _worst(
        [
            _decidable(
                bounded(
                    row.get(f"leak_{m.name}_excess_low"),
                    row.get(f"leak_{m.name}_excess_high"),
                    gate.threshold(m.threshold_key),
                    leak_label(m, row),
                ),
                row,
                m.name,
                gate.threshold(m.threshold_key),
            )
            for m in judged
        ]
    )


def criterion_outcomes(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, tuple[str, str]]:
    """Each configured criterion's (outcome, reason) for one audit row."""
    judged = {
        # the AUC less the split's own bias where the row has a negative control (`text_evidence`)
        "text_membership": lambda: _worst(
            [
                _decidable(
                    bounded(*bounds[:2], gate.text_membership_auc_max, bounds[2]),
                    row,
                    f"text_mia_auc_{n}",
                    gate.text_membership_auc_max,
                )
                for n, bounds in ((n, text_membership_bounds(row, n)) for n in TEXT_MEMBERSHIP_ATTACKS)
            ]
        ),
        "epsilon": lambda: epsilon_outcome(row, gate.epsilon_max),
    }
    outcomes = {
        name: judged[name]() if name in judged else leak_outcome(row, gate, name) for name in gate.criteria
    }
    if gate.threat_model == "released_text_and_adapter" and trained:
        outcomes["adapter_membership"] = bounded(
            row.get("mia_loss_auc_low"),
            row.get("mia_loss_auc_high"),
            gate.adapter_membership_auc_max,
            "adapter membership AUC (loss)",
        )
    return outcomes


def verdict_kind(outcome: str, gate: Gate) -> str:
    """What a PASS rests on; nothing for the other outcomes."""
    if outcome != PASS:
        return ""
    return FORMAL if "epsilon" in gate.criteria else EMPIRICAL


def verdict(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, str]:
    """The verdict columns of one audit row: `verdict`, `verdict_reasons`, `threat_model` and
    `verdict_kind`."""
    outcomes = criterion_outcomes(row, gate, trained)
    overall, _ = _worst(list(outcomes.values()))
    return {
        "verdict": overall,
        "verdict_reasons": "; ".join(
            f"{name}: {result} ({reason})" for name, (result, reason) in outcomes.items()
        ),
        "threat_model": THREAT_MODELS[gate.threat_model],
        "verdict_kind": verdict_kind(overall, gate),
    }


def seeds_verdict(rows: Sequence[tuple[int, Mapping[str, Any]]], gate: Gate, trained: bool) -> dict[str, str]:
    """The verdict of a method over its seeds' audit rows ((seed, row) pairs): the gate per seed, the worst
    seed wins; its reasons are those of the seeds with the worst outcome (named when there are several),
    and `seed_verdicts` lists every seed's."""
    if not rows:
        raise ValueError("no audit rows to judge")
    judged = [(seed, verdict(row, gate, trained)) for seed, row in rows]
    overall = next(o for o in (FAIL, INCONCLUSIVE, PASS) if any(v["verdict"] == o for _, v in judged))
    worst = [(seed, v) for seed, v in judged if v["verdict"] == overall]
    reasons = (
        worst[0][1]["verdict_reasons"]
        if len(judged) == 1
        else " | ".join(f"seed {seed}: {v['verdict_reasons']}" for seed, v in worst)
    )
    return {
        "verdict": overall,
        "verdict_reasons": reasons,
        "threat_model": THREAT_MODELS[gate.threat_model],
        "verdict_kind": verdict_kind(overall, gate),
        "seed_verdicts": ", ".join(f"{seed}: {v['verdict']}" for seed, v in judged),
    }
