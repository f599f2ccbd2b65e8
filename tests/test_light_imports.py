"""The cost model and the Snakefile need neither torch nor transformers: a cluster's login node plans
and submits the workflow without them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_workflow import make_workdir

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers")

# A sitecustomize that makes `import torch` and `import transformers` fail, as where they are not installed.
BLOCKER = textwrap.dedent(f"""
    import importlib.abc
    import sys

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {HEAVY!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
            return None

    sys.meta_path.insert(0, Blocker())
""")


@pytest.fixture(scope="module")
def without_torch(tmp_path_factory) -> dict[str, str]:
    """The environment of a Python in which torch and transformers cannot be imported."""
    site = tmp_path_factory.mktemp("blocked")
    (site / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    paths = [str(site), str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def run(args: list[str], env: dict[str, str], cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_the_blocker_blocks(without_torch):
    blocked = run(["-c", "import torch"], without_torch)
    assert blocked.returncode != 0 and "blocked" in blocked.stderr


@pytest.mark.parametrize(
    "module",
    [
        "plainsight.scheduling",
        "plainsight.report.plan",
        "plainsight.report.plan_check",  # run on a cluster's login node after the run
        "plainsight.model_settings",
        "plainsight.generation.params",
        "plainsight.training.params",
        # the table jobs run in the metrics environment, which has no torch
        "plainsight.audit.privacy_audit_table",
        "plainsight.audit.canary_table",
        "plainsight.report.privacy_audit_markdown",
        "plainsight.report.canary_markdown",
        "plainsight.report.methods_table",
    ],
)
def test_the_cost_model_and_the_rules_params_import_neither_torch_nor_transformers(module):
    code = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    completed = run(["-c", code], {**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


@pytest.mark.parametrize("target", [[], ["results/tables/all"]], ids=["all", "tables"])
def test_the_snakefile_parses_and_plans_without_torch(without_torch, tmp_path, target):
    """A dry run of the default target and of every table, in a Python where torch cannot be imported.
    It plans in a fresh working directory, as in a fresh clone: the checkout's own results (after
    `make run`, nothing is left to do there) and .snakemake stay out of it."""
    workdir = make_workdir(tmp_path / "workdir")
    completed = run(["-m", "snakemake", *target, "--dry-run"], without_torch, cwd=workdir)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "rule train_adapter:" in completed.stdout and "rule generate_icl:" in completed.stdout
    assert not (workdir / "results").exists()  # planned, nothing run


# The jobs' statistics and text libraries: the Snakefile reads only names and settings from the package.
PARSE_FREE = ("scipy.stats", "nltk")


def test_the_snakefile_parses_without_the_jobs_statistics_and_text_libraries(tmp_path):
    """Every snakemake call parses the Snakefile, a dry run as much as a run: importing scipy.stats and
    nltk there was 3 of a dry run's 5 seconds."""
    workdir = make_workdir(tmp_path / "workdir")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    completed = run(["-X", "importtime", "-m", "snakemake", "--dry-run", "--quiet"], env, cwd=workdir)
    assert completed.returncode == 0, completed.stderr[-3000:]
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in completed.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "plainsight.settings" in imported and not imported & set(PARSE_FREE)
