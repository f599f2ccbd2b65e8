"""The release verdict of each audited method: `PASS`, `FAIL` or `INCONCLUSIVE` under a stated threat model.

Each criterion compares a bound of the audit's evidence with a threshold (`release.gate` in the config):

- `leak_excess`: the excess of the any-identifier and near leaks over their held-out control;
- `text_membership`: the text membership attacks' AUC (nearest synthetic document, cosine and n-gram);
- `verbatim`: the excess of verbatim copying over its control;
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

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
THREAT_MODELS = {
    "released_text": "the adversary holds the released text and knows the rest of the corpus",
    "released_text_and_adapter": (
        "the adversary holds the released text and the trained adapter, and knows the rest of the corpus"
    ),
}
CRITERIA = ("leak_excess", "text_membership", "verbatim", "canaries")


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
        unknown = set(self.criteria) - set(CRITERIA)
        if unknown:
            raise ValueError(f"release.gate.criteria: unknown {sorted(unknown)}; known: {list(CRITERIA)}")

    @classmethod
    def from_config(cls, gate: Mapping[str, Any]) -> Gate:
        return cls(**{**gate, "criteria": tuple(gate.get("criteria", CRITERIA))})


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


def criterion_outcomes(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, tuple[str, str]]:
    """Each configured criterion's (outcome, reason) for one audit row."""
    judged = {
        "leak_excess": lambda: _worst(
            [
                bounded(
                    row.get(f"leak_{m}_excess_low"),
                    row.get(f"leak_{m}_excess_high"),
                    gate.leak_excess_max,
                    f"{m.replace('_', '-')} leak excess",
                )
                for m in ("any_identifier", "near")
            ]
        ),
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
        "verbatim": lambda: bounded(
            row.get("leak_verbatim_excess_low"),
            row.get("leak_verbatim_excess_high"),
            gate.verbatim_excess_max,
            "verbatim excess",
        ),
        "canaries": lambda: canary_outcome(row, gate.canary_epsilon_max),
    }
    outcomes = {name: judged[name]() for name in gate.criteria}
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
