"""Trained adapters are reproducible: the same config gives the same saved bytes, in one process
and in two.

Reruns once differed from the first update on: the reparametrising MLP of the prefix drew its
random layers from the process's global generator, which torch seeds from the operating system
in every process (its zero output layer left the first step's loss identical). The in-process
runs below disturb the global generator between runs, as a new process would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from reproduce_job import train_tiny_adapter

JOB = Path(__file__).with_name("reproduce_job.py")
ADAPTER_FILE = "adapter_model.safetensors"


def trained_bytes(model_dir, out: Path, method: str, disturb: int) -> bytes:
    torch.manual_seed(disturb)  # another state of the caller's generators
    torch.rand(disturb + 1)
    train_tiny_adapter(str(model_dir), str(out), method)
    return (out / ADAPTER_FILE).read_bytes()


@pytest.mark.parametrize("method", ["ft", "ft_mask", "dpsgd"])
def test_retraining_in_one_process_gives_the_same_adapter_bytes(tiny_model_dir, tmp_path, method):
    if method == "dpsgd":
        pytest.importorskip("opacus")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        first = trained_bytes(tiny_model_dir, tmp_path / "first", method, disturb=1)
        again = trained_bytes(tiny_model_dir, tmp_path / "again", method, disturb=2)
    finally:
        torch.set_num_threads(threads)
    assert first == again


def test_the_seed_still_changes_the_projection(tiny_model_dir, tiny_tokenizer):
    """The MLP's random layers follow the seed (not a constant init), and building it leaves the
    caller's generator alone."""
    from plainsight.models import load_model
    from plainsight.training.prefix import prefix_model

    def hidden_layer(seed):
        model, tokenizer = load_model(tiny_model_dir)
        torch.manual_seed(0)
        adapter = prefix_model(model, tokenizer, 4, "The Court held.", projection_hidden=16, seed=seed)
        assert torch.equal(torch.rand(3), expected_draw)  # as if nothing had drawn from it
        return adapter.prompt_encoder[adapter.active_adapter].transform[0].weight.detach().clone()

    torch.manual_seed(0)
    expected_draw = torch.rand(3)
    first = hidden_layer(1)
    assert torch.equal(hidden_layer(1), first) and not torch.equal(hidden_layer(2), first)


def test_retraining_in_two_processes_gives_the_same_adapter_bytes(tiny_model_dir, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    outputs = []
    for run in ("first", "second"):
        out = tmp_path / run
        done = subprocess.run(
            [sys.executable, str(JOB), str(tiny_model_dir), str(out), "ft"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append((out / ADAPTER_FILE).read_bytes())
    assert outputs[0] == outputs[1]


def test_lora_finetuning_for_perplexity_repeats(tiny_model_dir):
    """LoRA's random A matrices come from the seed, not from the caller's generators."""
    from plainsight.evaluation.perplexity import FinetuneSettings, finetune
    from plainsight.models import load_model

    def tuned_state(disturb):
        model, tokenizer = load_model(tiny_model_dir)
        torch.manual_seed(disturb)
        tuned, _ = finetune(
            model,
            tokenizer,
            ["The applicant, Mr Henrik Hasslund, lives in Copenhagen."] * 4,
            FinetuneSettings("lora", 1, 1e-2, 2, 32),
            seed=1,
        )
        return {name: p.detach().clone() for name, p in tuned.named_parameters() if p.requires_grad}

    first, again = tuned_state(1), tuned_state(2)
    assert first.keys() == again.keys() and len(first) > 0
    assert all(torch.equal(first[name], again[name]) for name in first)
