"""The cluster path: a model job goes through Snakemake's SLURM executor plugin to a real
single-node SLURM (tests/cluster/slurm_single_node.sh) and writes what a local run writes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from test_workflow import REPO, make_workdir, snakemake, tiny_overlay, write_overlay

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(
        not (os.environ.get("CI") or os.environ.get("PLAINSIGHT_SLURM") == "1"),
        reason="starts SLURM daemons (and installs slurm-wlm as root): set CI or PLAINSIGHT_SLURM=1",
    ),
]

CLUSTER_SCRIPT = REPO / "tests/cluster/slurm_single_node.sh"
TARGET = (
    "results/tab/known/direct/synthetic/icl/seed1.parquet"  # generate_icl, a GPU rule, after local code rules
)
SAME_OUTPUTS = (TARGET, "results/tab/docs.parquet", "results/tab/known/direct/codes.parquet")
GPU_RULES = ("generate_icl", "generate_trained", "train_adapter")
# The profile as users run it, pointed at the test cluster: its one partition for every
# rule (no GPUs here), no account and job status from squeue (the cluster has no slurmdbd).
TEST_CLUSTER_OVERRIDES = (
    "--default-resources",
    "slurm_partition=local",
    "--set-resources",
    *(f"{rule}:slurm_partition=local" for rule in GPU_RULES),
    "--slurm-no-account",
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "1",
    "--seconds-between-status-checks",
    "3",
    "--latency-wait",
    "5",
    "--retries",
    "0",
)


def tiny_workdir(path: Path, model_dir: Path) -> Path:
    workdir = make_workdir(path)
    overlay = tiny_overlay(model_dir, {"seeds": [1]})
    write_overlay(workdir, "tiny.yaml", overlay)
    return workdir


def run_on_slurm(workdir: Path, record_dir: Path) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--profile",
        str(REPO / "profiles/slurm"),
        TARGET,
        "--configfile",
        "tiny.yaml",
        *TEST_CLUSTER_OVERRIDES,
    ]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(
        ["bash", str(CLUSTER_SCRIPT), str(record_dir), "--", *command],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    if result.returncode != 0:
        raise AssertionError(f"snakemake on SLURM failed:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}")
    return result


def submitted_job_ids(workdir: Path) -> list[str]:
    """SLURM job ids from the Snakemake log of the run."""
    (log,) = (workdir / ".snakemake/log").glob("*.snakemake.log")
    return re.findall(r"has been submitted with SLURM jobid (\d+)", log.read_text(encoding="utf-8"))


def test_a_gpu_rule_runs_through_slurm_and_writes_what_a_local_run_writes(tmp_path, tiny_model_dir):
    local = tiny_workdir(tmp_path / "local", tiny_model_dir)
    snakemake(local, TARGET, "--configfile", "tiny.yaml")

    cluster = tiny_workdir(tmp_path / "slurm", tiny_model_dir)
    record = tmp_path / "slurm_record"
    run_on_slurm(cluster, record)

    job_ids = submitted_job_ids(cluster)
    assert len(job_ids) == 1  # generate_icl only: ingest and control_codes are local rules
    completed = re.findall(
        r"JobId=(\d+) .*JobState=COMPLETED Partition=local",
        (record / "jobcomp.txt").read_text(encoding="utf-8"),
    )
    assert completed == job_ids  # slurmctld's completion record
    queue = dict(
        line.split("|")[0::2] for line in (record / "squeue.txt").read_text(encoding="utf-8").split()
    )
    assert queue == {job_ids[0]: "COMPLETED"}

    for output in SAME_OUTPUTS:
        pd.testing.assert_frame_equal(pd.read_parquet(cluster / output), pd.read_parquet(local / output))
