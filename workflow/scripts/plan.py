"""Cost plan of a target: Snakemake's dry run of it, with the GPU-hours and memory of each model job."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from plainsight.errors import InputError
from plainsight.io import write_text
from plainsight.report.plan import Planner, parse_dry_run, plan_table, render, segment_counter
from plainsight.snakemake_job import run_rule

# Set for the dry run only: a user's source file that is not there yet (a credentialed corpus on
# another machine) is planned with `resources.planned_segments` instead of stopping the dry run.
PLANNING_VARIABLE = "PLAINSIGHT_PLANNING"


def dry_run(config: dict, snakefile: str, target: str) -> str:
    """Snakemake's dry-run listing of `target` under exactly this job's config."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        yaml.safe_dump(config, handle)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "snakemake", target, "--dry-run", "--nolock", "--snakefile", snakefile,
             "--configfile", handle.name],
            capture_output=True, text=True, env={**os.environ, PLANNING_VARIABLE: "1"})
    finally:
        os.unlink(handle.name)
    if completed.returncode != 0:
        last = (completed.stderr or completed.stdout).strip().splitlines()[-1:]
        raise InputError(target, None, f"its dry run failed: {' '.join(last)}")
    return completed.stdout + completed.stderr


def main(job):
    config = job.config
    shapes = yaml.safe_load(Path(config["resources"]["model_shapes"]).read_text(encoding="utf-8"))
    jobs = parse_dry_run(dry_run(config, job.params.snakefile, job.params.target))
    count, sizes = segment_counter(config, jobs)
    planner = Planner(config, shapes, count)
    table = plan_table(jobs, planner)
    write_text(render(table, job.params.target, planner, sizes), job.output[0])


run_rule(main)
