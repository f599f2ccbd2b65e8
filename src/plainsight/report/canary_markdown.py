"""The canary table rendered (results/tables/{dataset}/canaries.md), and rule `canary_table`'s outputs: the
rows of `plainsight.audit.canary_table` as CSV, as Markdown with its notes, and the plot of AUC against
insertions (`plainsight.report.audit_plots.plot_auc`)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from plainsight.audit.canary_attacks import CANARY_ATTACK_NAMES
from plainsight.audit.canary_table import PER_PERSON, canary_table, read_claim
from plainsight.io import atomic_path, write_text
from plainsight.report.audit_plots import plot_auc
from plainsight.report.privacy_audit_markdown import row_interval


def canary_row_line(row) -> str:
    shown = "-" if math.isnan(row.mean_prompts_showing) else f"{row.mean_prompts_showing:.1f}"
    claim = "-" if math.isnan(row.dp_epsilon) else f"{row.dp_epsilon:.2f}"
    person = row.bound_per == PER_PERSON
    if not math.isnan(row.claimed_epsilon) and row.claimed_epsilon != row.dp_epsilon:
        claim += f" ({row.claimed_epsilon:.2f} for the {'person' if person else 'group'})"
    if row.exceeds_claim is True:
        claim += " **exceeded**"
    if person:
        inserted = f"{row.repeats} documents, one unit"
    else:
        inserted = "1 (own document)" if row.repeats == 1 else f"{row.repeats} segments"
    return (
        f"| {row.dataset} {row.setting} {row.idset} | {row.method} | {row.seed} | "
        f"{CANARY_ATTACK_NAMES[row.attack]} | {inserted} | {row.members} / {row.candidates} | {shown} | "
        f"{row_interval(row._asdict(), 'auc')} | {row.correct} / {row.guesses} | "
        f"{row.epsilon_lower_bound:.2f} | {row.max_certifiable_epsilon:.2f} | {row.bound_per} | "
        f"{100 * row.confidence:.1f}% | {claim} |"
    )


def canary_markdown(table: pd.DataFrame) -> str:
    lines = [
        "### Canaries in the released text",
        "",
        "| Run | Method | Seed | Attack | Inserted into | Included / candidates | Prompts showing one "
        "| AUC [95%] | Right / guesses | Epsilon >= | Most it could show | Per | Confidence "
        "| DP-SGD epsilon |",
        "| :--- | :--- | ---: | :--- | :--- | ---: | ---: | :--- | ---: | ---: | ---: | :--- | ---: | :--- |",
        *(canary_row_line(row) for row in table.itertuples(index=False)),
    ]
    exceeded = table[table["exceeds_claim"].fillna(False).astype(bool)] if len(table) else table
    delta = table["delta"].iloc[0] if len(table) else math.nan
    notes = [
        "",
        "One training run per method and seed audits every candidate canary of a row: each was included "
        "in training by a fair coin of its own. The attack guesses on a share of the candidates fixed "
        'before any score is seen ("included" for the highest scores, "not included" for as many '
        "of the lowest) and abstains on the rest; 'Epsilon >=' is the one-run lower bound (Steinke, "
        f"Nasr and Jagielski 2023) that those right guesses prove at delta {delta:.1e}, at the stated "
        "confidence: a method's attacks are corrected together, so its largest bound holds at 95%. "
        "'Most it could show' is the bound had every guess been right. A lower bound refutes a claim, "
        'never certifies one: a bound of 0 means "not shown at this size". A single-insertion '
        "canary is a training document and privacy unit of its own, so its row bounds epsilon per "
        "unit (the release gate reads the released-text attacks' largest); a canary in k segments of "
        "k documents changes a group of k units, evidence of memorisation, not a per-unit bound. AUC "
        "(included against the other candidates of the row) with a 95% bootstrap interval; 0.5 is "
        "chance. DP-SGD: the accountant's epsilon per unit and, by group privacy, its claim for the "
        "change a canary makes (2k units added or removed for a canary in k segments) where that "
        "claim's delta stays below 1.",
    ]
    if len(table) and (table["bound_per"] == PER_PERSON).any():
        notes += [
            "",
            "Per person: the canary persons, fictional persons whose name, date of birth, place and "
            "record number are spread over the documents of one privacy unit (each document names the "
            "person and one other detail), each person in or out of training, all its documents "
            "together, by a fair coin of its own. The attack asks whether one generation links two or "
            "more of a person's details; its guesses and bound are those above with the persons as the "
            "candidates, at 95% on their own. A person is one unit, so the bound is per unit in the "
            "sense of a guarantee per `unit_id`, tested on the whole of a person's documents rather "
            "than one string.",
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


def write_canary_table(
    attacks: Sequence[str],
    person_attacks: Sequence[str],
    canaries: Sequence[str],
    runs: Sequence[Mapping[str, Any]],
    dp_records: Sequence[str | None],
    resamples: int,
    guesses: float,
    outputs: Mapping[str, str],
) -> None:
    """Rule `canary_table`: `outputs` names the csv, markdown and plot paths."""
    claims = [read_claim(r) for r in dp_records]
    table = canary_table(attacks, canaries, runs, claims, resamples, guesses, person_attacks)
    exceeded = table["exceeds_claim"].fillna(False).astype(bool).sum()
    if exceeded:
        logging.getLogger(__name__).warning("%d DP-SGD rows prove more than the accountant claims", exceeded)
    with atomic_path(outputs["csv"]) as staged:
        table.to_csv(staged, index=False)
    write_text(canary_markdown(table), outputs["markdown"])
    plot_auc(table, outputs["plot"])
