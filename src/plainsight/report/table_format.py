"""Paper-style result tables: mean ± 95% confidence half-width over seeds, and ours beside the paper's.

What each table shows (title, metric columns, the paper's numbers) lives in
resources/paper_tables.yaml; nothing here is specific to one table.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from plainsight.audit.evidence import rate_unit
from plainsight.audit.protection import protected, short_name
from plainsight.evaluation.intervals import paired_leaks
from plainsight.evaluation.measures import leak_measure, leak_measures
from plainsight.evaluation.privacy import AVERAGED_SEGMENT, pooled_interval
from plainsight.io import write_text
from plainsight.methods import registry
from plainsight.report.table_specs import table_settings

METHOD_COLUMN = "Method"
SEEDS_COLUMN = "Seeds"
HALF_WIDTH_SUFFIX = " ±"
POOLED_SUFFIXES = (" pooled low", " pooled high")
MISSING_CELL = "—"

# This project's additions, shown when the summaries have them; the paper has no such columns.
PARTIAL_LEAK_COLUMN: dict[str, Any] = {
    "key": "partial_leak",
    "metric": "partial_leak",
    "label": "Partial leak (% of generations)",
    "decimals": 2,
}  # beside PIPP
NEAR_LEAK_COLUMN: dict[str, Any] = {
    "key": "near_leak",
    "metric": "near_leak",
    "label": "Near leak (% of generations)",
    "decimals": 2,
}  # after partial leaks
DOCUMENTS_COLUMN: dict[str, Any] = {
    "key": "documents",
    "metric": "documents",
    "label": "Documents (% of generations)",
    "decimals": 1,
}  # last


ADDED_COLUMNS = (PARTIAL_LEAK_COLUMN, NEAR_LEAK_COLUMN, DOCUMENTS_COLUMN)


def table_columns(spec: Mapping[str, Any], available: Collection[str] = ()) -> list[dict[str, Any]]:
    """The metric columns of a table, in order: key, metric (the key unless given), label, decimals,
    and the setting the column reads (only for tables over several settings); with this project's
    additions (partial and near leaks, documents) whose metric is among the `available` ones."""
    columns = [{"key": key, "metric": key, **column} for key, column in spec["columns"].items()]
    after = next((i + 1 for i, c in enumerate(columns) if c["metric"] == "pipp"), len(columns))
    for added in (PARTIAL_LEAK_COLUMN, NEAR_LEAK_COLUMN):
        if added["metric"] in available:
            columns.insert(after, added)
            after += 1
    if DOCUMENTS_COLUMN["metric"] in available:
        columns.append(DOCUMENTS_COLUMN)
    return columns


# --- statistics --------------------------------------------------------------------------------


def _finite(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[~np.isnan(array)]


def mean_over_seeds(values: Sequence[float]) -> float:
    """The mean of the defined values; NaN when there are none."""
    finite = _finite(values)
    return float(finite.mean()) if finite.size else math.nan


def confidence_half_width(values: Sequence[float]) -> float:
    """Half-width of the 95% confidence interval of the mean over seeds (t, n - 1 degrees of freedom).

    Undefined values are left out; with fewer than two values there is no interval (NaN).
    """
    finite = _finite(values)
    n = finite.size
    if n < 2:
        return math.nan
    return float(stats.t.ppf(0.975, n - 1) * finite.std(ddof=1) / math.sqrt(n))


# --- tables ------------------------------------------------------------------------------------


def build_table(
    spec: Mapping[str, Any],
    summaries: pd.DataFrame,
    methods: Mapping[str, str],
    generations: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per method that has summaries, in the order of `methods` (key -> display name).

    Uses the segment-averaged summary rows, one per seed; each metric gets its mean over
    seeds and a "<label> ±" half-width column; with the per-generation metrics of the runs
    (privacy tables), also "<label> pooled low/high": the 95% interval over every generation.
    """
    averaged = summaries[summaries["segment"] == AVERAGED_SEGMENT]
    unknown = sorted(set(averaged["method"]) - set(methods))
    if unknown:
        raise ValueError(f"summaries for methods without a display name: {', '.join(map(str, unknown))}")
    columns = table_columns(spec, summaries.columns)
    rows = []
    for method, display in methods.items():
        runs = averaged[averaged["method"] == method]
        if runs.empty:
            continue
        if runs.duplicated(["seed", "setting"] if "setting" in runs.columns else ["seed"]).any():
            raise ValueError(f"method {method}: more than one averaged summary for a seed")
        row: dict[str, Any] = {METHOD_COLUMN: display}
        for column in columns:
            selected = runs if "setting" not in column else runs[runs["setting"] == column["setting"]]
            values = selected[column["metric"]].to_numpy(dtype=float)
            row[column["label"]] = mean_over_seeds(values)
            row[column["label"] + HALF_WIDTH_SUFFIX] = confidence_half_width(values)
            if generations is not None:
                pooled = pooled_interval(
                    generations[generations["method"] == method],
                    column["metric"],
                    registry.method(method).family,
                )
                row.update(zip((column["label"] + s for s in POOLED_SUFFIXES), pooled))
        row[SEEDS_COLUMN] = int(runs["seed"].nunique())
        rows.append(row)
    suffixes = ("", HALF_WIDTH_SUFFIX, *(POOLED_SUFFIXES if generations is not None else ()))
    labels = [c["label"] + suffix for c in columns for suffix in suffixes]
    return pd.DataFrame(rows, columns=[METHOD_COLUMN, *labels, SEEDS_COLUMN])


def format_cell(
    mean: float, half_width: float, decimals: int, pooled: tuple[float, float] = (math.nan, math.nan)
) -> str:
    """A Markdown cell: mean ± half-width (the mean alone for a single run), then the pooled interval
    in brackets where there is one; a dash for no value."""
    if pd.isna(mean):
        return MISSING_CELL
    cell = (
        f"{mean:.{decimals}f}" if pd.isna(half_width) else f"{mean:.{decimals}f} ± {half_width:.{decimals}f}"
    )
    if not any(pd.isna(bound) for bound in pooled):
        cell += f" [{pooled[0]:.{decimals}f}, {pooled[1]:.{decimals}f}]"
    return cell


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _seeds_note(seeds: pd.Series, pooled: bool) -> str:
    counts = sorted({int(n) for n in seeds})
    if not counts:
        return "No results yet."
    span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    noun = "seed" if counts == [1] else "seeds"
    note = (
        f"Mean ± 95% confidence-interval half-width over {span} {noun} "
        f"(t distribution, n - 1 degrees of freedom, as in the paper); a single run shows the mean alone."
    )
    if pooled:
        note += (
            " In brackets: the 95% interval over every generation of every seed (Wilson score for PIPP, "
            "partial and near leaks and documents; a seeded bootstrap over generations for ELP and ROUGE)."
        )
    return note


def markdown_table(table: pd.DataFrame, spec: Mapping[str, Any], notes: Sequence[str] = ()) -> str:
    """The table as Markdown: a title, "mean ± half-width [pooled interval]" cells and its notes."""
    columns = table_columns(spec, [c["metric"] for c in ADDED_COLUMNS if c["label"] in table.columns])
    pooled = columns[0]["label"] + POOLED_SUFFIXES[0] in table.columns
    header = [METHOD_COLUMN, *(c["label"] for c in columns), SEEDS_COLUMN]
    lines = [
        f"### {spec['title']}",
        "",
        _markdown_row(header),
        "| " + " | ".join([":---", *["---:"] * (len(header) - 1)]) + " |",
    ]
    for row in table.to_dict("records"):
        cells = [
            format_cell(
                row[c["label"]],
                row[c["label"] + HALF_WIDTH_SUFFIX],
                c["decimals"],
                tuple(row[c["label"] + s] for s in POOLED_SUFFIXES) if pooled else (math.nan, math.nan),
            )
            for c in columns
        ]
        lines.append(_markdown_row([str(row[METHOD_COLUMN]), *cells, str(row[SEEDS_COLUMN])]))
    lines += ["", _seeds_note(table[SEEDS_COLUMN], pooled)]
    added = [c["label"] for c in columns if any(c is a for a in ADDED_COLUMNS)]
    if added:
        listed = added[0] if len(added) == 1 else f"{', '.join(added[:-1])} and {added[-1]}"
        lines.append(f"{listed}: this project's additions; the paper has no such columns.")
    lines += [f"- {note}" if not note.startswith("- ") else note for note in notes]
    return "\n".join(lines) + "\n"


def versus_paper(table: pd.DataFrame, spec: Mapping[str, Any], methods: Mapping[str, str]) -> pd.DataFrame:
    """Our means and half-widths beside the paper's, for the paper's metric columns.

    Rows follow `methods` (key -> display name): every method we ran or the paper reports;
    cells the other side lacks are empty (NaN).
    """
    ours = {row[METHOD_COLUMN]: row for row in table.to_dict("records")}
    columns = table_columns(spec)
    rows = []
    for method, display in methods.items():
        paper = spec["paper"].get(method)
        if display not in ours and paper is None:
            continue
        row: dict[str, Any] = {METHOD_COLUMN: display}
        for column in columns:
            label = column["label"]
            our_row = ours.get(display, {})
            paper_mean, paper_half_width = (paper or {}).get(column["key"]) or (None, None)
            row[f"{label} ours"] = our_row.get(label, math.nan)
            row[f"{label} ours ±"] = our_row.get(label + HALF_WIDTH_SUFFIX, math.nan)
            row[f"{label} paper"] = math.nan if paper_mean is None else float(paper_mean)
            row[f"{label} paper ±"] = math.nan if paper_half_width is None else float(paper_half_width)
        rows.append(row)
    names = [f"{c['label']} {side}" for c in columns for side in ("ours", "ours ±", "paper", "paper ±")]
    return pd.DataFrame(rows, columns=[METHOD_COLUMN, *names])


def write_table(
    table: pd.DataFrame,
    markdown: str,
    versus: pd.DataFrame,
    csv_path: str | Path,
    md_path: str | Path,
    vs_path: str | Path,
) -> None:
    """Write the table (CSV), its Markdown and the comparison with the paper (CSV), each atomically."""
    write_text(table.to_csv(index=False), csv_path)
    write_text(markdown, md_path)
    write_text(versus.to_csv(index=False), vs_path)


# --- notes -------------------------------------------------------------------------------------


def protocol_notes(method_keys: Collection[str]) -> list[str]:
    """How leaks and ROUGE are counted for the method families in a table."""
    families = {
        registry.method(key).family for key in method_keys if registry.base_method(key) in registry.METHODS
    }
    notes = []
    if "in_context" in families:
        notes.append(
            "In-context rows: a generation's private values are those of its context documents; ROUGE is "
            "the maximum over its context documents, one reference each (the paper's Appendix B)."
        )
    if "trained" in families:
        notes.append(
            "Fine-tuned rows: every private value of the whole fine-tuning set is private for every "
            "generation; ELP is the share of the set's distinct values that a run leaks; ROUGE is the "
            "maximum over the fine-tuning segments with the generation's entity types."
        )
    if "private_selection" in families:
        notes.append(
            "Private-selection rows (training-free, no codes): as fine-tuned rows, every private value of "
            "the training split they read is private for every generation; ROUGE is the maximum over all "
            "its segments. Their epsilon is in synthetic/{method}/seed{seed}_privacy.json: RPSG's covers "
            "only which candidate a seed keeps (each text rewrites one private seed), Aug-PE's the corpus."
        )
    return notes


def leak_definitions_note(table: pd.DataFrame) -> list[str]:
    """What the partial and near leak columns count, where the table has them."""
    notes = []
    if PARTIAL_LEAK_COLUMN["label"] in table.columns:
        notes.append(
            "Partial leak: a generation holds one identifying word of a private person name (a surname "
            "alone), case-insensitively as a whole word."
        )
    if NEAR_LEAK_COLUMN["label"] in table.columns:
        notes.append(
            "Near leak: a generation holds a private value or a name word, or a variant a reader would "
            "recognise (diacritics, case and punctuation aside; 1 edit for 5-9 letters, 2 from 10; a code "
            "of 5+ digits with one digit changed); it includes exact and partial leaks."
        )
    return notes


def regeneration_notes(
    generations: pd.DataFrame, methods: Mapping[str, str], max_regenerations: int
) -> list[str]:
    """For methods that regenerate on a leak of a blocked value: regenerations and documents at the limit."""
    notes = []
    for method, display in methods.items():
        if not registry.method(method).blocks_context_values:
            continue
        runs = generations[generations["method"] == method]
        if runs.empty or "regenerations" not in runs.columns:
            continue
        notes.append(
            f"{display}: {runs['regenerations'].mean():.2f} regenerations per document on average; "
            f"{int(runs['hit_max_regenerations'].sum())} of {len(runs)} still held a blocked value or a "
            f"near variant after {max_regenerations} regeneration(s)."
        )
    return notes


def adherence_notes(generations: pd.DataFrame, methods: Mapping[str, str]) -> list[str]:
    """How much of its fictional code each method's generations use (methods that show a code)."""
    if "adherence_exact" not in generations.columns:
        return []
    parts = []
    for method, display in methods.items():
        runs = generations[(generations["method"] == method) & generations["adherence_exact"].notna()]
        if not runs.empty:
            parts.append(
                f"{display} {100 * runs['adherence_exact'].mean():.0f}% / "
                f"{100 * runs['adherence_near'].mean():.0f}% / {100 * runs['adherence_types'].mean():.0f}%"
            )
    if not parts:
        return []
    return [
        "Control-code adherence (mean share of a generation's fictional values in its text, exact / with "
        "near variants / share of its code's entity types present): " + "; ".join(parts) + "."
    ]


def controlled_columns() -> dict[str, str]:
    """Leak measure -> the Table 1 column whose held-out control the notes give."""
    return {m.name: m.table1_label for m in leak_measures() if m.table1_label}


def phantom_shares(records: Sequence[Mapping[str, Any]], method: str) -> dict[str, tuple[float, float]]:
    """Per leak column: (leak rate, control rate) of one method, pooled over its runs' control counts."""
    chosen = [r for r in records if registry.base_method(r["method"]) == method]
    shares = {}
    for measure in controlled_columns():
        counts = [r["measures"][measure] for r in chosen if r["measures"][measure]["members"]]
        members, controls = sum(c["members"] for c in counts), sum(c["controls"] for c in counts)
        if members and controls:
            shares[measure] = (
                sum(c["member_hits"] for c in counts) / members,
                sum(c["control_hits"] for c in counts) / controls,
            )
    return shares


def phantom_notes(records: Sequence[Mapping[str, Any]], methods: Mapping[str, str]) -> list[str]:
    """The held-out control of each leak column: how much of the leak rate unseen documents show as often,
    each rate named as a share of what its design counts (`evidence.rate_unit`)."""
    parts = []
    labels = controlled_columns()
    designs = {registry.base_method(r["method"]): r["design"] for r in records}
    for method, display in methods.items():
        shares = phantom_shares(records, method)
        cells = [
            f"{labels[m]} {100 * leak:.{1 if 0 < leak < 0.1 else 0}f}% vs "
            f"{100 * held:.{1 if 0 < held < 0.1 else 0}f}% of {rate_unit(leak_measure(m), designs[method])} "
            f"(phantom {'-' if leak == 0 else f'{100 * min(held / leak, 1):.0f}%'})"
            for m, (leak, held) in shares.items()
        ]
        if cells:
            parts.append(f"{display}: " + ", ".join(cells))
    if not parts:
        return []
    return [
        "Held-out control (the same matcher against what the method never saw: in-context rows, as many "
        "unshown training segments of the same entity types per generation; trained rows, the share of "
        "distinct fine-tuning-only values in the corpus against that of held-out-only values), with the "
        "phantom share, control rate / leak rate (100%: unseen documents explain the whole rate). A "
        "fine-tuned or private-selection row's rates here are shares of distinct values, not of "
        "generations as in its columns above, so the two differ: " + "; ".join(parts) + "."
    ]


def document_warnings(table: pd.DataFrame, threshold: float) -> list[str]:
    """A warning for each row whose corpus is mostly not documents: its leak rates measure little."""
    label = DOCUMENTS_COLUMN["label"]
    if label not in table.columns:
        return []
    return [
        f"Warning: {row[METHOD_COLUMN]}: {row[label]:.1f}% of the generations are documents (under "
        f"{threshold:g}%); its leak rates and ROUGE are over text that is often not a document."
        for row in table.to_dict("records")
        if row[label] < threshold
    ]


def paired_notes(
    generations: pd.DataFrame, pairs: Sequence[Sequence[str]], methods: Mapping[str, str]
) -> list[str]:
    """For methods that share their prompts: discordant leaks and the exact McNemar p-value."""
    notes = []
    for first, second in pairs:
        a, b = generations[generations["method"] == first], generations[generations["method"] == second]
        if a.empty or b.empty:
            continue
        paired = paired_leaks(a, b)
        notes.append(
            f"{methods[first]} vs {methods[second]}, paired over {paired.pairs} generations with the same "
            f"contexts and fictional codes: {paired.only_first} leak only under {methods[first]}, "
            f"{paired.only_second} only under {methods[second]} (exact McNemar p = {paired.p_value:.3g})."
        )
    return notes


def dp_notes(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The privacy guarantee of the DP-SGD runs, from their `training.json`."""
    if not records:
        return []
    epsilons = [float(r["epsilon"]) for r in records]
    deltas = sorted({float(r["delta"]) for r in records})
    trained_dp = next(name for name, m in registry.METHODS.items() if m.differentially_private)
    unit = short_name(registry.PROTECTED[protected(trained_dp, records)])
    units = sorted({int(r["units"]) for r in records if "units" in r})
    noise = sorted({round(float(r["noise_multiplier"]), 3) for r in records})
    low, high = min(epsilons), max(epsilons)
    spent = f"{low:.2f}" if high - low < 5e-3 else f"{low:.2f}-{high:.2f}"
    return [
        f"DP-SGD: epsilon {spent} at delta {', '.join(f'{d:.2g}' for d in deltas)} per {unit}"
        + (f" ({', '.join(map(str, units))} {unit}s)" if units else "")
        + f", noise multiplier {', '.join(map(str, noise))}, over {len(records)} run(s)."
    ]


def presidio_note(setting: str | Sequence[str], extra_recognizers: Sequence[str]) -> list[str]:
    """How the unknown setting's values were found: Presidio as it ships, or with added recognizers."""
    if "unknown" not in table_settings(setting):
        return []
    extra = (
        f" plus this project's {', '.join(extra_recognizers)} recognizer"
        if extra_recognizers
        else " only, as in the paper"
    )
    return [f"Private entities unknown: values found by Presidio's own recognizers{extra}."]
