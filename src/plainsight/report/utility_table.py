"""The utility table (`results/tables/{dataset}/utility.{csv,md}`) and its plots.

One row per (dataset, setting, idset, method) and one real-data row per run: the means over seeds
of the measures of `plainsight.evaluation.utility_measures`. Plots per run: the length
distributions of every corpus beside the real one, and each method's downstream macro-F1 against
the real-trained ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from plainsight.audit import NEGATIVE_CONTROL
from plainsight.evaluation.diversity import words
from plainsight.evaluation.downstream import CHANCE, NOT_MEASURED, REAL, REAL_SAMPLE
from plainsight.io import atomic_path, write_text
from plainsight.methods.registry import base_method
from plainsight.report.audit_verdict import RUN_COLUMNS
from plainsight.report.figures import pyplot, save_png

REAL_DISPLAY = "Real training data (ceiling)"
REAL_SAMPLE_DISPLAY = "Real training data, as many texts as a corpus"
CHANCE_DISPLAY = "Chance (the best rule that ignores the text)"
ZERO_LEARNING_DISPLAY = "Zero learning (the base model from fictional codes alone)"
# the rows with no synthetic corpus of their own
REAL_ROWS = (REAL, CHANCE, REAL_SAMPLE)
# The rows a method's scores are read beside: the real rows and the zero-learning corpus (the audit's
# negative control), which says what the base model knew without the private data.
REFERENCE_ROWS = (*REAL_ROWS, NEGATIVE_CONTROL)
# (column, Markdown label, decimals, percent); a column with `_low`/`_high` shows its interval.
COLUMNS: tuple[tuple[str, str, int, bool], ...] = (
    ("macro_f1", "Downstream macro-F1", 3, False),
    ("accuracy", "Accuracy", 3, False),
    ("equalised_odds_gap", "EO gap", 2, False),
    ("adherence_exact", "Adherence exact (%)", 0, True),
    ("adherence_near", "Adherence near (%)", 0, True),
    ("adherence_types", "Types present (%)", 0, True),
    ("self_bleu", "Self-BLEU", 3, False),
    ("distinct1", "Distinct-1", 3, False),
    ("distinct2", "Distinct-2", 3, False),
    ("mean_words", "Words", 0, False),
    ("length_ks", "Length KS", 2, False),
    ("real_vocabulary_share", "Real vocabulary (%)", 0, True),
    ("entity_type_jsd", "Type JSD", 2, False),
    ("fid", "FID", 3, False),
)
TEXT_COLUMNS: tuple[str, ...] = ("label_source", "labels")


def utility_table(measures: pd.DataFrame, methods: Mapping[str, str]) -> pd.DataFrame:
    """Means over seeds per (run, method): the reference rows first in each run, then `methods`' order."""
    measures = measures.assign(
        method=measures["method"].map(lambda m: m if m in REFERENCE_ROWS else base_method(m))
    )
    order = {key: n - len(REFERENCE_ROWS) for n, key in enumerate(REFERENCE_ROWS)}
    order |= {method: n for n, method in enumerate(methods)}
    unknown = sorted(set(measures["method"]) - set(order))
    if unknown:
        raise ValueError(f"utility measures for methods without a display name: {', '.join(unknown)}")
    # why the downstream task was not measured, where a run's measures say so
    text = [*TEXT_COLUMNS, *([NOT_MEASURED] if NOT_MEASURED in measures else [])]
    numeric = [c for c in measures.columns if c not in (*RUN_COLUMNS, "method", "seed", *text)]
    grouped = measures.groupby([*RUN_COLUMNS, "method"], sort=False)
    table = grouped[numeric].mean().join(grouped["seed"].nunique().rename("seeds"))
    table = table.join(grouped[text].first()).reset_index()
    table["seeds"] = table["seeds"].where(~table["method"].isin(REAL_ROWS), 0)
    table["order"] = table["method"].map(order)
    table = table.sort_values([*RUN_COLUMNS, "order"], kind="stable").drop(columns="order")
    table.insert(
        3,
        "display",
        table["method"].map(
            {
                REAL: REAL_DISPLAY,
                CHANCE: CHANCE_DISPLAY,
                REAL_SAMPLE: REAL_SAMPLE_DISPLAY,
                NEGATIVE_CONTROL: ZERO_LEARNING_DISPLAY,
                **methods,
            }
        ),
    )
    return table.reset_index(drop=True)


def run_utility_table(measure_files: Sequence[str | Path], names: Mapping[str, str]) -> pd.DataFrame | None:
    """`utility_table` of the utility measures files given (one run's, such as a release bundle's), each
    method they hold under its name in `names` (the paper tables' display names), or its key where they
    name none; None where no file is given."""
    if not measure_files:
        return None
    measures = pd.concat([pd.read_parquet(path) for path in measure_files], ignore_index=True)
    methods = [base_method(m) for m in measures["method"] if m not in REFERENCE_ROWS]
    return utility_table(measures, {m: names.get(m, m) for m in dict.fromkeys(methods)})


def _cell(row: Mapping, column: str, decimals: int, percent: bool) -> str:
    value = row.get(column, math.nan)
    if pd.isna(value):
        return "—"
    scale = 100 if percent else 1
    cell = f"{scale * value:.{decimals}f}"
    low, high = row.get(f"{column}_low", math.nan), row.get(f"{column}_high", math.nan)
    if not (pd.isna(low) or pd.isna(high)):
        cell += f" [{scale * low:.{decimals}f}, {scale * high:.{decimals}f}]"
    return cell


def _synthetic_label_source(run: pd.DataFrame) -> str:
    synthetic = run[~run["method"].isin(REAL_ROWS)]
    return str(synthetic["label_source"].iloc[0]) if not synthetic.empty else "—"


def not_measured(run: pd.DataFrame) -> str:
    """Why a run's downstream task was not measured, or "" where it was."""
    reasons = run[NOT_MEASURED].dropna() if NOT_MEASURED in run else ()
    return str(reasons.iloc[0]) if len(reasons) else ""


def _downstream_line(run: pd.DataFrame) -> str:
    reason = not_measured(run)
    if reason:
        return f"Downstream task not measured: {reason}."
    labels, source = run["labels"].iloc[0], _synthetic_label_source(run)
    return f"Downstream labels: {labels}; synthetic texts labelled {source}."


def markdown_utility_table(table: pd.DataFrame, notes: Sequence[str]) -> str:
    """One Markdown table per run, then the notes."""
    lines = ["# Utility of the synthetic corpora", ""]
    for (dataset, setting, idset), run in table.groupby(list(RUN_COLUMNS), sort=False):
        lines += [
            f"## {dataset.upper()}, private entities {setting}, {idset} identifiers",
            "",
            _downstream_line(run),
            "",
        ]
        header = ["Method", *(label for _, label, _, _ in COLUMNS), "Seeds"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in run.to_dict("records"):
            cells = [
                row["display"],
                *(_cell(row, column, decimals, percent) for column, _, decimals, percent in COLUMNS),
                str(row["seeds"] or "—"),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def utility_notes(classifier: str) -> list[str]:
    """What each column measures (docs/methods-and-metrics.md#utility-of-a-synthetic-corpus has more)."""
    return [
        f"Downstream: a {classifier} classifier trained on the corpus, scored on the real test split "
        "(macro-F1 over the labels; accuracy: the label set exactly right), 95% bootstrap intervals over "
        "test documents; the real row is trained on the real training split. EO gap: the equalised-odds "
        "gap by group (largest difference in true- or false-positive rate between groups, mean over "
        "labels); groups of a few documents make it noisy. Chance: the best scores a rule that ignores the "
        "text can expect (multi-label: every label to every text, a label's F1 2p / (1 + p) with p its test "
        "share; single-label: labels drawn at their test shares); a corpus at or below it taught the "
        "classifier nothing about the labels. The last real row trains on a "
        "seeded sample of real training segments as large as the largest corpus, so that a corpus's gap to "
        "the ceiling can be told apart from its smaller size. Zero learning: the corpus the base model "
        "writes from the fictional codes alone, with no adapter and no real text in its prompts (the "
        "audit's negative control); a method's lead over it is what the private data added, the rest the "
        "base model knew anyway.",
        "Adherence: mean share of a generation's fictional values in its text, exactly and with near "
        "variants, and of its code's entity types present; — for a method that shows no code.",
        "Self-BLEU: BLEU-4 of each text against the others (1: all the same); distinct-n over the corpus's "
        "pooled n-grams. The real row takes these on a sample of real training segments as large as the "
        "largest corpus.",
        "Length KS: Kolmogorov-Smirnov statistic of the word counts against the real training segments; "
        "Real vocabulary: the share of the corpus's distinct words that the real training text uses; Type "
        "JSD: Jensen-Shannon distance between the entity types of the fictional values the texts hold and "
        "those of the real codes; FID: Fréchet distance of MiniLM features to the real test segments MAUVE "
        "compares with.",
    ]


def write_utility_table(
    table: pd.DataFrame, markdown: str, csv_path: str | Path, markdown_path: str | Path
) -> None:
    with atomic_path(csv_path) as tmp:
        table.to_csv(tmp, index=False)
    write_text(markdown, markdown_path)


# --- plots ---------------------------------------------------------------------------------------


def plot_lengths(texts: Mapping[str, Sequence[str]], title: str, path: str | Path) -> None:
    """Word counts per text of each corpus (display name -> texts) as overlaid step histograms."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
    lengths = {name: [len(words(t)) for t in corpus] for name, corpus in texts.items()}
    top = max((max(v) for v in lengths.values() if v), default=1)
    bins = list(range(0, top + max(1, top // 30) + 1, max(1, top // 30)))
    for name, values in lengths.items():
        axis.hist(
            values,
            bins=bins,
            density=True,
            histtype="step",
            linewidth=2 if name == REAL_DISPLAY else 1.2,
            label=f"{name} (n={len(values)})",
        )
    axis.set_xlabel("words per text")
    axis.set_ylabel("share of texts (density)")
    axis.legend(fontsize=8)
    axis.set_title(title)
    save_png(plt, figure, path)


def plot_downstream_f1(table: pd.DataFrame, title: str, path: str | Path) -> None:
    """One bar per method (downstream macro-F1 with its interval); the real ceiling, chance and the
    zero-learning corpus as lines."""
    plt = pyplot()
    real, matched, chance, zero = (
        table[table["method"] == key] for key in (REAL, REAL_SAMPLE, CHANCE, NEGATIVE_CONTROL)
    )
    rows = table[~table["method"].isin(REFERENCE_ROWS)]
    figure, axis = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
    errors = [
        (rows["macro_f1"] - rows["macro_f1_low"]).clip(lower=0),
        (rows["macro_f1_high"] - rows["macro_f1"]).clip(lower=0),
    ]
    axis.bar(rows["display"], rows["macro_f1"], yerr=errors, capsize=4, color="tab:blue")
    if not real.empty:
        ceiling = real.iloc[0]
        axis.axhline(
            ceiling["macro_f1"],
            color="black",
            linestyle="--",
            label=f"{REAL_DISPLAY}: {ceiling['macro_f1']:.2f}",
        )
        axis.axhspan(ceiling["macro_f1_low"], ceiling["macro_f1_high"], color="grey", alpha=0.2)
    if not matched.empty:
        same_size = matched.iloc[0]
        axis.axhline(
            same_size["macro_f1"],
            color="tab:orange",
            linestyle=":",
            label=f"real, {int(same_size['train_texts'])} texts: {same_size['macro_f1']:.2f}",
        )
    if not chance.empty:
        axis.axhline(
            chance.iloc[0]["macro_f1"],
            color="tab:red",
            linestyle="-.",
            label=f"chance: {chance.iloc[0]['macro_f1']:.2f}",
        )
    if not zero.empty:
        axis.axhline(
            zero.iloc[0]["macro_f1"],
            color="tab:green",
            linestyle=(0, (1, 3)),
            label=f"zero learning: {zero.iloc[0]['macro_f1']:.2f}",
        )
    if not (real.empty and matched.empty and chance.empty and zero.empty):
        axis.legend(fontsize=8)
    axis.set_ylim(0, 1)
    axis.set_ylabel("macro-F1 on the real test split")
    axis.set_title(title)
    axis.tick_params(axis="x", labelrotation=20)
    save_png(plt, figure, path)


def utility_plots(
    measures: pd.DataFrame,
    docs: pd.DataFrame,
    corpora: Sequence[pd.DataFrame],
    methods: Mapping[str, str],
    lengths_path: str | Path,
    downstream_path: str | Path,
) -> None:
    """Both plots of one run: word counts of every corpus (seeds pooled) beside the real training
    segments, and the downstream macro-F1 bar chart."""
    run = measures.iloc[0]
    title = f"{run['dataset'].upper()}, private entities {run['setting']}, {run['idset']} identifiers"
    texts: dict[str, list[str]] = {REAL_DISPLAY: docs[docs["split"] == "train"]["text"].astype(str).tolist()}
    names = {**methods, NEGATIVE_CONTROL: ZERO_LEARNING_DISPLAY}
    for corpus in corpora:
        name = (
            names.get(base_method(str(corpus["method"].iloc[0])), str(corpus["method"].iloc[0]))
            if len(corpus)
            else None
        )
        if name:
            texts.setdefault(name, []).extend(corpus["text"].astype(str))
    plot_lengths(texts, f"{title}: words per text", lengths_path)
    plot_downstream_f1(
        utility_table(measures, methods), f"{title}: train on synthetic, test on real", downstream_path
    )
