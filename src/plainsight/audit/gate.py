"""The release verdict of each audited method: `PASS`, `FAIL` or `INCONCLUSIVE` under a stated threat model.

Each criterion of the gate (`release.gate`, parsed once by `plainsight.audit.criteria.Gate`) is judged by
its entry in the criteria registry (`plainsight.audit.criteria.REGISTRY`): a criterion passes only when a
valid upper bound of its evidence lies at or below its threshold, fails when the lower bound lies above
it, and is inconclusive otherwise or when the row has no such evidence. The epsilon criterion passes only
on a formal guarantee that covers the release and that the canary audit did not refute: a method without
one never passes it.

The verdict is `FAIL` when a criterion fails, else `INCONCLUSIVE` when one is inconclusive, else `PASS`.
Over several seeds the gate runs per seed and the worst seed wins, so a seed without some evidence
leaves the method INCONCLUSIVE. A PASS states its kind: a formal guarantee the audit did not refute
(the epsilon criterion passed), or empirical evidence only (the gate leaves the epsilon criterion out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plainsight.audit.criteria import THREAT_MODELS, Gate, criterion_outcomes
from plainsight.audit.outcomes import OUTCOMES, PASS, worst

FORMAL, EMPIRICAL = "formal guarantee, not refuted by the audit", "empirical evidence only"


def verdict_kind(outcome: str, gate: Gate) -> str:
    """What a PASS rests on; nothing for the other outcomes."""
    if outcome != PASS:
        return ""
    return FORMAL if gate.requires_formal_guarantee() else EMPIRICAL


def verdict(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, str]:
    """The verdict columns of one audit row: `verdict`, `verdict_reasons`, `threat_model` and
    `verdict_kind`."""
    outcomes = criterion_outcomes(row, gate, trained)
    overall, _ = worst(outcomes.values())
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
    overall = next(o for o in OUTCOMES if any(v["verdict"] == o for _, v in judged))
    worst_seeds = [(seed, v) for seed, v in judged if v["verdict"] == overall]
    reasons = (
        worst_seeds[0][1]["verdict_reasons"]
        if len(judged) == 1
        else " | ".join(f"seed {seed}: {v['verdict_reasons']}" for seed, v in worst_seeds)
    )
    return {
        "verdict": overall,
        "verdict_reasons": reasons,
        "threat_model": THREAT_MODELS[gate.threat_model],
        "verdict_kind": verdict_kind(overall, gate),
        "seed_verdicts": ", ".join(f"{seed}: {v['verdict']}" for seed, v in judged),
    }
