"""The Snakemake job a workflow script runs for, as one typed object.

Snakemake runs a rule's `script:` as the main module with a global `snakemake` object. The
workflow scripts reach it only through `run_rule`, which hands their `main` a `RuleJob`: typed
attributes instead of an undefined global, and one place that knows where Snakemake puts it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plainsight.errors import InputError
from plainsight.logs import run_step


@dataclass(frozen=True)
class RuleJob:
    rule: str
    input: Any  # Snakemake's named lists: `job.input.docs`, `job.output[0]`
    output: Any
    params: Any
    wildcards: Any
    log: Any
    threads: int
    resources: Any
    config: dict[str, Any]

    @classmethod
    def from_snakemake(cls, snakemake: Any) -> RuleJob:
        return cls(
            snakemake.rule,
            snakemake.input,
            snakemake.output,
            snakemake.params,
            snakemake.wildcards,
            snakemake.log,
            snakemake.threads,
            snakemake.resources,
            snakemake.config,
        )

    @property
    def method(self) -> str:
        return self.wildcards.method

    @property
    def seed(self) -> int:
        return int(self.wildcards.seed)

    @property
    def log_file(self) -> str | None:
        return self.log[0] if self.log else None


def current_job() -> RuleJob:
    """The job of the running rule script; outside Snakemake, an error that says how to run it."""
    snakemake = getattr(sys.modules["__main__"], "snakemake", None)
    if snakemake is None:
        raise RuntimeError("this script is a Snakemake rule's script: run it through `snakemake <target>`")
    return RuleJob.from_snakemake(snakemake)


# what decides a model job's GPU memory, among its params (and their nested settings blocks)
MEMORY_SETTINGS = ("batch_size", "physical_batch_size", "max_length", "max_new_tokens", "max_prompt_tokens")


def memory_settings(params: Any) -> dict[str, Any]:
    """The batch and length settings among a job's params, nested blocks (`generation`) included."""
    found: dict[str, Any] = {}
    for name, value in dict(params.items()).items():
        if name in MEMORY_SETTINGS:
            found[name] = value
        elif isinstance(value, dict):
            found.update({key: value[key] for key in MEMORY_SETTINGS if key in value})
    return found


def gpu_memory_error(job: RuleJob, error: BaseException) -> InputError:
    """A one-line error for a model job that ran out of GPU memory: the rule, its batch settings and
    the GPU memory estimated for it (`resources.gpu_memory_mb`, from the cost model of
    `plainsight.scheduling`)."""
    settings = ", ".join(f"{key} {value}" for key, value in memory_settings(job.params).items())
    estimate = getattr(job.resources, "gpu_memory_mb", 0)
    estimated = (
        f"estimated {estimate / 1000:.1f} GB" if estimate else "no estimate (set resources.gpu_memory_gb)"
    )
    wildcards = ", ".join(f"{key}={value}" for key, value in dict(job.wildcards.items()).items())
    return InputError(
        f"rule {job.rule}",
        wildcards or None,
        f"out of GPU memory with {settings or 'its settings'} ({estimated}; "
        f"{str(error).splitlines()[0] if str(error) else type(error).__name__}): lower the batch "
        "size or the lengths, or use a GPU with more memory",
    )


def run_rule(main: Callable[[RuleJob], None]) -> None:
    """Run a rule script's `main` on its job, logging to the rule's log; bad input, and running out of
    GPU memory, end it in one line."""
    job = current_job()

    def step() -> None:
        try:
            main(job)
        except Exception as error:
            if (
                type(error).__name__ != "OutOfMemoryError"
            ):  # torch.cuda.OutOfMemoryError, without importing torch
                raise
            raise gpu_memory_error(job, error) from error

    run_step(step, job.log_file)
