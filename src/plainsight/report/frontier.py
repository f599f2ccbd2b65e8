"""The privacy-utility frontier: what each step of privacy costs a release in utility.

A sweep (`make frontier`) runs the decisive profile once per epsilon in folders of its own
(runs/frontier/epsilon-<e>/, the DP methods only) and this module reads their tables back: per DP method
and epsilon, the release verdict, whether the text is fit to release, the documents share, the
downstream macro-F1 and MAUVE, each with its interval. Reference lines come from the decisive run
(runs/decide/): the non-private ICL with privacy enhancement, the zero-learning corpus (the base model
from fictional codes alone: what the model knew without the private data), chance and the real-data
ceiling.

What each folder must hold (Table 1's run: dataset, setting and identifier set as the paper's Table 1):

- results/tables/<dataset>/privacy_audit.csv: the verdict, `dp_epsilon`, `dp_delta`, the documents share
  and the macro-F1 with their bounds (`plainsight.audit.fitness`);
- results/tables/<dataset>/utility.csv: the zero-learning, chance and ceiling rows;
- results/<dataset>/<setting>/<idset>/utility/<method>/seed<seed>_mauve.json: MAUVE (optional; with
  `mauve_low` and `mauve_high` where the run drew its bootstrap, `utility.mauve.resamples`).

Usage:

    python -m plainsight.report.frontier --runs runs/frontier/epsilon-* --reference runs/decide \\
        --out results/frontier
"""

from __future__ import annotations

import argparse
import base64
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plainsight.audit import NEGATIVE_CONTROL
from plainsight.errors import InputError
from plainsight.evaluation.downstream import CHANCE, REAL
from plainsight.io import atomic_path, read_json, write_text
from plainsight.methods import registry
from plainsight.report.audit_verdict import RUN_COLUMNS, run_rows
from plainsight.report.figures import pyplot, save_png
from plainsight.report.table_specs import load_table_specs

MEASURES = ("documents_share", "macro_f1", "mauve")
VERDICT_COLOURS = {"PASS": "tab:green", "FAIL": "tab:red"}  # anything else: grey
REFERENCE_LOOKS = (("black", "--"), ("tab:red", ":"), ("tab:orange", "-."), ("tab:purple", "--"))
COLUMNS = (
    "method",
    "dp_epsilon",
    "dp_delta",
    "verdict",
    "fit_as_text",
    *(f"{m}{s}" for m in MEASURES for s in ("", "_low", "_high")),
    "run",
)


@dataclass(frozen=True)
class RunTables:
    """One run folder's tables of Table 1's run."""

    folder: str
    audit: pd.DataFrame  # privacy_audit.csv, Table 1's run's rows
    utility: pd.DataFrame  # utility.csv, the same run's rows
    mauve: Mapping[str, Mapping]  # method -> its first audited seed's MAUVE record


def read_run(folder: Path, run: Mapping[str, str]) -> RunTables:
    """The tables of `run` in a run folder; a folder without them is an input error naming the file."""
    tables = folder / "results" / "tables" / run["dataset"]
    read = {}
    for name in ("privacy_audit", "utility"):
        path = tables / f"{name}.csv"
        if not path.is_file():
            raise InputError(path, None, f"no {name} table: has this run of the sweep finished?")
        read[name] = run_rows(pd.read_csv(path), run)
    utility_folder = folder / "results" / run["dataset"] / run["setting"] / run["idset"] / "utility"
    mauve = {}
    for method in read["privacy_audit"]["method"]:
        found = sorted((utility_folder / str(method)).glob("seed*_mauve.json"))
        if found:
            mauve[str(method)] = read_json(found[0])
    return RunTables(str(folder), read["privacy_audit"], read["utility"], mauve)


def _measure(record: Mapping, name: str) -> tuple[float, float, float]:
    return tuple(float(record.get(f"{name}{s}", math.nan)) for s in ("", "_low", "_high"))


def frontier_rows(runs: Sequence[RunTables], methods: Sequence[str]) -> pd.DataFrame:
    """One row per (DP method, epsilon) of the sweep's runs, in method then epsilon order."""
    rows = []
    for tables in runs:
        for _, row in tables.audit[tables.audit["method"].isin(methods)].iterrows():
            method = str(row["method"])
            mauve = tables.mauve.get(method, {})
            rows.append(
                {
                    "method": method,
                    "dp_epsilon": float(row.get("dp_epsilon", math.nan)),
                    "dp_delta": float(row.get("dp_delta", math.nan)),
                    "verdict": row["verdict"],
                    "fit_as_text": row.get("fit_as_text", ""),
                    **{
                        f"{m}{s}": float(row.get(f"{m}{s}", math.nan))
                        for m in MEASURES[:2]
                        for s in ("", "_low", "_high")
                    },
                    **dict(zip(("mauve", "mauve_low", "mauve_high"), _measure(mauve, "mauve"))),
                    "run": tables.folder,
                }
            )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    order = {name: n for n, name in enumerate(methods)}
    return frame.sort_values(
        ["method", "dp_epsilon"], key=lambda c: c.map(order) if c.name == "method" else c
    )


def non_private_reference() -> str:
    """The method drawn as a reference line beside the DP methods: the in-context one that blocks its
    context's values (the paper's ICL with privacy enhancement), private by construction, not by proof."""
    return next(name for name in registry.names("in_context") if registry.method(name).blocks_context_values)


def references(reference: RunTables, displays: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """The reference lines: name -> macro-F1 and documents share where the reference run measured them."""
    non_private = non_private_reference()

    def utility_row(method: str) -> dict[str, float]:
        found = reference.utility[reference.utility["method"] == method]
        return {"macro_f1": float(found.iloc[0]["macro_f1"])} if not found.empty else {}

    lines = {
        "real-data ceiling": utility_row(REAL),
        "chance": utility_row(CHANCE),
        "zero learning": utility_row(NEGATIVE_CONTROL),
    }
    found = reference.audit[reference.audit["method"] == non_private]
    if not found.empty:
        row = found.iloc[0]
        lines[f"{displays.get(non_private, non_private)} (no guarantee)"] = {
            "macro_f1": float(row.get("macro_f1", math.nan)),
            "documents_share": float(row.get("documents_share", math.nan)),
            "verdict": row["verdict"],
        }
    return {name: line for name, line in lines.items() if line}


def interval_text(row: Mapping, name: str, decimals: int = 3, percent: bool = False) -> str:
    value, low, high = (row[f"{name}{s}"] for s in ("", "_low", "_high"))
    if pd.isna(value):
        return "not measured"
    scale, digits = (100, 0) if percent else (1, decimals)
    text = f"{scale * value:.{digits}f}"
    if not (pd.isna(low) or pd.isna(high)):
        text += f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
    return text


def frontier_markdown(rows: pd.DataFrame, lines: Mapping[str, Mapping], displays: Mapping[str, str]) -> str:
    """The frontier table and its reference lines, in Markdown."""
    out = [
        "# The privacy-utility frontier",
        "",
        "Per DP method and epsilon (per privacy unit): the release verdict, whether its text is fit to",
        "release, and its utility with 95% intervals. A useful release PASSes and is fit as text.",
        "",
        "| method | epsilon | delta | verdict | fit as text | documents (%) | macro-F1 | MAUVE |",
        "|---|---:|---:|---|---|---:|---:|---:|",
    ]
    for _, row in rows.iterrows():
        documents = interval_text(row, "documents_share", percent=True)
        out.append(
            f"| {displays.get(row['method'], row['method'])} | {row['dp_epsilon']:.3g} "
            f"| {row['dp_delta']:.1e} | {row['verdict']} | {row['fit_as_text']} | {documents} "
            f"| {interval_text(row, 'macro_f1')} | {interval_text(row, 'mauve')} |"
        )
    out += ["", "Reference lines (the decisive run):", ""]
    for name, line in lines.items():
        parts = [f"macro-F1 {line['macro_f1']:.3f}"]
        if "documents_share" in line:
            parts.append(f"documents {100 * line['documents_share']:.0f}%")
        if "verdict" in line:
            parts.append(f"verdict {line['verdict']}")
        out.append(f"- {name}: {', '.join(parts)}")
    return "\n".join(out) + "\n"


def frontier_plot(
    rows: pd.DataFrame,
    lines: Mapping[str, Mapping],
    displays: Mapping[str, str],
    documents_min: float,
    path: Path,
) -> None:
    """Macro-F1 and the documents share against epsilon (log scale), one line per DP method, each point
    coloured by its verdict; the reference lines across."""
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5), constrained_layout=True)
    # one look per reference line in both panels: the ceiling, chance, zero learning, the non-private method
    looks = dict(zip(lines, REFERENCE_LOOKS))
    epsilons = sorted(rows["dp_epsilon"].dropna().unique())
    for axis, measure, label in (
        (axes[0], "macro_f1", "downstream macro-F1 on real test text"),
        (axes[1], "documents_share", "share of generations that are documents"),
    ):
        for method, points in rows.groupby("method", sort=False):
            errors = [
                (points[measure] - points[f"{measure}_low"]).clip(lower=0).fillna(0),
                (points[f"{measure}_high"] - points[measure]).clip(lower=0).fillna(0),
            ]
            axis.errorbar(
                points["dp_epsilon"],
                points[measure],
                yerr=errors,
                capsize=3,
                alpha=0.6,
                label=displays.get(method, method),
            )
            axis.scatter(
                points["dp_epsilon"],
                points[measure],
                c=[VERDICT_COLOURS.get(v, "grey") for v in points["verdict"]],
                zorder=3,
            )
        for name, line in lines.items():
            if measure in line:
                colour, style = looks[name]
                axis.axhline(
                    line[measure],
                    color=colour,
                    linestyle=style,
                    linewidth=1,
                    label=f"{name}: {line[measure]:.2f}",
                )
        if measure == "documents_share":
            axis.axhline(
                documents_min, color="grey", linewidth=1, label=f"fit as text from {documents_min:.0%}"
            )
        axis.set_xscale("log")
        axis.set_xticks(epsilons, [f"{e:.3g}" for e in epsilons])
        axis.minorticks_off()
        axis.set_xlabel("epsilon per privacy unit (log scale)")
        axis.set_ylabel(label)
        axis.set_ylim(0, 1)
        axis.legend(fontsize=7)
    figure.suptitle("Privacy-utility frontier (points: green PASS, red FAIL, grey otherwise)")
    save_png(plt, figure, path)


def dp_methods() -> list[str]:
    """The methods with a formal guarantee, in the registry's order: the sweep's."""
    return [name for name in registry.names() if registry.method(name).protects is not None]


def frontier_view(files: Sequence[str | Path], displays: Mapping[str, str]) -> dict | None:
    """What the review page shows of a frontier (`review.frontier`: `files` are its frontier.csv and
    frontier.png; none: no frontier, None): its rows as text and its figure as a data URI (the page stays
    one file beside its data folder)."""
    if not files:
        return None
    table, figure = map(Path, files)
    rows = pd.read_csv(table)
    return {
        "rows": [
            {
                "method": displays.get(row["method"], row["method"]),
                "epsilon": f"{row['dp_epsilon']:.3g}",
                "verdict": row["verdict"],
                "fit": "" if pd.isna(row["fit_as_text"]) else row["fit_as_text"],
                "documents": interval_text(row, "documents_share", percent=True),
                "macro_f1": interval_text(row, "macro_f1"),
                "mauve": interval_text(row, "mauve"),
            }
            for _, row in rows.iterrows()
        ],
        "image": "data:image/png;base64," + base64.b64encode(figure.read_bytes()).decode("ascii"),
    }


def write_frontier(
    runs: Sequence[Path], reference: Path, out: Path, tables: Path, documents_min: float
) -> pd.DataFrame:
    """frontier.csv, frontier.md and frontier.png in `out`, from the sweep's `runs` and the `reference`
    run, with the display names and Table 1's run of the paper's `tables` (resources/paper_tables.yaml)."""
    specs = load_table_specs(tables)
    run = {key: specs["tables"]["table1"][key] for key in RUN_COLUMNS}
    rows = frontier_rows([read_run(folder, run) for folder in runs], dp_methods())
    if rows.empty:
        raise InputError(", ".join(map(str, runs)), None, "no DP method in these runs' audit tables")
    lines = references(read_run(reference, run), specs["methods"])
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "frontier.csv") as tmp:
        rows.to_csv(tmp, index=False)
    write_text(frontier_markdown(rows, lines, specs["methods"]), out / "frontier.md")
    frontier_plot(rows, lines, specs["methods"], documents_min, out / "frontier.png")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, type=Path, help="the sweep's run folders")
    parser.add_argument("--reference", required=True, type=Path, help="the decisive run's folder")
    parser.add_argument("--out", required=True, type=Path, help="folder for frontier.{csv,md,png}")
    parser.add_argument("--tables", type=Path, default=Path("resources/paper_tables.yaml"))
    parser.add_argument("--documents-min", type=float, default=0.8, help="release.gate.documents_min")
    args = parser.parse_args(argv)
    try:
        write_frontier(args.runs, args.reference, args.out, args.tables, args.documents_min)
    except InputError as err:
        print(err, file=sys.stderr)
        return 1
    print(f"wrote {args.out}/frontier.csv, frontier.md and frontier.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
