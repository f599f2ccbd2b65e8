"""The canary table (results/tables/canaries.{csv,md}) and its plot: per run, method, attack and
insertion count, how well the attack tells that count's member canaries from the non-members (AUC,
TPR at 1% and 10% FPR, bootstrap intervals), and the epsilon this proves at least
(`plainsight.audit.epsilon`), beside the most that many canaries could prove and, for DP-SGD, the
accountant's claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from plainsight.audit.canary_attacks import ATTACK_NAMES, ATTACKS
from plainsight.audit.epsilon import best_threshold_epsilon, max_certifiable_epsilon
from plainsight.audit.roc import roc_summary
from plainsight.io import atomic_path, write_text

FPR_BOUNDS = (0.01, 0.1)
CONFIDENCE = 0.95
RUN_KEYS = ["dataset", "setting", "idset", "method", "seed"]
RELEASED_TEXT_ATTACKS = ("ngram", "shared_run")  # the attacks of an adversary without the adapter


@dataclass(frozen=True)
class DpClaim:
    """What a DP-SGD accountant states: (epsilon, delta)-DP per privacy unit."""

    epsilon: float
    delta: float

    def for_group(self, units: int) -> DpClaim | None:
        """The claim for a change of `units` privacy units (group privacy: units x epsilon at
        units x e^((units - 1) epsilon) x delta); None where that delta reaches 1 and states nothing."""
        delta = units * math.exp((units - 1) * self.epsilon) * self.delta
        return DpClaim(units * self.epsilon, delta) if delta < 1 else None


def group_row(
    frame: pd.DataFrame, attack: str, repeats: int, delta: float, claim: DpClaim | None, resamples: int
) -> dict[str, Any]:
    """One attack on the members inserted `repeats` times against every non-member."""
    members = frame[frame["member"] & (frame["repeats"] == repeats)]
    non_members = frame[~frame["member"]]
    scores = np.concatenate([members[attack], non_members[attack]])
    labels = np.r_[np.ones(len(members), bool), np.zeros(len(non_members), bool)]
    summary = roc_summary(labels, scores, FPR_BOUNDS, resamples, seed=repeats)
    bound = best_threshold_epsilon(members[attack], non_members[attack], delta, CONFIDENCE)
    row = {
        "attack": attack,
        "repeats": repeats,
        "members": len(members),
        "non_members": len(non_members),
        "mean_prompts_showing": float(members["prompts_showing"].mean()),
        "auc": summary.auc,
        "auc_low": summary.auc_low,
        "auc_high": summary.auc_high,
        **{
            f"tpr{round(100 * b)}{end}": getattr(summary, f"tpr{end}")[b]
            for b in FPR_BOUNDS
            for end in ("", "_low", "_high")
        },
        "epsilon_lower_bound": bound.epsilon,
        "max_certifiable_epsilon": max_certifiable_epsilon(len(members), len(non_members), delta, CONFIDENCE),
        "delta": delta,
    }
    return {**row, **claim_columns(members[attack], non_members[attack], claim, repeats)}


def claim_columns(member_scores, non_member_scores, claim: DpClaim | None, repeats: int) -> dict[str, Any]:
    """The DP-SGD claim for a canary inserted `repeats` times and whether this attack's bound, at the
    claim's delta, exceeds it (empty for a method without a claim)."""
    group = claim.for_group(repeats) if claim is not None else None
    if group is None:
        return {
            "dp_epsilon": claim.epsilon if claim else math.nan,
            "claimed_epsilon": math.nan,
            "claimed_delta": math.nan,
            "claim_bound": math.nan,
            "exceeds_claim": pd.NA,
        }
    bound = best_threshold_epsilon(member_scores, non_member_scores, group.delta, CONFIDENCE).epsilon
    return {
        "dp_epsilon": claim.epsilon,
        "claimed_epsilon": group.epsilon,
        "claimed_delta": group.delta,
        "claim_bound": bound,
        "exceeds_claim": bound > group.epsilon,
    }


def method_rows(
    frame: pd.DataFrame, delta: float, claim: DpClaim | None, resamples: int
) -> list[dict[str, Any]]:
    """Every attack with scores (the likelihood ratio only for a trained method) and insertion count."""
    repeats = sorted(set(frame.loc[frame["member"], "repeats"]))
    return [
        group_row(frame, attack, count, delta, claim, resamples)
        for attack in ATTACKS
        if frame[attack].notna().all()
        for count in repeats
    ]


def canary_table(
    attacks: Sequence[str],
    canaries: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    claims: Sequence[DpClaim | None],
    resamples: int,
) -> pd.DataFrame:
    """The table from each run's attack scores (`attacks`, `canaries` (their delta) and `claims`
    parallel to `runs`)."""
    from plainsight.audit.canaries import read_canaries

    rows = []
    for path, canaries_path, run, claim in zip(attacks, canaries, runs, claims):
        _, delta = read_canaries(canaries_path)
        for row in method_rows(pd.read_parquet(path), delta, claim, resamples):
            rows.append({**{key: run[key] for key in RUN_KEYS}, **row})
    return pd.DataFrame(rows)


def canary_evidence(table: pd.DataFrame, attacks: Sequence[str] = RELEASED_TEXT_ATTACKS) -> pd.DataFrame:
    """Per run, method and seed, the canaries' evidence for the release gate (`plainsight.audit.gate`):
    the largest epsilon lower bound of `attacks` over the insertion counts (`canary_epsilon`), and the
    largest any of those could have certified (`canary_max_certifiable_epsilon`). The default attacks
    are those of the released text alone; add `likelihood_ratio` where the adapter is released too."""
    chosen = table[table["attack"].isin(attacks)]
    grouped = chosen.groupby(RUN_KEYS, sort=False)
    return pd.DataFrame(
        {
            "canary_epsilon": grouped["epsilon_lower_bound"].max(),
            "canary_max_certifiable_epsilon": grouped["max_certifiable_epsilon"].max(),
        }
    ).reset_index()


def read_claim(training_json: str | None) -> DpClaim | None:
    """The accountant's (epsilon, delta) of a DP-SGD adapter's training.json; None for no file."""
    from plainsight.io import read_json

    if training_json is None:
        return None
    record = read_json(training_json)
    return DpClaim(float(record["epsilon"]), float(record["delta"]))


def interval(value: float, low: float, high: float, scale: float = 1.0) -> str:
    if math.isnan(low):
        return f"{scale * value:.2f}"
    return f"{scale * value:.2f} [{scale * low:.2f}, {scale * high:.2f}]"


def markdown_row(row) -> str:
    shown = "-" if math.isnan(row.mean_prompts_showing) else f"{row.mean_prompts_showing:.1f}"
    claim = "-" if math.isnan(row.dp_epsilon) else f"{row.dp_epsilon:.2f}"
    if not math.isnan(row.claimed_epsilon) and row.repeats > 1:
        claim += f" ({row.claimed_epsilon:.2f} for {row.repeats} documents)"
    if row.exceeds_claim is True:
        claim += " **exceeded**"
    return (
        f"| {row.dataset} {row.setting} {row.idset} | {row.method} | {row.seed} | "
        f"{ATTACK_NAMES[row.attack]} | "
        f"{row.repeats} | {row.members} / {row.non_members} | {shown} | "
        f"{interval(row.auc, row.auc_low, row.auc_high)} | {100 * row.tpr1:.0f} | {100 * row.tpr10:.0f} | "
        f"{row.epsilon_lower_bound:.2f} | {row.max_certifiable_epsilon:.2f} | {claim} |"
    )


def canary_markdown(table: pd.DataFrame) -> str:
    lines = [
        "### Canaries in the released text",
        "",
        "| Run | Method | Seed | Attack | Inserted | Members / non-members | Prompts showing one | AUC [95%] "
        "| TPR@1% | TPR@10% | Epsilon >= | Most certifiable | DP-SGD epsilon |",
        "| :--- | :--- | ---: | :--- | ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | :--- |",
        *(markdown_row(row) for row in table.itertuples(index=False)),
    ]
    exceeded = table[table["exceeds_claim"].fillna(False).astype(bool)] if len(table) else table
    delta = table["delta"].iloc[0] if len(table) else math.nan
    notes = [
        "",
        "Each row: the member canaries inserted that many times against every non-member (built the same "
        "way, never inserted). AUC and TPR (%) with 95% bootstrap intervals; 0.5 is chance. "
        f"'Epsilon >=' is the empirical lower bound at delta {delta:.1e} (Clopper-Pearson at 95% on the "
        "TPR and FPR of the best threshold, chosen on these canaries: optimistic); 'most certifiable' is "
        "what a perfect attack on that many canaries would prove: a bound can never exceed it. DP-SGD: the "
        "accountant's epsilon per privacy unit, and by group privacy the claim for a canary in that many "
        "documents where its delta stays below 1.",
    ]
    if len(exceeded):
        notes += [
            "",
            f"**Check failed: {len(exceeded)} DP-SGD row(s) prove more than the accountant's claim** "
            "(the bound at the claim's delta above its epsilon): "
            + ", ".join(
                f"{r.method} {r.attack} x{r.repeats} ({r.claim_bound:.2f} > {r.claimed_epsilon:.2f})"
                for r in exceeded.itertuples(index=False)
            ),
        ]
    return "\n".join(lines + notes) + "\n"


def plot_auc(table: pd.DataFrame, path: str | Path) -> None:
    """AUC against the insertion count, one line per method and panel per attack, with intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    attacks = [attack for attack in ATTACKS if attack in set(table["attack"])]
    methods = list(dict.fromkeys(table["method"]))
    repeats = sorted(set(table["repeats"]))
    figure, axes = plt.subplots(1, len(attacks), figsize=(3.8 * len(attacks), 3.6), squeeze=False)
    for axis, attack in zip(axes[0], attacks):
        for method, rows in table[table["attack"] == attack].groupby("method", sort=False):
            mean = rows.groupby("repeats")[["auc", "auc_low", "auc_high"]].mean()
            errors = [mean["auc"] - mean["auc_low"], mean["auc_high"] - mean["auc"]]
            # side by side on the log axis, so the intervals do not hide each other
            number = methods.index(method)
            shift = 2 ** (0.05 * (number - (len(methods) - 1) / 2))
            axis.errorbar(
                mean.index * shift,
                mean["auc"],
                yerr=errors,
                marker="o",
                capsize=3,
                label=method,
                color=f"C{number}",
            )
        axis.axhline(0.5, color="grey", linestyle=":", linewidth=1)
        axis.set_xscale("log", base=2)
        axis.set_xticks(repeats, [str(count) for count in repeats])
        axis.minorticks_off()
        axis.set(title=ATTACK_NAMES[attack], xlabel="insertions per canary", ylabel="AUC", ylim=(0, 1.05))
        axis.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    with atomic_path(path) as staged:
        figure.savefig(staged, dpi=110, format="png")
    plt.close(figure)


def write_canary_table(
    attacks: Sequence[str],
    canaries: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    dp_records: Sequence[str | None],
    resamples: int,
    outputs: Mapping[str, str],
) -> None:
    """Rule `canary_table`: `outputs` names the csv, markdown and plot paths."""
    import logging

    table = canary_table(attacks, canaries, runs, [read_claim(r) for r in dp_records], resamples)
    exceeded = table["exceeds_claim"].fillna(False).astype(bool).sum()
    if exceeded:
        logging.getLogger(__name__).warning("%d DP-SGD rows prove more than the accountant claims", exceeded)
    with atomic_path(outputs["csv"]) as staged:
        table.to_csv(staged, index=False)
    write_text(canary_markdown(table), outputs["markdown"])
    plot_auc(table, outputs["plot"])
