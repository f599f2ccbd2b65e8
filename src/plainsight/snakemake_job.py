"""The Snakemake job a workflow script runs for, as one typed object.

Snakemake runs a rule's `script:` as the main module with a global `snakemake` object. The
workflow scripts reach it only through `run_rule`, which hands their `main` a `RuleJob`: typed
attributes instead of an undefined global, and one place that knows where Snakemake puts it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

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
    def from_snakemake(cls, snakemake: Any) -> "RuleJob":
        return cls(snakemake.rule, snakemake.input, snakemake.output, snakemake.params, snakemake.wildcards,
                   snakemake.log, snakemake.threads, snakemake.resources, snakemake.config)

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


def run_rule(main: Callable[[RuleJob], None]) -> None:
    """Run a rule script's `main` on its job, logging to the rule's log; bad input ends it in one line."""
    job = current_job()
    run_step(lambda: main(job), job.log_file)
