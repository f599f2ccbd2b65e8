"""The privacy-audit table (results/tables/{dataset}/privacy_audit) and its ROC and distance plots.

One row per (dataset, setting, identifier set, method), plus the control rows per run: the base model's
(the adapter attacks' control), the positive control's (a corpus that copies) and the negative control's
(a corpus written without private data, whose text attacks show the split's own bias):
membership-inference AUC of each attack against the method's adapter (trained methods) with 95%
bootstrap intervals and the TPR at 1% and 10% FPR, membership through the released text alone,
distance to the closest record, verbatim copying, any-identifier leaks and the run's own PIPP.
With several audited seeds the numbers are means over seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from plainsight.audit import NEGATIVE_CONTROL, POSITIVE_CONTROL
from plainsight.audit.evidence import conclusion, detectable_auc, row_rate_unit
from plainsight.audit.fitness import documents_share, fit_as_text, utility_evidence
from plainsight.audit.gate import Gate, seeds_verdict
from plainsight.audit.roc import ATTACKS, CONTROL_MODEL, attack_scores, roc_summary
from plainsight.evaluation.measures import LeakMeasure, leak_measures
from plainsight.io import atomic_path
from plainsight.methods import registry

FPR_BOUNDS = (0.01, 0.1)
RUN_KEYS = ["dataset", "setting", "idset", "method"]
ATTACK_NAMES = {"loss": "loss", "zlib": "zlib", "min_k": "min-k%", "reference": "reference"}
BASE_DISPLAY = "Base model (control)"
VERDICT_COLUMNS = (
    "verdict",
    "verdict_reasons",
    "threat_model",
    "verdict_kind",
    "seed_verdicts",
    "fit_as_text",
    "fit_reasons",
)
POSITIVE_DISPLAY = "Positive control (copies its context)"
NEGATIVE_DISPLAY = "Negative control (writes without private data)"
# the rows that released nothing a custodian would judge: they get no verdict
UNJUDGED = (CONTROL_MODEL, NEGATIVE_CONTROL)


def membership_rows(
    scores: pd.DataFrame, resamples: int, seed: int, auc_threshold: float = 0.6
) -> pd.DataFrame:
    """Per model of one run's scores (base first): AUC, TPR at each FPR bound and their intervals (the
    bootstrap over documents: a document's segments share its side), per attack. The base model has no
    reference attack (it would be its own reference)."""
    base = scores[scores["model"] == CONTROL_MODEL]
    rows = []
    for model in dict.fromkeys(scores["model"]):
        attacked = attack_scores(scores[scores["model"] == model], base)
        row: dict[str, Any] = {"method": model}
        for attack in ATTACKS:
            if model == CONTROL_MODEL and attack == "reference":
                continue
            summary = roc_summary(
                attacked["member"], attacked[attack], FPR_BOUNDS, resamples, seed, attacked["doc_id"]
            )
            detectable = detectable_auc(summary.members, summary.non_members)
            row.update(
                {
                    f"mia_{attack}_auc": summary.auc,
                    f"mia_{attack}_auc_low": summary.auc_low,
                    f"mia_{attack}_auc_high": summary.auc_high,
                    f"mia_{attack}_conclusion": conclusion(
                        summary.auc_low > 0.5, detectable, auc_threshold, " AUC"
                    ),
                }
            )
            for bound in FPR_BOUNDS:
                tag = f"tpr{round(bound * 100)}"
                row.update(
                    {
                        f"mia_{attack}_{tag}": summary.tpr[bound],
                        f"mia_{attack}_{tag}_low": summary.tpr_low[bound],
                        f"mia_{attack}_{tag}_high": summary.tpr_high[bound],
                    }
                )
        row["mia_members"], row["mia_non_members"] = summary.members, summary.non_members
        row["mia_detectable_auc"] = detectable
        rows.append(row)
    return pd.DataFrame(rows)


def seed_rows(released: pd.DataFrame, membership: pd.DataFrame) -> pd.DataFrame:
    """The released-text records (one per run, method and seed, with `pipp`) joined with the membership
    rows (one per run, model and seed): one row per run, method and seed."""
    released = released.copy()
    for flag in ("dcr_closer_than_held_out", "dp_claim_rejected", "dp_null_testable"):  # seeds: a share
        if flag in released:
            released[flag] = released[flag].astype(float)
    return released.merge(membership, on=[*RUN_KEYS, "seed"], how="outer")


def audit_table(released: pd.DataFrame, membership: pd.DataFrame, methods: Mapping[str, str]) -> pd.DataFrame:
    """The table: the seeds' rows (`seed_rows`) averaged over seeds; base rows first in each run."""
    return seeds_averaged(seed_rows(released, membership), methods)


def seeds_averaged(joined: pd.DataFrame, methods: Mapping[str, str]) -> pd.DataFrame:
    """One row per run and method from `seed_rows`: numbers averaged over seeds, labels joined."""
    numeric = [
        c for c in joined.columns if c not in (*RUN_KEYS, "seed") and pd.api.types.is_numeric_dtype(joined[c])
    ]
    labels = [c for c in joined.columns if c not in (*RUN_KEYS, "seed", *numeric)]
    grouped = joined.groupby(RUN_KEYS, sort=False, dropna=False)
    table = grouped[numeric].mean().reset_index()
    for column in labels:  # conclusions and designs: the seeds' distinct ones
        table[column] = (
            grouped[column].agg(lambda s: "; ".join(dict.fromkeys(map(str, s.dropna()))) or None).to_numpy()
        )
    table.insert(4, "seeds", grouped["seed"].apply(lambda s: ",".join(map(str, sorted(s)))).to_numpy())
    order = {
        name: position
        for position, name in enumerate([CONTROL_MODEL, *methods, POSITIVE_CONTROL, NEGATIVE_CONTROL])
    }
    shown = {
        CONTROL_MODEL: BASE_DISPLAY,
        POSITIVE_CONTROL: POSITIVE_DISPLAY,
        NEGATIVE_CONTROL: NEGATIVE_DISPLAY,
    }
    table["Method"] = [shown.get(m) or methods.get(registry.base_method(m), m) for m in table["method"]]
    table = table.sort_values(
        ["dataset", "setting", "idset", "method"],
        key=lambda c: c.map(order) if c.name == "method" else c,
        kind="stable",
    )
    if "dcr_closer_than_held_out" in table:
        table["dcr_closer_than_held_out"] = table["dcr_closer_than_held_out"].map(
            lambda v: None if pd.isna(v) else bool(v >= 0.5)
        )
    return table.reset_index(drop=True)


def _interval(row: pd.Series, name: str, decimals: int = 2) -> str:
    value = row.get(name, math.nan)
    if pd.isna(value):
        return "-"
    low, high = row.get(f"{name}_low", math.nan), row.get(f"{name}_high", math.nan)
    cell = f"{value:.{decimals}f}"
    return cell if pd.isna(low) else f"{cell} [{low:.{decimals}f}, {high:.{decimals}f}]"


def _text_attack(row: pd.Series, attack: str) -> str:
    """A text attack's AUC, and its excess over the negative control where the row has one."""
    cell = _interval(row, f"text_mia_auc_{attack}")
    excess = row.get(f"text_mia_excess_{attack}", math.nan)
    if pd.isna(excess):
        return cell
    low, high = row[f"text_mia_excess_{attack}_low"], row[f"text_mia_excess_{attack}_high"]
    return f"{cell}; beyond control {excess:+.2f} [{low:+.2f}, {high:+.2f}]"


def _percent(value: Any) -> str:
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


def markdown_row(row: pd.Series) -> list[str]:
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
        *[_interval(row, f"mia_{attack}_auc") for attack in ATTACKS],
        tprs,
        str(row.get("mia_loss_conclusion") or "-").replace("nan", "-"),
        _text_attack(row, "cosine"),
        _text_attack(row, "ngram"),
        _text_attack(row, "reidentification"),
        _reidentification_ranks(row),
        closest,
        _percent(row.get("verbatim_share")),
        longest,
        _percent(row.get("any_identifier_leak_share")),
        "-" if pd.isna(row.get("pipp", math.nan)) else f"{row['pipp']:.1f}",
    ]


def with_verdicts(table: pd.DataFrame, per_seed: pd.DataFrame, gate: Gate) -> pd.DataFrame:
    """The table with each audited corpus's verdict (`plainsight.audit.gate`), judged per seed on
    `per_seed` (the worst seed wins) and listed per seed; the base model's and the negative control's
    rows, which released nothing learnt from private data, have none."""
    rows = []
    for row in table.to_dict("records"):
        if row["method"] in UNJUDGED:
            rows.append(dict.fromkeys(VERDICT_COLUMNS))
            continue
        keys = {key: row[key] for key in RUN_KEYS}
        seeds = per_seed[(per_seed[RUN_KEYS] == pd.Series(keys)).all(axis=1)]
        trained = row["method"] != POSITIVE_CONTROL and registry.method(row["method"]).trained
        judged = [(int(seed["seed"]), seed) for seed in seeds.to_dict("records")]
        rows.append({**seeds_verdict(judged, gate, trained), **fit_as_text(row, gate.documents_min)})
    return pd.concat([table, pd.DataFrame(rows, index=table.index, columns=list(VERDICT_COLUMNS))], axis=1)


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


def claim_check(row: Mapping[str, Any]) -> str:
    """Whether a method's leaks reject its own formal claim, or that this run is too small to tell."""
    if row.get("dp_null_testable") is False or row.get("dp_null_testable") == 0:
        needed = row.get("dp_null_controls_needed")
        size = f" (needs {int(needed):,} controls)" if pd.notna(needed) and needed != math.inf else ""
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
        "and that very test finds an excess of X with 80% power; `no leak detected (bounded <= U)`: not "
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


def markdown(table: pd.DataFrame, verbatim_ngram: int) -> str:
    header = [
        "Run",
        "Method",
        *[f"MIA AUC {ATTACK_NAMES[a]}" for a in ATTACKS],
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
    lines += ["| " + " | ".join(markdown_row(row)) + " |" for _, row in table.iterrows()]
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


def plot_roc(scores: pd.DataFrame, title: str, path: str | Path) -> None:
    """One panel per model (base first): the ROC curve of each attack, the diagonal for chance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import roc_curve

    models = list(dict.fromkeys(scores["model"]))
    base = scores[scores["model"] == CONTROL_MODEL]
    figure, axes = plt.subplots(1, len(models), figsize=(3.6 * len(models), 3.6), squeeze=False)
    for axis, model in zip(axes[0], models):
        attacked = attack_scores(scores[scores["model"] == model], base)
        for attack in ATTACKS:
            if model == CONTROL_MODEL and attack == "reference":
                continue
            fpr, tpr, _ = roc_curve(attacked["member"], attacked[attack])
            axis.plot(fpr, tpr, label=ATTACK_NAMES[attack])
        axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        axis.set(title=BASE_DISPLAY if model == CONTROL_MODEL else model, xlabel="FPR", ylabel="TPR")
        axis.legend(fontsize=7, loc="lower right")
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    with atomic_path(path) as staged:
        figure.savefig(staged, dpi=110, format="png")
    plt.close(figure)


def plot_distances(distances: Mapping[str, pd.DataFrame], title: str, path: str | Path) -> None:
    """Per method, the nearest-training-segment cosines of its generations beside those of held-out
    real text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(distances)
    figure, axis = plt.subplots(figsize=(1.3 * len(names) + 2.5, 3.8))
    synthetic = [distances[n].loc[distances[n]["kind"] == "synthetic", "cosine"].to_numpy() for n in names]
    held_out = np.concatenate(
        [distances[n].loc[distances[n]["kind"] == "held_out", "cosine"].to_numpy() for n in names[:1]]
    )
    axis.boxplot([held_out, *synthetic], tick_labels=["held-out real", *names])
    axis.axhline(float(np.median(held_out)), color="grey", linestyle=":", linewidth=1)
    axis.set(ylabel="cosine to the nearest real training segment", title=title)
    axis.tick_params(axis="x", labelrotation=30, labelsize=8)
    figure.tight_layout()
    with atomic_path(path) as staged:
        figure.savefig(staged, dpi=110, format="png")
    plt.close(figure)


def released_rows(
    records: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    summaries: Sequence[Mapping[str, float]],
) -> pd.DataFrame:
    """The released-text records with their run's keys and what its privacy summary gives (PIPP, the
    documents share)."""
    return pd.DataFrame(
        [
            {**run, **{k: v for k, v in record.items() if k not in ("method", "seed")}, **summary}
            for run, record, summary in zip(runs, records, summaries)
        ]
    )


def summary_pipp(summary: pd.DataFrame) -> float:
    """A run's PIPP (%) averaged over its paragraph ranges, from its privacy summary."""
    from plainsight.evaluation.privacy import AVERAGED_SEGMENT

    return float(summary.loc[summary["segment"] == AVERAGED_SEGMENT, "pipp"].iloc[0])


def run_pipp(summary_path: str | Path) -> float:
    """The run's PIPP (%) averaged over its paragraph ranges, from its privacy summary file."""
    return summary_pipp(pd.read_parquet(summary_path))


def summary_evidence(summary: pd.DataFrame) -> dict[str, float]:
    """A run's PIPP and its documents share with its interval, from its privacy summary."""
    return {"pipp": summary_pipp(summary), **documents_share(summary)}


def run_summary(summary_path: str | Path) -> dict[str, float]:
    """`summary_evidence` of a privacy summary file."""
    return summary_evidence(pd.read_parquet(summary_path))


def read_tables(paths: Sequence[str]) -> pd.DataFrame | None:
    """The CSV tables at `paths` as one frame; None where none is given."""
    return pd.concat([pd.read_csv(path) for path in paths], ignore_index=True) if paths else None


def with_utility(released: pd.DataFrame, utility: pd.DataFrame | None) -> pd.DataFrame:
    """The released-text rows with their method's downstream macro-F1, chance's and the real ceiling's,
    where a utility table (`plainsight.report.utility_table`) is given."""
    if utility is None:
        return released
    evidence = [
        utility_evidence(utility, row, registry.base_method(row["method"])) for _, row in released.iterrows()
    ]
    return pd.concat([released, pd.DataFrame(evidence, index=released.index)], axis=1)


def with_canary_evidence(released: pd.DataFrame, canaries: pd.DataFrame | None) -> pd.DataFrame:
    """The released-text rows with the canary attacks' epsilon bound and what their size could certify
    (`plainsight.audit.canary_table.canary_evidence`), where canary table rows are given."""
    if canaries is None:
        return released
    from plainsight.audit.canary_table import RUN_KEYS as CANARY_KEYS
    from plainsight.audit.canary_table import canary_evidence

    evidence = canary_evidence(canaries).astype({"seed": released["seed"].dtype})
    return released.merge(evidence, on=CANARY_KEYS, how="left")


def audit_seed_rows(
    released: pd.DataFrame,
    membership: pd.DataFrame,
    canaries: pd.DataFrame | None = None,
    utility: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The audit rows of each run, corpus and seed, as the gate judges them: the released-text rows
    (`released_rows`) with the canary attacks' evidence and the utility table's fitness evidence where
    given, joined with the adapter attacks' rows (`membership_rows`, keyed by run and seed). The privacy
    audit table and a release bundle's own audit both build their rows here."""
    return seed_rows(with_utility(with_canary_evidence(released, canaries), utility), membership)


@dataclass(frozen=True)
class AuditTableFiles:
    """The files of the audit table: the released-text records and privacy summaries (one per run, method
    and seed, parallel to `runs`), the membership scores and the positive controls' records (one per run
    and seed, parallel to `score_runs`), the negative controls' records (the same), and the canary
    tables the verdict reads."""

    released: Sequence[str]
    runs: Sequence[Mapping[str, Any]]
    summaries: Sequence[str]
    scores: Sequence[str]
    score_runs: Sequence[Mapping[str, Any]]
    controls: Sequence[str] = ()
    canaries: Sequence[str] = ()
    utility: Sequence[str] = ()  # the utility table, for the fitness statement beside each verdict
    negative_controls: Sequence[str] = ()  # the negative controls' records, parallel to `score_runs`


def control_rows(paths: Sequence[str], name: str, score_runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The released-text rows of one control's records (`paths`, parallel to `score_runs`), keyed `name`;
    a control has no PIPP of its own."""
    from plainsight.io import read_json

    return released_rows(
        [read_json(p) for p in paths],
        [{**run, "method": name} for run in score_runs[: len(paths)]],
        [{"pipp": math.nan}] * len(paths),
    )


def build_privacy_audit(
    files: AuditTableFiles, methods: Mapping[str, str], resamples: int, gate: Gate | None = None
) -> pd.DataFrame:
    """The audit table of `files`, with each corpus's verdict under `gate`."""
    from plainsight.io import read_json

    released = released_rows(
        [read_json(p) for p in files.released], files.runs, [run_summary(p) for p in files.summaries]
    )
    controls = [
        control_rows(paths, name, files.score_runs)
        for name, paths in ((POSITIVE_CONTROL, files.controls), (NEGATIVE_CONTROL, files.negative_controls))
    ]
    membership = pd.concat(
        [
            membership_rows(
                pd.read_parquet(path),
                resamples,
                int(run["seed"]),
                (gate or Gate()).adapter_membership_auc_max,
            ).assign(**run)
            for path, run in zip(files.scores, files.score_runs)
        ],
        ignore_index=True,
    )
    per_seed = audit_seed_rows(
        pd.concat([released, *controls], ignore_index=True),
        membership,
        read_tables(files.canaries),
        read_tables(files.utility),
    )
    table = seeds_averaged(per_seed, methods)
    return with_verdicts(table, per_seed, gate) if gate is not None else table


def write_privacy_audit(
    table: pd.DataFrame, verbatim_ngram: int, csv_path: str | Path, markdown_path: str | Path
) -> None:
    """Rule `privacy_audit_table`'s outputs: the table as CSV, and as Markdown with its notes."""
    from plainsight.io import write_text

    with atomic_path(csv_path) as staged:
        table.to_csv(staged, index=False)
    write_text(markdown(table, verbatim_ngram), markdown_path)
