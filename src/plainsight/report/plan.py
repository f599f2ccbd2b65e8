"""The cost plan of a target before it is submitted: jobs per rule, GPU-hours, GPU and host memory.

The jobs come from Snakemake's own dry run of the target (`parse_dry_run`), so the plan lists
exactly what `snakemake <target>` would run now, with the scheduler's host-memory request of each
job. This module adds what the scheduler does not know: the hours each model job takes at the
configured throughputs (`resources.generation_tokens_per_second`, `training_tokens_per_second`,
from the benchmarks) and the GPU memory it needs (`plainsight.scheduling`: weights in the job's
dtype, KV cache of the slots, activations and logits of a training step). Corpus sizes are the
built control codes' where they exist, else `resources.planned_segments`.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from plainsight import scheduling
from plainsight.errors import InputError
from plainsight.io import write_text
from plainsight.generation.memory import AUTO, GIB, cpu_slots, kv_cache_bytes, slots_that_fit
from plainsight.generation.slots import slot_cache_positions
from plainsight.methods import registry

_JOB_HEADER = re.compile(r"^(?:local)?rule (\w+):\s*$")
_FIELD = re.compile(r"^\s+(wildcards|resources): (.*)$")
LORA_WIDTHS_PER_LAYER = 18  # in + out widths of every linear layer of a block, in hidden sizes (gated MLP)
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


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


def gpu_generation_bytes(shape: scheduling.ModelShape, dtype_bytes: int, slots: int, positions: int,
                         prefill_tokens: int) -> int:
    """Decoding: weights, the slots' KV cache, and the transient activations and float32 logits
    of one prompt's prefill."""
    kv = slots * kv_cache_bytes(shape.layers, shape.kv_heads, shape.head_dim, dtype_bytes, positions)
    prefill = prefill_tokens * shape.hidden * 16 * dtype_bytes + slots * shape.vocab * 4 * 2
    return shape.parameters * dtype_bytes + kv + prefill


@dataclass(frozen=True)
class JobEstimate:
    hours: float
    gpu_bytes: int = 0  # 0: the job loads no model


@dataclass
class Planner:
    """Estimates of the model jobs of one config. `segments(dataset, split)` counts the segments of a split."""

    config: Mapping
    shapes: Mapping[str, Mapping]
    segments: Callable[[str, str], int]

    def __post_init__(self):
        self.resources = self.config["resources"]
        self.on_gpu = self.resources["gpus_per_job"] > 0
        dtype = self.config["model"]["dtype"]
        self.dtype_bytes = DTYPE_BYTES.get(dtype, 2 if self.on_gpu else 4)  # auto: 16-bit on a GPU
        self.notes: dict[str, str] = {}

    # --- shared pieces ---

    def shape(self, name_or_path: str) -> scheduling.ModelShape:
        shape = scheduling.model_shape(name_or_path, self.shapes)
        if shape is None:
            raise ValueError(f"no shape for model {name_or_path!r}: add it to resources.model_shapes "
                             f"({self.resources['model_shapes']}) or give a folder with its config.json")
        return shape

    def hours(self, tokens: float, tokens_per_second: float) -> float:
        return scheduling.runtime_minutes(tokens, tokens_per_second, 1.0) / 60

    def generation(self, model: str, generations: float, longest_prompt: int) -> JobEstimate:
        generation = self.config["generation"]
        shape = self.shape(model)
        positions = slot_cache_positions(longest_prompt, generation["max_new_tokens"])
        slots = self.slots(shape, positions, model)
        gpu = gpu_generation_bytes(shape, self.dtype_bytes, slots, positions, longest_prompt)
        hours = self.hours(generations * generation["max_new_tokens"], self.resources["generation_tokens_per_second"])
        return JobEstimate(hours, gpu)

    def slots(self, shape: scheduling.ModelShape, positions: int, model: str) -> int:
        generation = self.config["generation"]
        if generation["batch_size"] != AUTO or not self.on_gpu:
            return cpu_slots(generation["batch_size"])
        gpu_gb = self.resources["gpu_memory_gb"]
        if not gpu_gb:
            raise InputError("config", "resources.gpu_memory_gb",
                             "generation.batch_size: auto on a GPU needs the GPU's memory to plan the slots")
        per_slot = kv_cache_bytes(shape.layers, shape.kv_heads, shape.head_dim, self.dtype_bytes, positions)
        free = gpu_gb * 1e9 - shape.parameters * self.dtype_bytes
        slots = max(1, min(slots_that_fit(free, per_slot), generation["group_size"]))
        self.notes[f"slots {model}"] = (f"`batch_size: auto` takes {slots} slots for {model} on a "
                                        f"{gpu_gb} GB GPU ({per_slot / GIB:.2f} GiB of KV cache each)")
        return slots

    def attempts(self, method: str) -> int:
        return 1 + registry.method(method).regenerations(self.config["generation"])

    def model_of(self, method: str) -> str:
        return self.config[registry.model_config_key(method)]["name_or_path"]

    def shards(self, wildcards: Mapping[str, str]) -> int:
        return self.config["generation"]["shards"] if "shard" in wildcards else 1

    # --- per rule ---

    def generate_icl(self, w: Mapping[str, str]) -> JobEstimate:
        generation = self.config["generation"]
        generations = generation["generations_per_segment"] * len(self.config["datasets"][w["dataset"]]["segments"])
        generations = math.ceil(generations / self.shards(w)) * self.attempts(w["method"])
        return self.generation(self.model_of(w["method"]), generations, generation["max_prompt_tokens"])

    def generate_trained(self, w: Mapping[str, str]) -> JobEstimate:
        prefix = self.config["prefix_tuning"]
        generations = prefix["generations"] or self.segments(w["dataset"], "train")
        return self.generation(self.config["model"]["name_or_path"], math.ceil(generations / self.shards(w)),
                               prefix["num_virtual_tokens"] + prefix["max_length"])

    def mauve_texts(self, w: Mapping[str, str]) -> JobEstimate:
        samples = self.config["utility"]["mauve"]["samples"] or self.segments(w["dataset"], "test")
        return self.generation(self.model_of(w["method"]), samples * self.attempts(w["method"]),
                               self.config["generation"]["max_prompt_tokens"])

    def train_adapter(self, w: Mapping[str, str]) -> JobEstimate:
        prefix = self.config["prefix_tuning"]
        method = registry.method(w["method"])
        shape = self.shape(self.config["model"]["name_or_path"])
        tokens = prefix["num_virtual_tokens"] + prefix["max_length"]
        trainable = scheduling.prefix_parameters(shape, prefix["num_virtual_tokens"], prefix["projection_hidden"])
        gpu = scheduling.gpu_training_bytes(shape, self.dtype_bytes, prefix["batch_size"], tokens, trainable,
                                            logits_passes=2 if method.masked_objective else 1,
                                            per_sample_gradients=method.differentially_private)
        work = self.segments(w["dataset"], "train") * prefix["epochs"] * tokens
        return JobEstimate(self.hours(work, self.resources["training_tokens_per_second"]), gpu)

    def perplexity(self, w: Mapping[str, str]) -> JobEstimate:
        """Fine-tuning on one corpus (bounded by its generations' tokens), then scoring the test split."""
        settings = self.config["utility"]["perplexity"]
        shape = self.shape(self.config["model"]["name_or_path"])
        full = settings["finetune"] == "full"
        lora = 0 if full else settings["lora_rank"] * shape.layers * LORA_WIDTHS_PER_LAYER * shape.hidden
        gpu = scheduling.gpu_training_bytes(shape, self.dtype_bytes, settings["batch_size"], settings["max_length"],
                                            lora, frozen_weights=not full)
        generations = max(self.config["generation"]["generations_per_segment"]
                          * len(self.config["datasets"][w["dataset"]]["segments"]),
                          self.config["prefix_tuning"]["generations"] or self.segments(w["dataset"], "train"))
        work = (settings["epochs"] * generations * self.config["generation"]["max_new_tokens"]
                + self.segments(w["dataset"], "test") * settings["max_length"])
        return JobEstimate(self.hours(work, self.resources["training_tokens_per_second"]), gpu)

    def base_perplexity(self, w: Mapping[str, str]) -> JobEstimate:
        settings = self.config["utility"]["perplexity"]
        shape = self.shape(self.config["model"]["name_or_path"])
        gpu = scheduling.gpu_training_bytes(shape, self.dtype_bytes, settings["batch_size"], settings["max_length"], 0)
        work = self.segments(w["dataset"], "test") * settings["max_length"]
        return JobEstimate(self.hours(work, self.resources["training_tokens_per_second"]), gpu)

    def mauve(self, w: Mapping[str, str]) -> JobEstimate:
        """Features of the generated and the real texts: forward passes of the featurizer."""
        settings = self.config["utility"]["mauve"]
        texts = 2 * (settings["samples"] or self.segments(w["dataset"], "test"))
        if settings["featurizer"] == "minilm":
            return JobEstimate(self.hours(0, 1))
        shape = self.shape(settings["featurizer"])
        gpu = shape.parameters * self.dtype_bytes + settings["max_tokens"] * shape.hidden * 16 * self.dtype_bytes
        return JobEstimate(self.hours(texts * settings["max_tokens"], self.resources["training_tokens_per_second"]), gpu)

    def membership_scores(self, w: Mapping[str, str]) -> JobEstimate:
        """Forward passes of the balanced members and held-out segments, under the base model and each
        trained method's adapter (no backward pass: a third of a training step's work, counted as one)."""
        audit, prefix = self.config["audit"], self.config["prefix_tuning"]
        held_out = 2 * self.segments(w["dataset"], "test")  # dev and test: planned sizes name train and test only
        texts = 2 * min(self.segments(w["dataset"], "train"), held_out)
        models = 1 + sum(registry.method(m).trained for m in self.config["methods"])
        tokens = prefix["num_virtual_tokens"] + prefix["max_length"]
        shape = self.shape(self.config["model"]["name_or_path"])
        gpu = scheduling.gpu_training_bytes(shape, self.dtype_bytes, audit["batch_size"], tokens, 0)
        return JobEstimate(self.hours(texts * models * tokens, self.resources["training_tokens_per_second"]), gpu)

    def estimate(self, job: DryRunJob) -> JobEstimate | None:
        """The job's estimate; None for a job that loads no model (minutes on one CPU core)."""
        rule = getattr(self, job.rule, None) if job.rule in MODEL_RULES else None
        return rule(job.wildcards) if rule else None


MODEL_RULES = ("generate_icl", "generate_trained", "mauve_texts", "train_adapter", "perplexity",
               "base_perplexity", "mauve", "membership_scores")


def plan_table(jobs: list[DryRunJob], planner: Planner) -> pd.DataFrame:
    """One row per rule: jobs, device-hours (hours x GPUs per job, or CPU hours), the largest job's
    hours, GPU memory (GiB) and host memory request (GB); model rules first, the costliest first."""
    gpus = max(1, planner.resources["gpus_per_job"])
    rows: dict[str, dict] = {}
    for job in jobs:
        estimate = planner.estimate(job)
        row = rows.setdefault(job.rule, {"rule": job.rule, "jobs": 0, "device_hours": 0.0, "longest_hours": 0.0,
                                          "gpu_memory_gib": 0.0, "host_memory_gb": 0.0})
        row["jobs"] += 1
        mem_mb = job.resources.get("mem_mb", "")
        if mem_mb.isdigit():
            row["host_memory_gb"] = max(row["host_memory_gb"], int(mem_mb) / 1000)
        if estimate is not None:
            row["device_hours"] += estimate.hours * gpus
            row["longest_hours"] = max(row["longest_hours"], estimate.hours)
            row["gpu_memory_gib"] = max(row["gpu_memory_gib"], estimate.gpu_bytes / GIB)
    table = pd.DataFrame(list(rows.values()),
                         columns=["rule", "jobs", "device_hours", "longest_hours", "gpu_memory_gib", "host_memory_gb"])
    table["loads_model"] = table["rule"].isin(MODEL_RULES)
    ordered = table.sort_values(["loads_model", "device_hours", "rule"], ascending=[False, False, True])
    return ordered.drop(columns="loads_model").reset_index(drop=True)


def render(table: pd.DataFrame, target: str, planner: Planner, sizes: Mapping[str, str]) -> str:
    """The plan as Markdown: the table, its total, and what it assumes."""
    on_gpu = planner.on_gpu
    hours_label = "GPU-hours" if on_gpu else "CPU job hours"
    lines = [f"# Cost plan: `{target}`", "",
             f"| Rule | Jobs | {hours_label} | Longest job (h) | GPU memory per job (GiB) | Host memory request (GB) |",
             "| :--- | ---: | ---: | ---: | ---: | ---: |"]
    for row in table.itertuples(index=False):
        gpu = f"{row.gpu_memory_gib:.1f}" if on_gpu and row.gpu_memory_gib else "-"
        host = f"{row.host_memory_gb:.1f}" if row.host_memory_gb else "-"
        model_job = row.rule in MODEL_RULES
        lines.append(f"| {row.rule} | {row.jobs} | {row.device_hours:.2f} | "
                     f"{row.longest_hours:.2f} | {gpu} | {host} |" if model_job else
                     f"| {row.rule} | {row.jobs} | - | - | - | {host} |")
    lines.append(f"| **total** | **{int(table['jobs'].sum())}** | **{table['device_hours'].sum():.1f}** | | | |")
    resources = planner.resources
    gpu_gb = resources["gpu_memory_gb"]
    too_large = table[table["gpu_memory_gib"] > (gpu_gb or math.inf) * 1e9 / GIB] if on_gpu else table.iloc[0:0]
    lines += ["", "Assumptions:", "",
              f"- model jobs on {'%d GPU(s) each' % resources['gpus_per_job'] if on_gpu else 'the CPU'}, "
              f"{planner.dtype_bytes * 8}-bit weights ({planner.config['model']['dtype']})"
              + (f", {gpu_gb} GB per GPU" if on_gpu and gpu_gb else ""),
              f"- {resources['generation_tokens_per_second']:g} new tokens/s per generation job, "
              f"{resources['training_tokens_per_second']:g} tokens/s per training or scoring job "
              "(`resources`; measure yours with benchmarks/generation.py and benchmarks/training.py)",
              "- hours include 2 minutes of start-up per job and no queueing; jobs that load no model take "
              "minutes on one CPU core and are counted as jobs only",
              *[f"- {dataset}: {size}" for dataset, size in sizes.items()],
              *[f"- {note}" for note in planner.notes.values()]]
    if len(too_large):
        lines += ["", f"**Over the GPU's memory ({gpu_gb} GB):** " + ", ".join(too_large["rule"])
                  + ": lower the batch size or max_length, or use a GPU with more memory."]
    return "\n".join(lines) + "\n"


def segment_counter(config: Mapping, jobs: list[DryRunJob], results: Path = Path("results")):
    """Segments per dataset and split: from its built control codes unless the plan rebuilds them
    (then they may be another source's), else `resources.planned_segments`."""
    planned = config["resources"]["planned_segments"] or {}
    rebuilt = {job.wildcards.get("dataset") for job in jobs if job.rule in ("ingest", "control_codes")}
    sizes: dict[str, str] = {}

    built_splits: dict[str, pd.Series | None] = {}  # each dataset's codes are looked for once, not once per job

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
        if dataset not in planned or split not in planned[dataset]:
            raise ValueError(f"no control codes of {dataset} built yet: set resources.planned_segments."
                             f"{dataset}.{split} (segments of the {split} split) to plan it")
        sizes[dataset] = f"planned segments (resources.planned_segments): {planned[dataset]}"
        return int(planned[dataset][split])

    return count, sizes


# Set for the dry run only (workflow/rules/common.smk reads it): a user's source file that is not on
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
            [python, "-m", "snakemake", target, "--dry-run", "--nolock", "--snakefile", str(snakefile),
             "--configfile", handle.name],
            capture_output=True, text=True, env={**os.environ, PLANNING_VARIABLE: "1"})
    finally:
        os.unlink(handle.name)
    if completed.returncode != 0:
        last = (completed.stderr or completed.stdout).strip().splitlines()[-1:]
        raise InputError(target, None, f"its dry run failed: {' '.join(last)}")
    return completed.stdout + completed.stderr


def write_plan(config: Mapping, snakefile: str, target: str, path: str, python: str = sys.executable) -> None:
    """The cost plan of `target` under `config`, as Markdown at `path`; `python` runs the dry run."""
    shapes = yaml.safe_load(Path(config["resources"]["model_shapes"]).read_text(encoding="utf-8"))
    jobs = parse_dry_run(dry_run(config, snakefile, target, python))
    count, sizes = segment_counter(config, jobs)
    planner = Planner(config, shapes, count)
    write_text(render(plan_table(jobs, planner), target, planner, sizes), path)
