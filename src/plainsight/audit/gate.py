"""The release verdict of each audited method: `PASS`, `FAIL` or `INCONCLUSIVE` under a stated threat model.

Each criterion of the gate (`release.gate`, parsed once by `plainsight.audit.criteria.Gate`) is judged by
its entry in the criteria registry (`plainsight.audit.criteria.REGISTRY`): a criterion passes only when a
valid upper bound of its evidence lies at or below its threshold, fails when the lower bound lies above
it, and is inconclusive otherwise or when the row has no such evidence. The epsilon criterion passes only
on a formal guarantee that covers the release and that the canary audit did not refute: a method without
one never passes it.

The verdict is `FAIL` when a criterion fails, else `INCONCLUSIVE` when one is inconclusive, else `PASS`;
a method that no formal guarantee covers reads `NOT RELEASABLE BY POLICY` under a gate whose policy
requires one (`release.gate.policy: formal_guarantee` with the epsilon criterion), with its empirical
outcome beside it, since no sample would decide it. Over several seeds the gate runs per seed and the
worst seed wins, so a seed without some evidence leaves the method INCONCLUSIVE. A PASS states its kind:
a formal guarantee the audit did not refute (the epsilon criterion passed), or empirical evidence only,
no formal guarantee (`release.gate.policy: empirical_evidence`, or a gate without the epsilon
criterion).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plainsight.audit.criteria import THREAT_MODELS, Gate, criterion_outcomes
from plainsight.audit.outcomes import BY_CONSTRUCTION, FAIL, INCONCLUSIVE, PASS, Outcome, join_reasons, worst

FORMAL, EMPIRICAL = (
    "formal guarantee, not refuted by the audit",
    "empirical evidence only, no formal guarantee",
)
# The verdict of a method that no formal guarantee covers, under a gate whose policy requires one: no
# sample decides it, whatever its empirical evidence (stated beside it, in `verdict_kind`).
POLICY = "NOT RELEASABLE BY POLICY"
VERDICTS = (FAIL, POLICY, INCONCLUSIVE, PASS)  # worst first


def _judged(outcomes: dict[str, Outcome], gate: Gate) -> tuple[dict[str, Outcome], str, str]:
    """(the outcomes the verdict rests on, the verdict, its kind). Criteria that hold by construction (a
    release filter applied their detector) are no evidence and are left out. The epsilon criterion left
    undecided (no formal guarantee under the threshold that covers the release) makes the verdict POLICY
    under a gate that requires a guarantee, with the other criteria's outcome beside it; under the
    empirical policy it is left out, and a PASS rests on empirical evidence only."""
    evidence = {name: outcome for name, outcome in outcomes.items() if outcome[0] != BY_CONSTRUCTION}
    epsilon = evidence.get("epsilon")
    undecided = epsilon is not None and epsilon[0] == INCONCLUSIVE
    empirical = {name: outcome for name, outcome in evidence.items() if name != "epsilon"}
    if undecided and gate.requires_formal_guarantee():
        others = worst(empirical.values())[0] if empirical else INCONCLUSIVE
        return outcomes, POLICY, f"{epsilon[1]}; empirical evidence: {others}"
    judged = empirical if undecided else evidence
    overall = worst(judged.values())[0] if judged else INCONCLUSIVE
    formal = "epsilon" in judged and judged["epsilon"][0] == PASS
    shown = {name: outcome for name, outcome in outcomes.items() if name in judged or name != "epsilon"}
    return shown, overall, ("" if overall != PASS else FORMAL if formal else EMPIRICAL)


def verdict(row: Mapping[str, Any], gate: Gate, trained: bool) -> dict[str, str]:
    """The verdict columns of one audit row: `verdict`, `verdict_reasons`, `threat_model` and
    `verdict_kind` (what a PASS rests on; for POLICY, why and the empirical evidence's outcome)."""
    outcomes, overall, kind = _judged(criterion_outcomes(row, gate, trained), gate)
    return {
        "verdict": overall,
        "verdict_reasons": join_reasons(
            f"{name}: {result} ({reason})" for name, (result, reason) in outcomes.items()
        ),
        "threat_model": THREAT_MODELS[gate.threat_model],
        "verdict_kind": kind,
    }


def seeds_verdict(rows: Sequence[tuple[int, Mapping[str, Any]]], gate: Gate, trained: bool) -> dict[str, str]:
    """The verdict of a method over its seeds' audit rows ((seed, row) pairs): the gate per seed, the worst
    seed wins; its reasons are those of the seeds with the worst outcome (named when there are several),
    and `seed_verdicts` lists every seed's."""
    if not rows:
        raise ValueError("no audit rows to judge")
    judged = [(seed, verdict(row, gate, trained)) for seed, row in rows]
    overall = next(o for o in VERDICTS if any(v["verdict"] == o for _, v in judged))
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
        "verdict_kind": worst_seeds[0][1]["verdict_kind"],
        "seed_verdicts": ", ".join(f"{seed}: {v['verdict']}" for seed, v in judged),
    }
