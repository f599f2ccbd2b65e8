"""A run's cost plan against what the run measured, per rule, and the growth between two runs.

The plan is rule `plan`'s table (results/plan/{target}.tsv, `plainsight.report.plan`). What a run
measured comes from Snakemake's own records of it: one JSON record per output file in
.snakemake/metadata/ with the job's rule, `starttime` (when Snakemake marked the job started: on a
cluster, its submission) and `endtime` (the output's modification time), and `job_hash`, the same for
every output of one job. A job is counted once: its records share rule and `job_hash` and were marked
started together. Where a rule has benchmark files (results/benchmarks/{rule}/*.tsv), they add each
job's own run time (`s`) and peak memory (`max_rss`, MB).

Usage (the run folder holds .snakemake/ and results/):

    python -m plainsight.report.plan_check --plan results/plan/all.tsv --run . --out plan_check.md
    python -m plainsight.report.plan_check --plan full/results/plan/all.tsv --run full \\
        --compare half --compare-plan half/results/plan/all.tsv --out growth.md
"""

from __future__ import annotations

import argparse
import base64
import binascii
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from plainsight.errors import InputError, empty_file
from plainsight.io import read_benchmark, read_json, write_text
from plainsight.scheduling.model_rules import (
    ALL_METHODS_TWINS,
    CANARY_SCORING_RULES,
    CANARY_TWINS,
    EMBEDDING_RULES,
    GENERATION_RULES,
    NEGATIVE_CONTROL_TWINS,
    SCORING_RULES,
    TRAINING_RULES,
    twin_of,
)

# The records of one job's outputs are marked started within milliseconds of each other; the same
# `job_hash` (an object id within one Snakemake process) may recur in a later process, seconds or more on.
SAME_JOB_SECONDS = 1.0
WITHIN = (0.7, 1.3)  # measured over planned hours: a plan within 30%
FLAGGED_ABOVE_HOURS = 1 / 60  # less measured work than a minute is not judged
# megabytes as the plan counts them: the dry run's mem_mb and the benchmarks' max_rss are both MiB, and
# the plan shows mem_mb / 1000 as GB
MB_PER_GB = 1000

FAMILIES = {
    "training": TRAINING_RULES,
    "generation": GENERATION_RULES,
    "scoring": (*SCORING_RULES, *ALL_METHODS_TWINS),
    "audit": (*CANARY_TWINS, *NEGATIVE_CONTROL_TWINS, *CANARY_SCORING_RULES, *EMBEDDING_RULES),
}
OTHER_FAMILY = "other"  # jobs that load no model
FAMILY_ORDER = (*FAMILIES, OTHER_FAMILY)

PLAN_REQUIRED = ("rule", "jobs", "device_hours", "host_memory_gb", "gpus_per_job")
RECORD_REQUIRED = ("rule", "starttime", "endtime", "job_hash")
BENCHMARK_REQUIRED = ("s", "max_rss")


def rule_family(rule: str) -> str:
    """The kind of work a rule's jobs do: training, generation, scoring, audit (the canary audit, the
    negative control and the released-text audits), or other (no model)."""
    return next((family for family, rules in FAMILIES.items() if rule in rules), OTHER_FAMILY)


def throughput_of(rule: str) -> str:
    """The `resources` throughputs a model rule's planned hours rest on: its own measured one, else (an
    adapter's) its method's, else its family's."""
    family = (
        "generation_tokens_per_second" if twin_of(rule) in GENERATION_RULES else "training_tokens_per_second"
    )
    by_method = "method_tokens_per_second` or `" if twin_of(rule) == "train_adapter" else ""
    return f"rule_tokens_per_second.{rule}` or `{by_method}{family}"


# --- reading ---


def read_plan(path: str | Path) -> pd.DataFrame:
    """A plan's table (rule `plan`'s TSV): per rule its planned jobs, its planned job hours (device-hours
    over GPUs per job; empty where the plan does not estimate the rule) and host memory request (GB)."""
    if not Path(path).is_file():
        raise InputError(path, None, "no such file: rule plan writes it (results/plan/{target}.tsv)")
    try:
        plan = pd.read_csv(path, sep="\t")
    except pd.errors.EmptyDataError:
        raise empty_file(path) from None
    missing = [column for column in PLAN_REQUIRED if column not in plan.columns]
    if missing:
        raise InputError(path, None, f"not a plan table of rule plan (no {', '.join(missing)} column)")
    if plan.empty:
        raise empty_file(path)
    devices = plan["gpus_per_job"].fillna(0).clip(lower=1)
    return pd.DataFrame(
        {
            "rule": plan["rule"].astype(str),
            "jobs": plan["jobs"].astype(int),
            "hours": plan["device_hours"] / devices,
            "host_memory_gb": plan["host_memory_gb"],
        }
    )


def metadata_output(record: Path, folder: Path) -> str:
    """The output file a metadata record is about: Snakemake names the record by the path's urlsafe
    base64, split into folders of at most the longest file name, each but the last marked by '@'."""
    encoded = "".join(part.removeprefix("@") for part in record.relative_to(folder).parts)
    try:
        return base64.urlsafe_b64decode(encoded).decode()
    except (binascii.Error, UnicodeDecodeError):
        return str(record.relative_to(folder))


def read_metadata(folder: str | Path) -> pd.DataFrame:
    """Every record of .snakemake/metadata: its file, output, rule, job_hash, starttime and endtime."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(
            folder, None, "no such folder: Snakemake keeps a run's job records there (give the run's folder)"
        )
    rows = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        output = metadata_output(path, folder)
        record = read_json(path)
        if not isinstance(record, dict):
            raise InputError(path, f"record of {output}", "not a Snakemake metadata record (no JSON object)")
        missing = [key for key in RECORD_REQUIRED if record.get(key) is None]
        if missing:
            raise InputError(
                path, f"record of {output}", f"no {', '.join(missing)}: not a finished job of Snakemake 9"
            )
        rows.append(
            {
                "file": str(path),
                "output": output,
                "rule": str(record["rule"]),
                "job_hash": int(record["job_hash"]),
                "starttime": float(record["starttime"]),
                "endtime": float(record["endtime"]),
            }
        )
    if not rows:
        raise InputError(folder, None, "holds no record: no job of this run has finished")
    return pd.DataFrame(rows)


def measured_jobs(records: pd.DataFrame) -> pd.DataFrame:
    """One row per job of the records: rule, start, end (its last output's) and wall hours."""
    ordered = records.sort_values(["rule", "job_hash", "starttime"]).reset_index(drop=True)
    key = ordered[["rule", "job_hash"]]
    same_key = (key == key.shift()).all(axis="columns")
    started_together = ordered["starttime"].diff() <= SAME_JOB_SECONDS
    job = (~(same_key & started_together)).cumsum()
    jobs = ordered.groupby(job).agg(
        rule=("rule", "first"), start=("starttime", "min"), end=("endtime", "max"), outputs=("output", "size")
    )
    jobs["hours"] = (jobs["end"] - jobs["start"]) / 3600
    return jobs.reset_index(drop=True)


def job_benchmark(path: Path) -> dict[str, float]:
    """One job's benchmark file: its run seconds (over repeats) and peak memory (MB; NaN where Snakemake
    could not sample the process)."""
    frame = read_benchmark(path, BENCHMARK_REQUIRED)
    return {"seconds": float(frame["s"].sum()), "max_rss_mb": float(frame["max_rss"].max())}


def read_benchmarks(folder: str | Path) -> pd.DataFrame:
    """Every job's benchmark in results/benchmarks/{rule}/*.tsv: rule, file, seconds, max_rss_mb; none
    where the run has no such folder."""
    files = sorted(Path(folder).glob("*/*.tsv"))
    return pd.DataFrame(
        [{"rule": path.parent.name, "file": str(path), **job_benchmark(path)} for path in files],
        columns=["rule", "file", "seconds", "max_rss_mb"],
    )


# --- comparing ---


def compare(plan: pd.DataFrame, jobs: pd.DataFrame, benchmarks: pd.DataFrame) -> pd.DataFrame:
    """Per rule of the plan or the run: jobs planned and measured, planned and measured job hours and
    their ratio, the benchmarked jobs and their hours, host memory request and measured peak (GB), and
    the flags: `outside` (more than a minute of measured work, `WITHIN` not holding the ratio) and
    `over_request` (peak over the request). Planned hours are NaN for a rule the plan does not estimate,
    the ratio too and for a rule with no measured job."""
    measured = jobs.groupby("rule").agg(jobs_measured=("hours", "size"), measured_hours=("hours", "sum"))
    benchmarked = benchmarks.groupby("rule").agg(
        benchmark_jobs=("seconds", "size"),
        benchmark_seconds=("seconds", "sum"),
        peak_rss_mb=("max_rss_mb", "max"),
    )
    table = (
        plan.set_index("rule")
        .rename(columns={"jobs": "jobs_planned", "hours": "planned_hours"})
        .join(measured, how="outer")
        .join(benchmarked, how="left")
    )
    table["in_plan"] = table.index.isin(plan["rule"])
    table["jobs_planned"] = table["jobs_planned"].fillna(0).astype(int)
    table["jobs_measured"] = table["jobs_measured"].fillna(0).astype(int)
    table["benchmark_jobs"] = table["benchmark_jobs"].fillna(0).astype(int)
    table["measured_hours"] = table["measured_hours"].fillna(0.0)
    ran = table["jobs_measured"] > 0
    table["ratio"] = (
        table["measured_hours"] / table["planned_hours"].where(table["planned_hours"] > 0)
    ).where(ran)
    table["benchmark_hours"] = table["benchmark_seconds"] / 3600
    table["peak_rss_gb"] = table["peak_rss_mb"] / MB_PER_GB
    low, high = WITHIN
    table["outside"] = (
        table["ratio"].notna()
        & (table["measured_hours"] > FLAGGED_ABOVE_HOURS)
        & ((table["ratio"] < low) | (table["ratio"] > high))
    )
    table["over_request"] = table["peak_rss_gb"] > table["host_memory_gb"]  # False where either is unknown
    table["estimated"] = table["planned_hours"].notna()
    ordered = table.reset_index(names="rule").sort_values(
        ["estimated", "planned_hours", "measured_hours", "rule"], ascending=[False, False, False, True]
    )
    return ordered[
        [
            "rule",
            "in_plan",
            "estimated",
            "jobs_planned",
            "jobs_measured",
            "planned_hours",
            "measured_hours",
            "ratio",
            "benchmark_jobs",
            "benchmark_hours",
            "host_memory_gb",
            "peak_rss_gb",
            "outside",
            "over_request",
        ]
    ].reset_index(drop=True)


def family_hours(hours: pd.Series) -> pd.Series:
    """Hours indexed by rule, summed per rule family, in `FAMILY_ORDER`."""
    families = hours.groupby(hours.index.map(rule_family)).sum(min_count=1)
    return families.reindex(list(FAMILY_ORDER))


def growth(
    run_jobs: pd.DataFrame,
    compared_jobs: pd.DataFrame,
    run_plan: pd.DataFrame | None = None,
    compared_plan: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per rule family (and in total): measured job hours of the run and of the compared run and their
    ratio (run over compared); with both plans, their planned hours and ratio too."""
    columns = {
        "measured_run": family_hours(run_jobs.groupby("rule")["hours"].sum()).fillna(0.0),
        "measured_compared": family_hours(compared_jobs.groupby("rule")["hours"].sum()).fillna(0.0),
    }
    if run_plan is not None and compared_plan is not None:
        columns["planned_run"] = family_hours(run_plan.set_index("rule")["hours"])
        columns["planned_compared"] = family_hours(compared_plan.set_index("rule")["hours"])
    table = pd.DataFrame(columns)
    table.loc["total"] = table.sum(min_count=1)
    table["measured_ratio"] = table["measured_run"] / table["measured_compared"].where(
        table["measured_compared"] > 0
    )
    if "planned_run" in table:
        table["planned_ratio"] = table["planned_run"] / table["planned_compared"].where(
            table["planned_compared"] > 0
        )
    return table.rename_axis("family").reset_index()


# --- rendering ---


def _fixed(value: float | None, digits: int) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _hours(value: float | None) -> str:
    return _fixed(value, 3)  # a minute is 0.017 h


def _ratio(value: float | None) -> str:
    return _fixed(value, 2)


def _gb(value: float | None) -> str:
    return _fixed(value, 1)


def _benchmarked(row) -> str:
    """A rule's benchmark hours, with how many of its measured jobs they cover where not all."""
    if row.benchmark_jobs == row.jobs_measured or not row.benchmark_jobs:
        return _hours(row.benchmark_hours)
    return f"{_hours(row.benchmark_hours)} ({row.benchmark_jobs} of {row.jobs_measured} jobs)"


def render_comparison(table: pd.DataFrame) -> list[str]:
    lines = [
        "| Rule | Jobs planned | Jobs measured | Planned job hours | Measured job hours | Measured / planned "
        "| Benchmark hours | Host memory request (GB) | Peak RSS (GB) | Check |",
        "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- |",
    ]
    for row in table.itertuples(index=False):
        if row.estimated:
            planned = _hours(row.planned_hours)
        else:
            planned = "not estimated" if row.in_plan else "not in the plan"
        checks = [
            *(["outside 30%"] if row.outside else []),
            *(["peak over request"] if row.over_request else []),
        ]
        lines.append(
            f"| {row.rule} | {row.jobs_planned} | {row.jobs_measured} | {planned} "
            f"| {_hours(row.measured_hours)} | {_ratio(row.ratio)} | {_benchmarked(row)} "
            f"| {_gb(row.host_memory_gb)} | {_gb(row.peak_rss_gb)} | {', '.join(checks)} |"
        )
    estimated = table[table["estimated"]]
    planned, measured = estimated["planned_hours"].sum(), estimated["measured_hours"].sum()
    lines.append(
        f"| **estimated rules** | **{estimated['jobs_planned'].sum()}** "
        f"| **{estimated['jobs_measured'].sum()}** | **{_hours(planned)}** | **{_hours(measured)}** "
        f"| **{_ratio(measured / planned if planned else math.nan)}** | | | | |"
    )
    lines.append(
        f"| **all rules** | **{table['jobs_planned'].sum()}** | **{table['jobs_measured'].sum()}** "
        f"| | **{_hours(table['measured_hours'].sum())}** | | | | | |"
    )
    outside = table[table["outside"]]
    if len(outside):
        lines += [
            "",
            "Outside 30% (measured / planned, and the throughput the plan's hours rest on): "
            + "; ".join(
                f"{row.rule} {_ratio(row.ratio)} (`resources.{throughput_of(row.rule)}`)"
                for row in outside.itertuples(index=False)
            )
            + ".",
        ]
    return lines


def render_growth(table: pd.DataFrame) -> list[str]:
    planned = "planned_ratio" in table
    lines = [
        "| Family | Measured hours, run | Measured hours, compared | Measured ratio "
        + ("| Planned hours, run | Planned hours, compared | Planned ratio |" if planned else "|"),
        "| :--- | ---: | ---: | ---: |" + (" ---: | ---: | ---: |" if planned else ""),
    ]
    for row in table.itertuples(index=False):
        name = f"**{row.family}**" if row.family == "total" else row.family
        cells = [name, _hours(row.measured_run), _hours(row.measured_compared), _ratio(row.measured_ratio)]
        if planned:
            cells += [_hours(row.planned_run), _hours(row.planned_compared), _ratio(row.planned_ratio)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def run_span(jobs: pd.DataFrame) -> str:
    hours = (jobs["end"].max() - jobs["start"].min()) / 3600
    jobs_measured = f"{len(jobs)} job" + ("" if len(jobs) == 1 else "s")
    return f"{jobs_measured} measured, {_hours(hours)} h from the first start to the last end"


def check_markdown(
    comparisons: Sequence[tuple[str, str, pd.DataFrame, pd.DataFrame]],
    growth_section: tuple[pd.DataFrame, str, str] | None = None,
) -> str:
    """The check as Markdown: for each (run folder, plan file, comparison, jobs), its table; then, with
    (growth table, run folder, compared run folder), the growth between the two runs."""
    lines = ["# Plan against measured", ""]
    for run, plan, table, jobs in comparisons:
        lines += [f"## `{run}` against `{plan}`", "", run_span(jobs) + ".", "", *render_comparison(table), ""]
    low, high = WITHIN
    lines += [
        "Job hours are wall hours summed over a rule's jobs (GPU-hours are these times "
        "`resources.gpus_per_job`). Measured: from Snakemake's records (.snakemake/metadata), each job "
        "from when Snakemake started it (on a cluster: submitted it) to its last output's write. "
        "Benchmark hours: the jobs' own run time from their benchmark files, where the rule has them; "
        "peak RSS: their largest resident memory. Planned: the plan's hours per job, the expected work "
        "at the configured throughput after `resources.startup_seconds`, with no margin. "
        "`outside 30%`: more than a "
        f"minute of measured work and a ratio outside [{low}, {high}]; `peak over request`: a job used "
        "more host memory than the scheduler requests for it. `not estimated`: a rule whose jobs load no "
        "model; `not in the plan`: jobs the planned target did not list (built before the plan, or "
        "another target's).",
    ]
    if growth_section is not None:
        growth_table, run, compared = growth_section
        lines += [
            "",
            f"## Growth: `{run}` over `{compared}`",
            "",
            f"Run: `{run}`; compared: `{compared}`; ratios are the run's hours over the compared run's.",
            "",
            *render_growth(growth_table),
            "",
            "Families: training, generation, scoring and audit are the rules whose jobs load a model "
            "(`plainsight.scheduling.model_rules`: audit is the canary audit, the negative control and the "
            "released-text audits); "
            "other: every other rule.",
        ]
    return "\n".join(lines) + "\n"


# --- the command ---


def run_comparison(
    run: Path, plan: str | None
) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """(jobs, plan, comparison) of one run folder; the plan and comparison are None without a plan."""
    jobs = measured_jobs(read_metadata(run / ".snakemake" / "metadata"))
    if plan is None:
        return jobs, None, None
    planned = read_plan(plan)
    return jobs, planned, compare(planned, jobs, read_benchmarks(run / "results" / "benchmarks"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", required=True, help="the plan's TSV, e.g. results/plan/all.tsv")
    parser.add_argument("--run", default=".", help="the run's folder (holds .snakemake/ and results/)")
    parser.add_argument("--compare", help="another run's folder, e.g. a half-size run")
    parser.add_argument("--compare-plan", help="the other run's plan TSV")
    parser.add_argument("--out", required=True, help="the Markdown file to write")
    args = parser.parse_args(argv)
    if args.compare_plan and not args.compare:
        parser.error("--compare-plan needs --compare")
    try:
        jobs, plan, table = run_comparison(Path(args.run), args.plan)
        comparisons = [(args.run, args.plan, table, jobs)]
        growth_section = None
        if args.compare:
            other_jobs, other_plan, other_table = run_comparison(Path(args.compare), args.compare_plan)
            if other_table is not None:
                comparisons.append((args.compare, args.compare_plan, other_table, other_jobs))
            growth_section = (growth(jobs, other_jobs, plan, other_plan), args.run, args.compare)
        write_text(check_markdown(comparisons, growth_section), args.out)
    except InputError as err:
        print(err, file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
