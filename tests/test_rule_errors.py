"""A model job that runs out of GPU memory ends in one line naming the rule, its settings and the estimate."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from plainsight import snakemake_job
from plainsight.snakemake_job import RuleJob, gpu_memory_error, memory_settings


class Named(dict):
    """Snakemake's named lists, as far as the error uses them: items() and attributes."""

    __getattr__ = dict.get


def job(**resources) -> RuleJob:
    params = Named(generation={"batch_size": 32, "max_new_tokens": 400, "temperature": 0.7}, purpose="corpus")
    return RuleJob(
        "generate_icl",
        Named(),
        ["results/tab/known/direct/synthetic/icl/seed1.parquet"],
        params,
        Named(dataset="tab", method="icl", seed="1"),
        [],
        1,
        Named(resources),
        {},
    )


def test_memory_settings_are_found_in_nested_blocks():
    assert memory_settings(job().params) == {"batch_size": 32, "max_new_tokens": 400}


def test_the_error_names_the_rule_the_settings_and_the_estimate():
    error = gpu_memory_error(
        job(gpu_memory_mb=35_000), torch.cuda.OutOfMemoryError("CUDA out of memory. Tried...")
    )
    assert str(error) == (
        "rule generate_icl: dataset=tab, method=icl, seed=1: out of GPU memory with batch_size 32, "
        "max_new_tokens 400 (estimated 35.0 GB; CUDA out of memory. Tried...): lower the batch "
        "size or the lengths, or use a GPU with more memory"
    )
    assert "no estimate" in str(gpu_memory_error(job(), torch.cuda.OutOfMemoryError()))


def test_run_rule_turns_running_out_into_one_line_and_leaves_other_errors_alone(
    monkeypatch, capsys, tmp_path
):
    monkeypatch.setitem(
        sys.modules,
        "__main__",
        types.SimpleNamespace(
            snakemake=types.SimpleNamespace(
                rule="generate_icl",
                input=Named(),
                output=[str(tmp_path / "out.parquet")],
                params=job().params,
                wildcards=Named(dataset="tab"),
                log=[],
                threads=1,
                resources=Named(gpu_memory_mb=1000),
                config={},
            )
        ),
    )

    def runs_out(_job):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory.")

    with pytest.raises(SystemExit) as stopped:
        snakemake_job.run_rule(runs_out)
    assert stopped.value.code == 1
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .startswith("error: rule generate_icl: dataset=tab: out of GPU memory with batch_size 32")
    )
    assert not (tmp_path / "out.parquet").exists()

    def breaks(_job):
        raise KeyError("a bug, not bad input")

    with pytest.raises(KeyError):
        snakemake_job.run_rule(breaks)
