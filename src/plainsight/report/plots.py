"""The privacy-utility picture: leakage against MAUVE, and copying (ROUGE-L) against perplexity.

Our methods are filled markers with 95% bars: for PIPP and ROUGE-L the interval pooled over
every generation of every seed (`plainsight.evaluation.intervals`), for MAUVE and perplexity
the t interval over seeds; the paper's numbers for the same table cells are hollow markers of
the same colour, so a reader sees at once where a method sits and how far the demo run is from
the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.evaluation.privacy import AVERAGED_SEGMENT, pooled_interval
from plainsight.evaluation.utility import summary_rows
from plainsight.methods import registry
from plainsight.report.figures import pyplot, save_png
from plainsight.report.table_format import confidence_half_width, mean_over_seeds
from plainsight.report.table_specs import load_table_specs

# (x metric, y metric, x label, y label, log-scale y) of each panel. Perplexity is on a log scale:
# a small demo model and the paper's 1.3B model differ by orders of magnitude.
PANELS: tuple[tuple[str, str, str, str, bool], ...] = (
    (
        "pipp",
        "mauve",
        "PIPP (%): generations leaking a private value",
        "MAUVE (higher: closer to real text)",
        False,
    ),
    (
        "rougeL",
        "perplexity",
        "ROUGE-L against the source text (lower: more synthetic)",
        "Perplexity on real test text (lower: more useful)",
        True,
    ),
)
# `plots.utility_axis: downstream_f1` puts this panel first: the downstream macro-F1 of a classifier
# trained on the corpus and tested on real text (plainsight.evaluation.downstream), against PIPP.
DOWNSTREAM_PANEL: tuple[str, str, str, str, bool] = (
    "pipp",
    "downstream_f1",
    "PIPP (%): generations leaking a private value",
    "Downstream macro-F1 (train on synthetic, test on real)",
    False,
)
PLOTTED_METRICS: tuple[str, ...] = ("pipp", "mauve", "rougeL", "perplexity", "downstream_f1")
POOLED_METRICS: tuple[str, ...] = ("pipp", "rougeL")  # per-generation metrics: intervals over all generations


def method_points(
    runs: pd.DataFrame, methods: Mapping[str, str], generations: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per method (display name), the mean over seeds of every plotted metric and its 95% interval
    (`<metric>_low`, `<metric>_high`): pooled over the per-generation metrics where they are given,
    else the t interval over seeds.

    `runs` has one row per (method, seed) with the plotted metrics as columns (NaN where missing).
    """
    rows = []
    for method, display in methods.items():
        group = runs[runs["method"] == method]
        if group.empty:
            continue
        row: dict[str, Any] = {"method": display}
        for metric in PLOTTED_METRICS:
            values = group[metric].to_numpy(dtype=float) if metric in group else []
            mean, half_width = mean_over_seeds(values), confidence_half_width(values)
            row[metric], row[f"{metric}_low"], row[f"{metric}_high"] = (
                mean,
                mean - half_width,
                mean + half_width,
            )
            if generations is not None and metric in POOLED_METRICS:
                own = generations[generations["method"] == method]
                if not own.empty:
                    row[f"{metric}_low"], row[f"{metric}_high"] = pooled_interval(
                        own, metric, registry.method(method).family
                    )
        rows.append(row)
    return pd.DataFrame(rows)


def panels(utility_axis: str = "mauve") -> tuple[tuple[str, str, str, str, bool], ...]:
    """The plot's panels: PANELS, with the downstream panel first for `utility_axis: downstream_f1`."""
    if utility_axis == "mauve":
        return PANELS
    if utility_axis == "downstream_f1":
        return (DOWNSTREAM_PANEL, *PANELS[1:])
    raise ValueError(f"plots.utility_axis {utility_axis!r} is not mauve or downstream_f1")


def seed_privacy_utility(
    privacy_summaries: pd.DataFrame, utility: pd.DataFrame, downstream: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per (method, seed): the segment-averaged privacy summary joined with its utility record
    and, where given, the downstream macro-F1 of the utility measures (`measures.parquet` rows)."""
    privacy = privacy_summaries[privacy_summaries["segment"] == AVERAGED_SEGMENT][
        ["method", "seed", "pipp", "rougeL"]
    ]
    rows = privacy.merge(
        utility[["method", "seed", "mauve", "perplexity"]], on=["method", "seed"], how="outer"
    )
    if downstream is not None:
        f1 = downstream[["method", "seed", "macro_f1"]].rename(columns={"macro_f1": "downstream_f1"})
        rows = rows.merge(f1, on=["method", "seed"], how="left")
    return rows


def paper_points(specs: Mapping[str, Any], dataset: str, setting: str, idset: str) -> pd.DataFrame:
    """The paper's numbers for the plotted metrics, from the tables that report this dataset and setting."""
    values: dict[str, dict[str, float]] = {}
    for spec in specs["tables"].values():
        if spec["dataset"] != dataset or spec["idset"] != idset or spec.get("model"):
            continue
        for key, column in spec["columns"].items():
            metric = column.get("metric", key)
            column_setting = column.get("setting", spec["setting"])
            if metric not in PLOTTED_METRICS or column_setting != setting:
                continue
            for method, cells in spec["paper"].items():
                if key in cells and cells[key][0] is not None:
                    values.setdefault(method, {}).setdefault(metric, float(cells[key][0]))
    rows = [{"method": specs["methods"][m], **v} for m, v in values.items()]
    return pd.DataFrame(rows, columns=["method", *PLOTTED_METRICS])


def plot_privacy_utility(
    ours: pd.DataFrame, paper: pd.DataFrame, title: str, path: str | Path, utility_axis: str = "mauve"
) -> None:
    """Two panels (see `panels`), one colour per method; written atomically as PNG."""
    shown = panels(utility_axis)
    plt = pyplot()

    names = list(dict.fromkeys([*ours.get("method", []), *paper.get("method", [])]))
    colours = {name: plt.get_cmap("tab10")(i % 10) for i, name in enumerate(names)}
    figure, axes = plt.subplots(1, len(shown), figsize=(13, 5.5), constrained_layout=True)
    for axis, (x, y, x_label, y_label, log_y) in zip(axes, shown):
        for row in ours.to_dict("records"):
            if pd.isna(row.get(x)) or pd.isna(row.get(y)):
                continue
            axis.errorbar(
                row[x],
                row[y],
                xerr=_bar(row, x),
                yerr=_bar(row, y),
                fmt="o",
                markersize=8,
                capsize=3,
                color=colours[row["method"]],
                label=row["method"],
            )
        for row in paper.to_dict("records"):
            if pd.isna(row.get(x)) or pd.isna(row.get(y)):
                continue
            axis.scatter(
                row[x],
                row[y],
                s=70,
                facecolors="none",
                edgecolors=[colours[row["method"]]],
                linewidths=1.5,
                label=f"{row['method']} (paper)",
            )
        if log_y:
            axis.set_yscale("log")
        axis.set_xlabel(x_label)
        axis.set_ylabel(y_label)
        axis.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    for axis in axes[1:]:
        more_handles, more_labels = axis.get_legend_handles_labels()
        for handle, label in zip(more_handles, more_labels):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=4,
        fontsize=8,
        title="filled: this run (95% intervals: PIPP, ROUGE-L over all generations; "
        "MAUVE, perplexity over seeds); hollow: the paper",
    )
    figure.suptitle(title)
    save_png(plt, figure, path)


def _bar(row: Mapping[str, Any], metric: str) -> list[list[float]] | None:
    """Matplotlib's asymmetric error extent [[below], [above]] of a point, or no bar."""
    low, high = row[f"{metric}_low"], row[f"{metric}_high"]
    if pd.isna(low) or pd.isna(high):
        return None
    return [[max(0.0, row[metric] - low)], [max(0.0, high - row[metric])]]


@dataclass(frozen=True)
class PlotFiles:
    """What the picture of one dataset reads: the paper's table specs, and per run of its methods the
    privacy summaries, utility records and per-generation metrics; the utility measures where the
    utility axis is downstream."""

    paper_specs: str | Path
    summaries: Sequence[str]
    utility: Sequence[str]
    generations: Sequence[str]
    measures: str | Path | None = None


def dataset_privacy_utility_plot(
    files: PlotFiles,
    dataset: str,
    setting: str,
    idset: str,
    path: str | Path,
    utility_axis: str = "perplexity",
) -> None:
    """Rule `privacy_utility_plot`: one dataset's methods beside the paper's points."""
    specs = load_table_specs(files.paper_specs)
    privacy = pd.concat([pd.read_parquet(p) for p in files.summaries], ignore_index=True)
    per_generation = pd.concat([pd.read_parquet(p) for p in files.generations], ignore_index=True)
    downstream = pd.read_parquet(files.measures) if files.measures else None
    ours = method_points(
        seed_privacy_utility(privacy, summary_rows(files.utility, [setting]), downstream),
        specs["methods"],
        per_generation,
    )
    title = f"{dataset.upper()}, private entities {setting}, {idset} identifiers: privacy against utility"
    plot_privacy_utility(ours, paper_points(specs, dataset, setting, idset), title, path, utility_axis)
