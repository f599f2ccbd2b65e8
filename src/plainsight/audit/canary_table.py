"""The canary table's rows (results/tables/{dataset}/canaries.{csv,md}; `plainsight.report.canary_markdown`
renders them): per run, method, attack
and kind of canary (its insertion count), the one-run audit (Steinke, Nasr and Jagielski 2023;
`plainsight.audit.epsilon.one_run_epsilon`) and how well the attack tells included candidates from the
others (AUC, TPR at 1% and 10% FPR, bootstrap intervals).

The attack's guesses are fixed before any score is seen: `guesses` (a share of each kind's candidates,
from the config) sets k, the attack says "included" for the k highest scores and "not included" for the
k lowest and abstains on the rest; ties go by canary order, which the coins do not depend on. v of the
r = 2k guesses are right. Single-insertion rows bound epsilon per privacy unit (each candidate is a
document and unit of its own); a multi-insertion row bounds a change to a group of that many units.
Each method's attacks are corrected together (Bonferroni): every bound of a method holds at
1 - 0.05 / (its attacks), so the largest of them still holds at 95%.

Beside them, a per-person row per method (`plainsight.audit.canary_persons`): the canary persons, each a
privacy unit of r documents in or out by its coin, under the one attack that asks whether the released
text links two of a person's details; the same guesses and bound with the persons as candidates, its own
95% (one attack, audited apart from the sentence canaries).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from plainsight.audit.canary_attacks import ATTACKS, PERSON_ATTACK
from plainsight.audit.epsilon import one_run_epsilon, one_run_max_epsilon
from plainsight.audit.roc import FPR_BOUNDS, roc_summary

CONFIDENCE = 0.95  # of all the bounds of one method's attacks together
CANARY_KEYS = ["dataset", "setting", "idset", "method", "seed"]
RELEASED_TEXT_ATTACKS = ("ngram", "shared_run")  # the attacks of an adversary without the adapter
ADAPTER_ATTACKS = ("likelihood_ratio",)  # those that need the adapter too
PER_PERSON = "person"  # `bound_per` of the canary persons' rows


@dataclass(frozen=True)
class DpClaim:
    """What a DP-SGD accountant states: (epsilon, delta)-DP per privacy unit, added or removed; the unit
    is a docs-table `unit_id` (`document`) or each training sequence (`sequence`)."""

    epsilon: float
    delta: float
    privacy_unit: str = "document"

    def for_group(self, units: int) -> DpClaim | None:
        """The claim for a change of `units` privacy units (group privacy: units x epsilon at
        units x e^((units - 1) epsilon) x delta); None where that delta reaches 1 and states nothing."""
        delta = units * math.exp((units - 1) * self.epsilon) * self.delta
        return DpClaim(units * self.epsilon, delta, self.privacy_unit) if delta < 1 else None


def claim_steps(repeats: int) -> int:
    """Units added or removed between a run with a canary and one without: a single-insertion canary's
    document is one unit; a canary inserted into k units' segments changes each of them, a removal and
    an addition apiece."""
    return 1 if repeats == 1 else 2 * repeats


def person_claim_steps(documents: int, privacy_unit: str) -> int:
    """Units added or removed between a run with a canary person and one without: one, its own unit,
    where the guarantee is per `unit_id`; its documents (a short training sequence each) where every
    sequence is a unit."""
    return 1 if privacy_unit == "document" else documents


def bound_per(repeats: int) -> str:
    """What a row's bound is per: one privacy unit, or the group of units a canary went into."""
    return "unit" if repeats == 1 else f"group of {repeats}"


def guesses_per_side(candidates: int, share: float) -> int:
    """k, the guesses of each kind ("included", "not included"): half the configured share of the
    candidates, rounded down (rounded to 9 decimals first, so 0.29 x 100 gives 14, not 13)."""
    if not 0 < share <= 1:
        raise ValueError(f"audit.canaries.guesses must lie in (0, 1], not {share}")
    return math.floor(round(share * candidates, 9) / 2)


def one_run_guesses(scores: Sequence[float], included: Sequence[bool], per_side: int) -> tuple[int, int]:
    """(r, v): "included" on the `per_side` highest scores, "not included" on the `per_side` lowest,
    ties in canary order; r = 2 `per_side` guesses, v of them right."""
    scores, included = np.asarray(scores, float), np.asarray(included, bool)
    if not np.isfinite(scores).all():
        raise ValueError("attack scores must be finite numbers")
    if 2 * per_side > len(scores):
        raise ValueError(f"{2 * per_side} guesses on {len(scores)} candidates")
    order = np.argsort(scores, kind="stable")  # lowest first
    low, high = order[:per_side], order[len(order) - per_side :]
    return 2 * per_side, int(included[high].sum() + (~included[low]).sum())


def family_confidence(attacks: int) -> float:
    """Each bound's confidence, so that all `attacks` bounds of a method hold together at CONFIDENCE."""
    return 1 - (1 - CONFIDENCE) / attacks


def roc_columns(included: np.ndarray, scores: np.ndarray, resamples: int, seed: int) -> dict[str, float]:
    """AUC and TPR at FPR_BOUNDS with bootstrap intervals; NaN where the coins left a class empty."""
    names = ["auc", *(f"tpr{round(100 * b)}" for b in FPR_BOUNDS)]
    if included.all() or not included.any():
        return {f"{name}{end}": math.nan for name in names for end in ("", "_low", "_high")}
    summary = roc_summary(included, scores, FPR_BOUNDS, resamples, seed=seed)
    return {
        "auc": summary.auc,
        "auc_low": summary.auc_low,
        "auc_high": summary.auc_high,
        **{
            f"tpr{round(100 * b)}{end}": getattr(summary, f"tpr{end}")[b]
            for b in FPR_BOUNDS
            for end in ("", "_low", "_high")
        },
    }


@dataclass(frozen=True)
class AuditSettings:
    """What every row of one method is computed at."""

    delta: float
    guesses: float  # share of each kind's candidates guessed on
    confidence: float
    resamples: int


def kind_row(
    frame: pd.DataFrame, attack: str, repeats: int, settings: AuditSettings, claim: DpClaim | None
) -> dict[str, Any]:
    """One attack on the candidates inserted `repeats` times: the one-run audit and the ROC."""
    kind = frame[frame["repeats"] == repeats]
    return audit_row(kind, attack, repeats, bound_per(repeats), claim_steps(repeats), settings, claim)


def audit_row(
    kind: pd.DataFrame,
    attack: str,
    repeats: int,
    per: str,
    steps: int,
    settings: AuditSettings,
    claim: DpClaim | None,
) -> dict[str, Any]:
    """One attack on one kind of candidate (`repeats`: its insertions or documents; `per`: what its
    bound is per; `steps`: the units its coin adds or removes): the one-run audit and the ROC."""
    included = kind["member"].to_numpy(bool)
    scores = kind[attack].to_numpy(float)
    candidates = len(kind)
    guesses, correct = one_run_guesses(scores, included, guesses_per_side(candidates, settings.guesses))
    bound = one_run_epsilon(candidates, guesses, correct, settings.delta, settings.confidence)
    row = {
        "attack": attack,
        "repeats": repeats,
        "bound_per": per,
        "candidates": candidates,
        "members": int(included.sum()),
        "non_members": int((~included).sum()),
        "mean_prompts_showing": float(kind.loc[kind["member"], "prompts_showing"].mean()),
        **roc_columns(included, scores, settings.resamples, seed=repeats),
        "guesses": guesses,
        "correct": correct,
        "epsilon_lower_bound": bound,
        "max_certifiable_epsilon": one_run_max_epsilon(
            candidates, guesses, settings.delta, settings.confidence
        ),
        "confidence": settings.confidence,
        "delta": settings.delta,
    }
    return {**row, **claim_columns(candidates, guesses, correct, settings, claim, steps)}


def claim_columns(
    candidates: int, guesses: int, correct: int, settings: AuditSettings, claim: DpClaim | None, steps: int
) -> dict[str, Any]:
    """The DP-SGD claim for the change a candidate of this kind makes (`steps` units added or removed),
    and whether the one-run bound, at the claim's delta, exceeds it (empty for a method without a claim,
    or where group privacy leaves nothing to claim)."""
    group = claim.for_group(steps) if claim is not None else None
    if group is None:
        return {
            "dp_epsilon": claim.epsilon if claim else math.nan,
            "claimed_epsilon": math.nan,
            "claimed_delta": math.nan,
            "claim_bound": math.nan,
            "exceeds_claim": pd.NA,
        }
    bound = one_run_epsilon(candidates, guesses, correct, group.delta, settings.confidence)
    return {
        "dp_epsilon": claim.epsilon,
        "claimed_epsilon": group.epsilon,
        "claimed_delta": group.delta,
        "claim_bound": bound,
        "exceeds_claim": bound > group.epsilon,
    }


def method_rows(
    frame: pd.DataFrame, delta: float, claim: DpClaim | None, resamples: int, guesses: float
) -> list[dict[str, Any]]:
    """Every attack with scores (the likelihood ratio only for a trained method) and kind of canary,
    the method's attacks corrected together."""
    attacks = [attack for attack in ATTACKS if frame[attack].notna().all()]
    settings = AuditSettings(delta, guesses, family_confidence(len(attacks)), resamples)
    kinds = sorted(set(frame["repeats"]))
    return [kind_row(frame, attack, repeats, settings, claim) for attack in attacks for repeats in kinds]


def person_rows(
    frame: pd.DataFrame, delta: float, claim: DpClaim | None, resamples: int, guesses: float
) -> list[dict[str, Any]]:
    """The per-person row of one method's canary persons (`canary_attacks.person_attack_frame`; none
    where the run has no persons): one attack, so its bound holds at 95% on its own."""
    if frame.empty:
        return []
    documents = int(frame["documents"].iloc[0])
    steps = person_claim_steps(documents, claim.privacy_unit) if claim is not None else 1
    settings = AuditSettings(delta, guesses, family_confidence(1), resamples)
    return [audit_row(frame, PERSON_ATTACK, documents, PER_PERSON, steps, settings, claim)]


def canary_table(
    attacks: Sequence[str],
    canaries: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    claims: Sequence[DpClaim | None],
    resamples: int,
    guesses: float,
    person_attacks: Sequence[str] = (),
) -> pd.DataFrame:
    """The table from each run's attack scores (`attacks`, `canaries` (their delta) and `claims`
    parallel to `runs`; `person_attacks`, the canary persons' scores, too where given)."""
    from plainsight.audit.canaries import read_canaries

    rows = []
    for number, (path, canaries_path, run, claim) in enumerate(zip(attacks, canaries, runs, claims)):
        _, delta = read_canaries(canaries_path)
        found = method_rows(pd.read_parquet(path), delta, claim, resamples, guesses)
        if person_attacks:
            found += person_rows(pd.read_parquet(person_attacks[number]), delta, claim, resamples, guesses)
        rows += [{**{key: run[key] for key in CANARY_KEYS}, **row} for row in found]
    return pd.DataFrame(rows)


def _largest(rows: pd.DataFrame, column: str) -> pd.Series:
    return rows.groupby(CANARY_KEYS, sort=False)[column].max()


def canary_evidence(table: pd.DataFrame, attacks: Sequence[str] = RELEASED_TEXT_ATTACKS) -> pd.DataFrame:
    """Per run, method and seed, the canaries' evidence for the release gate (`plainsight.audit.gate`):
    the largest per-unit bound of `attacks` (`canary_epsilon`: single-insertion rows only, as the gate
    reads it per privacy unit) and the most they could have shown (`canary_max_certifiable_epsilon`);
    the default attacks are those of the released text alone. `canary_adapter_epsilon`: the adapter's
    attack's per-unit bound, for the threat model that releases the adapter too."""
    # a table without insertion counts holds single-insertion rows only
    single = table[table["repeats"] == 1] if "repeats" in table else table
    chosen = single[single["attack"].isin(attacks)]
    evidence = pd.DataFrame(
        {
            "canary_epsilon": _largest(chosen, "epsilon_lower_bound"),
            "canary_max_certifiable_epsilon": _largest(chosen, "max_certifiable_epsilon"),
        }
    )
    adapter = _largest(single[single["attack"].isin(ADAPTER_ATTACKS)], "epsilon_lower_bound")
    evidence["canary_adapter_epsilon"] = adapter.reindex(evidence.index)
    return evidence.reset_index()


def read_claim(training_json: str | None) -> DpClaim | None:
    """The accountant's (epsilon, delta) of a DP-SGD adapter's training.json; None for no file."""
    from plainsight.io import read_json

    if training_json is None:
        return None
    record = read_json(training_json)
    return DpClaim(float(record["epsilon"]), float(record["delta"]), str(record["privacy_unit"]))
