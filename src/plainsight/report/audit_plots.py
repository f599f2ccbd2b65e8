"""The audit's plots: the membership attacks' ROC curves and the closest-record distances of one run
(rule `privacy_audit_plots`), and the canaries' AUC against their insertion count (rule
`canary_table`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from plainsight.audit.canary_attacks import ATTACKS, CANARY_ATTACK_NAMES
from plainsight.audit.canary_table import PER_PERSON
from plainsight.audit.privacy_audit_table import BASE_DISPLAY
from plainsight.audit.roc import CONTROL_MODEL, MEMBERSHIP_ATTACK_NAMES, MEMBERSHIP_ATTACKS, attack_scores
from plainsight.report.figures import pyplot, save_png


def plot_roc(scores: pd.DataFrame, title: str, path: str | Path) -> None:
    """One panel per model (base first): the ROC curve of each attack, the diagonal for chance."""
    plt = pyplot()
    from sklearn.metrics import roc_curve

    models = list(dict.fromkeys(scores["model"]))
    base = scores[scores["model"] == CONTROL_MODEL]
    figure, axes = plt.subplots(1, len(models), figsize=(3.6 * len(models), 3.6), squeeze=False)
    for axis, model in zip(axes[0], models):
        attacked = attack_scores(scores[scores["model"] == model], base)
        for attack in MEMBERSHIP_ATTACKS:
            if model == CONTROL_MODEL and attack == "reference":
                continue
            fpr, tpr, _ = roc_curve(attacked["member"], attacked[attack])
            axis.plot(fpr, tpr, label=MEMBERSHIP_ATTACK_NAMES[attack])
        axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        axis.set(title=BASE_DISPLAY if model == CONTROL_MODEL else model, xlabel="FPR", ylabel="TPR")
        axis.legend(fontsize=7, loc="lower right")
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    save_png(plt, figure, path)


def plot_distances(distances: Mapping[str, pd.DataFrame], title: str, path: str | Path) -> None:
    """Per method, the nearest-training-segment cosines of its generations beside those of held-out
    real text."""
    plt = pyplot()

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
    save_png(plt, figure, path)


def plot_auc(table: pd.DataFrame, path: str | Path) -> None:
    """AUC against the insertion count, one line per method and panel per attack, with intervals."""
    plt = pyplot()

    table = table[table["bound_per"] != PER_PERSON]  # its x axis counts insertions, not documents
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
        axis.set(
            title=CANARY_ATTACK_NAMES[attack], xlabel="insertions per canary", ylabel="AUC", ylim=(0, 1.05)
        )
        axis.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    save_png(plt, figure, path)
