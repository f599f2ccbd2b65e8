"""The privacy-audit table rendered (results/tables/{dataset}/privacy_audit.md): its verdict section, one
row per run and method, and the notes that say what each column measures. The numbers and verdicts
come from `plainsight.audit.privacy_audit_table`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.audit.evidence import detectable_auc, row_rate_unit
from plainsight.audit.privacy_audit_table import UNJUDGED
from plainsight.audit.roc import MEMBERSHIP_ATTACK_NAMES, MEMBERSHIP_ATTACKS
from plainsight.evaluation.measures import LeakMeasure, leak_measure, leak_measures
from plainsight.io import atomic_path


def row_interval(row: Mapping[str, Any], name: str, decimals: int = 2) -> str:
    """The row's `name` and its `_low`, `_high` interval where it has one; "-" without the value."""
    value = row.get(name, math.nan)
    if pd.isna(value):
        return "-"
    low, high = row.get(f"{name}_low", math.nan), row.get(f"{name}_high", math.nan)
    cell = f"{value:.{decimals}f}"
    return cell if pd.isna(low) else f"{cell} [{low:.{decimals}f}, {high:.{decimals}f}]"


def _text_attack(row: pd.Series, attack: str) -> str:
    """A text attack's AUC, and its excess over the negative control where the row has one."""
    cell = row_interval(row, f"text_mia_auc_{attack}")
    excess = row.get(f"text_mia_excess_{attack}", math.nan)
    if pd.isna(excess):
        return cell
    low, high = row[f"text_mia_excess_{attack}_low"], row[f"text_mia_excess_{attack}_high"]
    return f"{cell}; beyond control {excess:+.2f} [{low:+.2f}, {high:+.2f}]"


def _percent_cell(value: Any) -> str:
    return "-" if pd.isna(value) else f"{100 * value:.1f}"


def _reidentification_ranks(row: pd.Series) -> str:
    """The shares of generations whose best-ranked units hold a unit they were written from, at top-1 and
    top-5, beside their matched controls' (in-context methods; "-" where the corpus shows none)."""
    if pd.isna(row.get("reidentification_top1", math.nan)):
        return "-"
    ranks = (
        f"{100 * row[f'reidentification_top{k}{side}']:.0f}" for side in ("", "_control") for k in (1, 5)
    )
    return "{} / {} vs {} / {}".format(*ranks).replace("nan", "-")


def audit_row_cells(row: pd.Series) -> list[str]:
    tprs = (
        "-"
        if pd.isna(row.get("mia_loss_tpr1", math.nan))
        else (f"{100 * row['mia_loss_tpr1']:.0f} / {100 * row['mia_loss_tpr10']:.0f}")
    )
    closest = (
        "-"
        if pd.isna(row.get("dcr_synthetic_median", math.nan))
        else (
            f"{row['dcr_synthetic_median']:.2f} / {row['dcr_held_out_median']:.2f}"
            + (" **closer**" if row.get("dcr_closer_than_held_out") is True else "")
        )
    )
    longest = (
        "-" if pd.isna(row.get("longest_shared_ngram", math.nan)) else str(int(row["longest_shared_ngram"]))
    )
    return [
        f"{row['dataset']} {row['setting']} {row['idset']}",
        row["Method"],
        *[row_interval(row, f"mia_{attack}_auc") for attack in MEMBERSHIP_ATTACKS],
        tprs,
        str(row.get("mia_loss_conclusion") or "-").replace("nan", "-"),
        _text_attack(row, "cosine"),
        _text_attack(row, "ngram"),
        _text_attack(row, "reidentification"),
        _reidentification_ranks(row),
        closest,
        _percent_cell(row.get("verbatim_share")),
        longest,
        _percent_cell(row.get("any_identifier_leak_share")),
        "-" if pd.isna(row.get("pipp", math.nan)) else f"{row['pipp']:.1f}",
    ]


def excess_cell(row: Mapping[str, Any], prefix: str, unit: str | None) -> str:
    """ "member vs control (% of unit): excess [low, high]" in percent, from the row's `{prefix}_member_rate`,
    `_control_rate`, `_excess`, `_excess_low` and `_excess_high`; `unit`: what the rates are shares of."""
    shares = f" (% of {unit})" if unit else ""
    return (
        f"{100 * row[f'{prefix}_member_rate']:.0f} vs {100 * row[f'{prefix}_control_rate']:.0f}{shares}: "
        f"{100 * row[f'{prefix}_excess']:+.0f} "
        f"[{100 * row[f'{prefix}_excess_low']:+.0f}, {100 * row[f'{prefix}_excess_high']:+.0f}]"
    )


def _excess(row: pd.Series, measure: LeakMeasure) -> str:
    if pd.isna(row.get(f"leak_{measure.name}_excess", math.nan)):
        return "-"
    cell = excess_cell(row, f"leak_{measure.name}", row_rate_unit(measure, row))
    return f"{cell}, {row[f'leak_{measure.name}_conclusion']}"


def verdict_cell(row: Mapping[str, Any]) -> str:
    """The verdict, what a PASS rests on, and each seed's verdict where there are several."""
    cell = f"**{row['verdict']}**"
    if row.get("verdict_kind"):
        cell += f" ({row['verdict_kind']})"
    seeds = str(row.get("seed_verdicts") or "")
    return cell + (f"; per seed {seeds}" if "," in seeds else "")


def judged_measures() -> tuple[LeakMeasure, ...]:
    """The leak measures a release criterion judges: the verdict section's evidence columns."""
    return tuple(m for m in leak_measures() if m.criterion)


# Evidence the verdict section shows beside the judged measures although no criterion judges it: joint
# linkage joins generations, so it has no per-generation pair and reads as context for unit linkage.
SHOWN_UNJUDGED = ("joint_linkage",)


def claim_check(row: Mapping[str, Any]) -> str:
    """Whether a method's leaks reject its own formal claim, or that this run is too small to tell."""
    if row.get("dp_null_testable") is False or row.get("dp_null_testable") == 0:
        needed = row.get("dp_null_controls_needed")
        reachable = pd.notna(needed) and needed != math.inf
        size = f" (needs {int(needed):,} controls before any count could reject it)" if reachable else ""
        return f"not testable at this size{size}"
    if row["dp_claim_rejected"] > 0:
        return f"**its leaks reject its own claim** (p = {row['dp_null_p_value']:.3g}): a bug in its DP code?"
    return f"its leaks are within what its claim allows (p = {row['dp_null_p_value']:.3g})"


def claim_checks(table: pd.DataFrame) -> list[str]:
    """Per method with a formal claim on its release (`dp_epsilon`): whether its leaks reject it."""
    return [
        f"{row['Method']} (epsilon {row['dp_epsilon']:.2f}): {claim_check(row)}"
        for _, row in table.iterrows()
        if "dp_epsilon" in table and pd.notna(row.get("dp_epsilon"))
    ]


def verdict_markdown(table: pd.DataFrame) -> list[str]:
    """The verdict section: per audited corpus its verdict and the evidence against each leak's control."""
    header = [
        "Run",
        "Method",
        "Verdict",
        *(
            m.display + ("" if n else ": member vs control (% of what the cell names), excess [95% bounds]")
            for n, m in enumerate(judged_measures())
        ),
        *(f"{leak_measure(name).display} (not judged)" for name in SHOWN_UNJUDGED),
        "Text MIA (cosine)",
        "Why",
        "Fit as text",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table[~table["method"].isin(UNJUDGED)].iterrows():
        cells = [
            f"{row['dataset']} {row['setting']} {row['idset']}",
            row["Method"],
            verdict_cell(row),
            *(_excess(row, m) for m in judged_measures()),
            *(_excess(row, leak_measure(name)) for name in SHOWN_UNJUDGED),
            str(row.get("text_mia_cosine_conclusion", "-")),
            str(row["verdict_reasons"]).replace("|", "/"),
            f"{row.get('fit_as_text')} ({row.get('fit_reasons')})".replace("|", "/"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    threat = next(iter(table["threat_model"].dropna()), "")
    claims = claim_checks(table)
    return [
        f"Threat model: {threat}.",
        "",
        *lines,
        "",
        "Member vs control: the share of generations (in-context methods, each against as many unshown "
        "training segments of the same entity types) or of distinct values (trained methods: "
        "fine-tuning-only against held-out-only values) that the same matcher finds, as each cell names; "
        "for verbatim copying in trained methods, the share of training segments the corpus copies a run "
        "of words from against that of held-out segments, not the share of generations that the table "
        "below gives; the excess is their "
        "difference with one-sided 95% bounds (in-context: on the discordant pairs; trained: per document). "
        "`leaks`: the excess is significant at one-sided 5% (McNemar's exact test, or a permutation of "
        "whole documents for trained methods); `no leak detected (could detect >= X)`: not significant, "
        "and that very test finds an excess of X with 80% power against no learning (the gate's FAIL "
        "needs more: docs/methods-and-metrics.md#evidence-plan); `no leak detected (bounded <= U)`: not "
        "significant, too few to detect the threshold with 80% power, yet the upper bound U lies at or "
        "under it; `inconclusive`: neither. "
        "A verdict is PASS only when every criterion's upper bound lies under its threshold "
        "(docs/methods-and-metrics.md#release-verdict).",
        *([f"Formal guarantees against the leaks: {'; '.join(claims)}."] if claims else []),
        "",
    ]


def _detectable(table: pd.DataFrame) -> str:
    """The smallest AUC the adapter attacks', the text attacks' and the re-identification attack's sample
    sizes detect, as text."""
    found = []
    for members, non_members, compared in (
        ("mia_members", "mia_non_members", "adapter"),
        ("text_mia_members", "text_mia_non_members", "text"),
        ("text_mia_reidentification_members", "text_mia_reidentification_non_members", "re-identification"),
    ):
        if members in table and table[members].notna().any():
            detectable = detectable_auc(int(table[members].max()), int(table[non_members].max()))
            found.append(f"{detectable:.2f} ({compared})")
    return " / ".join(found) or "-"


def privacy_audit_markdown(table: pd.DataFrame, verbatim_ngram: int) -> str:
    header = [
        "Run",
        "Method",
        *[f"MIA AUC {MEMBERSHIP_ATTACK_NAMES[a]}" for a in MEMBERSHIP_ATTACKS],
        "TPR (%) at 1% / 10% FPR (loss)",
        "Loss attack",
        "Text MIA AUC (cosine)",
        "Text MIA AUC (n-gram)",
        "Re-identification AUC (units)",
        "Re-identification top-1 / top-5 (% of generations): sources vs controls",
        "Nearest cosine: synthetic / held-out",
        f"Verbatim >= {verbatim_ngram} words (% of generations)",
        "Longest shared run (words)",
        "Any-identifier leak (% of generations)",
        "PIPP (% of generations)",
    ]
    lines = verdict_markdown(table) if "verdict" in table else []
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(audit_row_cells(row)) + " |" for _, row in table.iterrows()]
    notes = [
        "",
        "AUCs with 95% bootstrap intervals; 0.5 is chance. MIA: members are fine-tuning segments, "
        "non-members held-out (dev, test) segments, balanced, scored in the training prompt format. Text "
        "MIA: the same question from the released corpus alone (members: context documents or the "
        "fine-tuning set); beyond control: the AUC less the negative control's on the same members and "
        "held-out segments, with paired bootstrap bounds, which the release gate judges (0.5 plus it). "
        "The negative control's row is the split's own bias. Re-identification: each generation ranks "
        "the real privacy units (documents, or patients) by the rare word 3-grams and identifier values "
        "it shares with them, each weighted log(units / units holding it); AUC: a unit's best score over "
        "the corpus tells the units the method saw from held-out units (balanced, beyond control as "
        "above, judged by the gate with the text MIA); top-1 / top-5: the share of generations whose "
        "best-ranked units hold a unit of their context documents, beside the share holding one of "
        "their matched control units (in-context methods; ties counted at their chance). "
        "Nearest cosine: median MiniLM cosine of a "
        "generation (synthetic) or of a "
        "held-out real segment to its nearest real training segment; **closer** marks a corpus closer to "
        "the training set than unseen real text is. Verbatim: the share of generations that share a run of "
        "that many words with a training segment. Any-identifier leak: the share of generations holding a "
        "direct or quasi identifier of "
        "the generation's context (or fine-tuning) documents, whatever the run's identifier set; PIPP "
        "counts the run's own set. These three are shares of generations: the verdict section's member "
        "rates of trained methods are shares of distinct values and segments, and differ from them. "
        "With its sizes, a membership attack here finds an AUC of "
        f"{_detectable(table)} or more with 80% power (one-sided 2.5%, the level of the intervals).",
    ]
    return "\n".join(lines + notes) + "\n"


def write_privacy_audit(
    table: pd.DataFrame, verbatim_ngram: int, csv_path: str | Path, markdown_path: str | Path
) -> None:
    """Rule `privacy_audit_table`'s outputs: the table as CSV, and as Markdown with its notes."""
    from plainsight.io import write_text

    with atomic_path(csv_path) as staged:
        table.to_csv(staged, index=False)
    write_text(privacy_audit_markdown(table, verbatim_ngram), markdown_path)
