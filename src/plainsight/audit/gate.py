"""The release verdict of each audited method: `PASS`, `FAIL` or `INCONCLUSIVE` under a stated threat model.

Each criterion compares a bound of the audit's evidence with a threshold (`release.gate` in the config,
parsed here once, by `Gate.from_config`, for every job that judges or states a verdict):

- `leak_excess`: the excess over their held-out control of the leak measures that declare this criterion
  (`plainsight.evaluation.measures`: the near and any-identifier leaks);
- `text_membership`: the text membership attacks' AUC (nearest synthetic document, cosine and n-gram);
- `verbatim`: the excess of verbatim copying over its control (the measure that declares it);
- `canaries`: the empirical epsilon lower bound of the canary attacks (`results/tables/canaries`);
- `adapter_membership` (threat model `released_text_and_adapter`, trained methods): the loss attack's AUC
  against the adapter.

A criterion passes when the upper bound of its evidence lies at or below the threshold, fails when the
lower bound lies above it, and is inconclusive otherwise or when the run has no such evidence. For the
canaries, whose evidence is a lower bound on epsilon, it fails when that bound exceeds the threshold and
passes only when the canaries could have certified more than the threshold and did not. The verdict is
`FAIL` when a criterion fails, else `INCONCLUSIVE` when one is inconclusive, else `PASS`: a criterion
with no evidence never lets a method pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plainsight.evaluation.measures import judged_by, leak_measures

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
THREAT_MODELS = {
    "released_text": "the adversary holds the released text and knows the rest of the corpus",
    "released_text_and_adapter": (
        "the adversary holds the released text and the trained adapter, and knows the rest of the corpus"
    ),
}
CRITERIA = ("leak_excess", "text_membership", "verbatim", "canaries")


def known_criteria() -> tuple[str, ...]:
    """The criteria a gate may name: the built-in ones and any a leak measure declares."""
    return tuple(dict.fromkeys([*CRITERIA, *(m.criterion for m in leak_measures() if m.criterion)]))


@dataclass(frozen=True)
class Gate:
    threat_model: str = "released_text"
    leak_excess_max: float = 0.05  # share of generations (in-context) or of values (trained)
    text_membership_auc_max: float = 0.6
    verbatim_excess_max: float = 0.05
    canary_epsilon_max: float = 1.0
    adapter_membership_auc_max: float = 0.6
    criteria: tuple[str, ...] = field(default=CRITERIA)

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


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def bounded(low: Any, high: Any, threshold: float, what: str) -> tuple[str, str]:
    """(outcome, reason) of evidence with bounds [low, high] against a maximum."""
    if _missing(low) or _missing(high):
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


def canary_outcome(row: Mapping[str, Any], threshold: float) -> tuple[str, str]:
    bound, certifiable = row.get("canary_epsilon"), row.get("canary_max_certifiable_epsilon")
    if _missing(bound) or _missing(certifiable):
        return INCONCLUSIVE, "canaries: none in this run"
    if bound > threshold:
        return FAIL, f"canary epsilon >= {bound:.2f} (max {threshold:.2f})"
    if certifiable <= threshold:
        return INCONCLUSIVE, f"canaries could certify at most epsilon {certifiable:.2f} (max {threshold:.2f})"
    return PASS, f"canary epsilon bound {bound:.2f} (max {threshold:.2f}, could show {certifiable:.2f})"


def leak_outcome(row: Mapping[str, Any], gate: Gate, criterion: str) -> tuple[str, str]:
    """A leak criterion: the excess of every measure that declares it, each against its threshold."""
    return _worst(
        [
            bounded(
                row.get(f"leak_{m.name}_excess_low"),
                row.get(f"leak_{m.name}_excess_high"),
                gate.threshold(m.threshold_key),
                m.evidence_label,
            )
            for m in judged_by(criterion)
        ]
    )


def criterion_outcomes(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, tuple[str, str]]:
    """Each configured criterion's (outcome, reason) for one audit row."""
    judged = {
        "text_membership": lambda: _worst(
            [
                bounded(
                    row.get(f"text_mia_auc_{n}_low"),
                    row.get(f"text_mia_auc_{n}_high"),
                    gate.text_membership_auc_max,
                    f"text membership AUC ({n})",
                )
                for n in ("cosine", "ngram")
            ]
        ),
        "canaries": lambda: canary_outcome(row, gate.canary_epsilon_max),
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


def verdict(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, str]:
    """The verdict columns of one audit row: `verdict`, `verdict_reasons` and `threat_model`."""
    outcomes = criterion_outcomes(row, gate, trained)
    overall, _ = _worst(list(outcomes.values()))
    return {
        "verdict": overall,
        "verdict_reasons": "; ".join(
            f"{name}: {result} ({reason})" for name, (result, reason) in outcomes.items()
        ),
        "threat_model": THREAT_MODELS[gate.threat_model],
    }
