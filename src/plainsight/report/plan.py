"""The cost plan of a target before it is submitted: jobs per rule, GPU-hours, GPU and host memory.

The jobs come from Snakemake's own dry run of the target (`parse_dry_run`), so the plan lists
exactly what `snakemake <target>` would run now, with the scheduler's host-memory request of each
job. This module adds what the scheduler does not know: the hours each model job takes at the
configured throughputs (`resources.generation_tokens_per_second`, `training_tokens_per_second`,
from the benchmarks) and the GPU memory it needs (`plainsight.scheduling`: weights in the job's
dtype, KV cache of the slots, activations and logits of a training step). Corpus sizes are the
built control codes' where they exist, else `resources.planned_segments`. Beside the hours, the
evidence plan (`plainsight.audit.evidence_plan`): the sample each release criterion gets under this
config against what it needs to PASS when nothing leaks or FAIL at a stated effect. The table is also
written as TSV, which `plainsight.report.plan_check` compares with what a finished run measured.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from plainsight import scheduling
from plainsight.audit.criteria import CriterionPlan, Gate
from plainsight.audit.evidence_plan import evidence_plan
from plainsight.errors import InputError
from plainsight.io import write_text
from plainsight.methods import registry
from plainsight.settings import Settings

_JOB_HEADER = re.compile(r"^(?:local)?rule (\w+):\s*$")
_FIELD = re.compile(r"^\s+(wildcards|resources): (.*)$")


@dataclass(frozen=True)
class DryRunJob:
    rule: str
    wildcards: dict[str, str]
    resources: dict[str, str]


def _pairs(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(", ") if "=" in item)


def parse_dry_run(text: str) -> list[DryRunJob]:
    """The jobs of `snakemake --dry-run` output: rule, wildcards and resources of each."""
    jobs: list[DryRunJob] = []
    for line in text.splitlines():
        header = _JOB_HEADER.match(line)
        if header:
            jobs.append(DryRunJob(header.group(1), {}, {}))
            continue
        field = _FIELD.match(line)
        if field and jobs:
            getattr(jobs[-1], field.group(1)).update(_pairs(field.group(2)))
    return jobs


@dataclass(frozen=True)
class JobEstimate:
    hours: float
    gpu_bytes: int = 0  # 0: the job loads no model


def job_estimate(costs: scheduling.CostModel, job: DryRunJob) -> JobEstimate | None:
    """The job's hours and GPU memory from the cost model; None for a job that loads no model
    (minutes on one CPU core)."""
    if job.rule not in scheduling.MODEL_RULES:
        return None
    return JobEstimate(costs.hours(job.rule, job.wildcards), costs.gpu_bytes(job.rule, job.wildcards))


def plan_table(jobs: list[DryRunJob], costs: scheduling.CostModel) -> pd.DataFrame:
    """One row per rule: jobs, device-hours (hours x GPUs per job, or CPU hours), the largest job's
    hours, GPU memory (GiB) and host memory request (GB); model rules first, the costliest first."""
    gpus = max(1, costs.resources.gpus_per_job)
    rows: dict[str, dict] = {}
    for job in jobs:
        estimate = job_estimate(costs, job)
        row = rows.setdefault(
            job.rule,
            {
                "rule": job.rule,
                "jobs": 0,
                "device_hours": 0.0,
                "longest_hours": 0.0,
                "gpu_memory_gib": 0.0,
                "host_memory_gb": 0.0,
            },
        )
        row["jobs"] += 1
        mem_mb = job.resources.get("mem_mb", "")
        if mem_mb.isdigit():
            row["host_memory_gb"] = max(row["host_memory_gb"], int(mem_mb) / 1000)
        if estimate is not None:
            row["device_hours"] += estimate.hours * gpus
            row["longest_hours"] = max(row["longest_hours"], estimate.hours)
            row["gpu_memory_gib"] = max(row["gpu_memory_gib"], estimate.gpu_bytes / scheduling.GIB)
    table = pd.DataFrame(
        list(rows.values()),
        columns=["rule", "jobs", "device_hours", "longest_hours", "gpu_memory_gib", "host_memory_gb"],
    )
    table["loads_model"] = table["rule"].isin(scheduling.MODEL_RULES)
    ordered = table.sort_values(["loads_model", "device_hours", "rule"], ascending=[False, False, True])
    return ordered.drop(columns="loads_model").reset_index(drop=True)


def plan_markdown(
    table: pd.DataFrame, target: str, costs: scheduling.CostModel, sizes: Mapping[str, str]
) -> str:
    """The plan as Markdown: the table, its total, and what it assumes."""
    on_gpu = costs.on_gpu
    hours_label = "GPU-hours" if on_gpu else "CPU job hours"
    lines = [
        f"# Cost plan: `{target}`",
        "",
        f"| Rule | Jobs | {hours_label} | Longest job (h) | GPU memory per job (GiB) "
        "| Host memory request (GB) |",
        "| :--- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in table.itertuples(index=False):
        gpu = f"{row.gpu_memory_gib:.1f}" if on_gpu and row.gpu_memory_gib else "-"
        host = f"{row.host_memory_gb:.1f}" if row.host_memory_gb else "-"
        model_job = row.rule in scheduling.MODEL_RULES
        lines.append(
            f"| {row.rule} | {row.jobs} | {row.device_hours:.2f} | {row.longest_hours:.2f} | {gpu} | {host} |"
            if model_job
            else f"| {row.rule} | {row.jobs} | - | - | - | {host} |"
        )
    lines.append(
        f"| **total** | **{int(table['jobs'].sum())}** | **{table['device_hours'].sum():.1f}** | | | |"
    )
    resources = costs.resources
    gpu_gb = resources.gpu_memory_gb
    too_large = (
        table[table["gpu_memory_gib"] > (gpu_gb or math.inf) * 1e9 / scheduling.GIB]
        if on_gpu
        else table.iloc[0:0]
    )
    lines += [
        "",
        "Assumptions:",
        "",
        "- model jobs on "
        + (f"{resources.gpus_per_job} GPU(s) each" if on_gpu else "the CPU")
        + f", {costs.dtype_bytes * 8}-bit weights ({costs.settings.model.dtype})"
        + (f", {gpu_gb} GB per GPU" if on_gpu and gpu_gb else ""),
        f"- {resources.generation_tokens_per_second:g} new tokens/s per generation job, "
        f"{resources.training_tokens_per_second:g} tokens/s per training or scoring job"
        + "".join(f", {rule} {rate:g}" for rule, rate in (resources.rule_tokens_per_second or {}).items())
        + "".join(
            f", {method}'s adapters {rate:g}"
            for method, rate in (resources.method_tokens_per_second or {}).items()
        )
        + " (`resources`; check them against a run with `python -m plainsight.report.plan_check`)",
        "- hours: the expected work (each generation decoded once, at most `max_new_tokens` new tokens; "
        "each adapter training example at "
        + "".join(
            f"{tokens:g} tokens for {dataset}, "
            for dataset, tokens in (resources.planned_example_tokens or {}).items()
        )
        + f"`max_length` {costs.settings.prefix_tuning.max_length}"
        + (" elsewhere" if resources.planned_example_tokens else "")
        + f", the prefix aside) and {resources.startup_seconds:g} s of start-up per job, no margin, no "
        "queueing; jobs that load no model take minutes on one CPU core and are counted as jobs only",
        *[f"- {dataset}: {size}" for dataset, size in sizes.items()],
        *[f"- {note}" for note in costs.notes.values()],
    ]
    if len(too_large):
        lines += [
            "",
            f"**Over the GPU's memory ({gpu_gb} GB):** "
            + ", ".join(too_large["rule"])
            + ": lower the batch size (a training job's `prefix_tuning.physical_batch_size`) or max_length, "
            "or use a GPU with more memory.",
        ]
    return "\n".join(lines) + "\n"


def render_evidence_plan(plans: list[CriterionPlan]) -> str:
    """The evidence plan as a Markdown section: each criterion's planned sample against its needs."""
    lines = [
        "## Evidence plan",
        "",
        "| Criterion | Methods | Sample | Planned | PASS needs (nothing leaks) "
        "| FAIL needs (stated effect) |",
        "| :--- | :--- | :--- | ---: | :--- | :--- |",
        *[
            f"| {p.criterion} | {p.design} | {p.unit} | {p.planned} | {p.to_pass} | {p.to_fail} |"
            for p in plans
        ],
        "",
        "The samples at which the gate itself decides with probability 0.8, from the bounds the audit "
        "computes (docs/methods-and-metrics.md#evidence-plan): leak excesses exactly over the counts at "
        "no control-only hit (a control-only rate raises the sample), trained methods' values taken as "
        "independent (values that cluster in documents need more), AUCs normal about the true one with "
        "as many members as held-out texts, canaries at the confidence of three attacks together with "
        "every guess right.",
    ]
    return "\n".join(lines) + "\n"


def segment_counter(settings: Settings, jobs: list[DryRunJob], results: Path = Path("results")):
    """Segments per dataset and split: from its built control codes unless the plan rebuilds them
    (then they may be another source's), else `resources.planned_segments`."""
    planned = settings.resources.planned_segments or {}
    rebuilt = {job.wildcards.get("dataset") for job in jobs if job.rule in ("ingest", "control_codes")}
    sizes: dict[str, str] = {}

    built_splits: dict[
        str, pd.Series | None
    ] = {}  # each dataset's codes are looked for once, not once per job

    def splits(dataset: str) -> pd.Series | None:
        if dataset not in built_splits:
            built = sorted((results / dataset).glob("*/*/codes.parquet"))
            built_splits[dataset] = None
            if built and dataset not in rebuilt:
                built_splits[dataset] = pd.read_parquet(built[0], columns=["split"])["split"]
                sizes[dataset] = f"segments from {built[0]}"
        return built_splits[dataset]

    def count(dataset: str, split: str) -> int:
        if splits(dataset) is not None:
            return int((splits(dataset) == split).sum())
        planned_splits = planned.get(dataset)
        if planned_splits is None or getattr(planned_splits, split) is None:
            raise ValueError(
                f"no control codes of {dataset} built yet: set resources.planned_segments."
                f"{dataset}.{split} (segments of the {split} split) to plan it"
            )
        sizes[dataset] = f"planned segments (resources.planned_segments): {planned_splits.given()}"
        return getattr(planned_splits, split)

    return count, sizes


# Set for the dry run only (workflow/rules/functions/data.smk reads it): a user's source file that is not on
# this machine yet (a credentialed corpus) is planned with `resources.planned_segments` instead of
# stopping the dry run.
PLANNING_VARIABLE = "PLAINSIGHT_PLANNING"


def dry_run(config: Mapping, snakefile: str, target: str, python: str = sys.executable) -> str:
    """Snakemake's dry-run listing of `target` under exactly this config, run by `python` (the
    interpreter of the Snakemake that runs the workflow: a rule's environment may have none)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        yaml.safe_dump(dict(config), handle)
    try:
        completed = subprocess.run(
            [
                python,
                "-m",
                "snakemake",
                target,
                "--dry-run",
                "--nolock",
                "--snakefile",
                str(snakefile),
                "--configfile",
                handle.name,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, PLANNING_VARIABLE: "1"},
        )
    finally:
        os.unlink(handle.name)
    if completed.returncode != 0:
        last = (completed.stderr or completed.stdout).strip().splitlines()[-1:]
        raise InputError(target, None, f"its dry run failed: {' '.join(last)}")
    return completed.stdout + completed.stderr


def plan_target(name: str) -> str:
    """What `results/plan/{name}.md` plans: the rule `all` for `all`, else the file `results/{name}`."""
    return "all" if name == "all" else f"results/{name}"


PLAN_COLUMNS = [
    "rule",
    "jobs",
    "device_hours",
    "longest_hours",
    "host_memory_gb",
    "gpu_memory_gib",
    "gpus_per_job",
]


def plan_tsv(table: pd.DataFrame, costs: scheduling.CostModel) -> str:
    """The plan table as TSV, for `plainsight.report.plan_check`: what the plan does not estimate is
    empty (hours of jobs that load no model, GPU memory on the CPU, host memory the dry run does not
    request); a model rule's `gpus_per_job` (0 on the CPU) turns its device-hours into job hours."""
    records = table.copy()
    estimated = records["rule"].isin(scheduling.MODEL_RULES)
    gpus = pd.Series(costs.resources.gpus_per_job, index=records.index, dtype="Int64")
    records["gpus_per_job"] = gpus.where(estimated)
    records["device_hours"] = records["device_hours"].where(estimated)
    records["longest_hours"] = records["longest_hours"].where(estimated)
    records["gpu_memory_gib"] = records["gpu_memory_gib"].where(estimated & costs.on_gpu)
    records["host_memory_gb"] = records["host_memory_gb"].where(records["host_memory_gb"] > 0)
    return records[PLAN_COLUMNS].to_csv(sep="\t", index=False, float_format="%.4f")


def write_plan(
    config: Mapping, snakefile: str, target: str, path: str, tsv_path: str, python: str = sys.executable
) -> None:
    """The cost plan of `target` under `config`, as Markdown at `path` and its table as TSV at
    `tsv_path`; `python` runs the dry run (under `config` itself)."""
    settings = Settings.from_config(config)
    shapes = yaml.safe_load(Path(settings.resources.model_shapes).read_text(encoding="utf-8"))
    jobs = parse_dry_run(dry_run(config, snakefile, target, python))
    count, sizes = segment_counter(settings, jobs)
    costs = scheduling.CostModel(settings, shapes, count, registry)
    evidence = evidence_plan(Gate.from_config(settings.release.gate), settings, count)
    table = plan_table(jobs, costs)
    write_text(plan_markdown(table, target, costs, sizes) + "\n" + render_evidence_plan(evidence), path)
    write_text(plan_tsv(table, costs), tsv_path)
