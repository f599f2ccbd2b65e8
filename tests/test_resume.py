"""Checkpoints and resume: an interrupted run, started again, ends as an uninterrupted one.

Interruptions are simulated in-process by a loss function that raises after some
steps (the checkpoint of the last due step is then on disk), and for real by
SIGKILL to a training process (`resume_job.py`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from plainsight.models import load_model
from plainsight.training import loop as training
from plainsight.training.checkpoints import (
    CHECKPOINT_FILE,
    Checkpoints,
    Owner,
    Position,
    fingerprint,
    load_checkpoint,
    remove_checkpoint,
    trainable_state,
)
from plainsight.training.examples import build_example
from plainsight.training.loop import Tracking, TrainingSettings, fit
from plainsight.training.prefix import prefix_model
from resume_job import run_job

TEXT = "The applicant, Mr Cengiz Polat, lives in Ankara. Polat appealed."
JOB = Path(__file__).with_name("resume_job.py")  # also run in-process, for the uninterrupted reference
ADAPTER_FILE = "adapter_model.safetensors"
RESUMED = re.compile(r"resuming from checkpoint at epoch (\d+) step (\d+)")


class Interrupted(Exception):
    pass


def examples_for(tokenizer, count=5):
    return [
        build_example(
            (f"d{i}", 0), f"PERSON: Mr Cengiz Polat {i}", TEXT[: 30 + 7 * i], ["Cengiz Polat"], tokenizer, 48
        )
        for i in range(count)
    ]


def run(model_dir, settings, masked=True, checkpoints=None, seed=7):
    model, tokenizer = load_model(model_dir)
    adapter = prefix_model(model, tokenizer, 4, TEXT)
    history = fit(
        adapter,
        examples_for(tokenizer),
        replace(settings, masked=masked),
        seed,
        tokenizer.pad_token_id,
        tracking=Tracking(checkpoints=checkpoints),
    )
    return trainable_state(adapter), history


def interrupt_after(monkeypatch, steps: int) -> None:
    """Make the training loop raise in step `steps + 1`, as a killed job would stop."""
    calls = 0
    real = training.batch_loss

    def counting(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls > steps:
            raise Interrupted
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "batch_loss", counting)


SETTINGS = TrainingSettings(epochs=3, learning_rate=1e-2, batch_size=2, max_length=48)  # 3 batches per epoch


def test_position_moves_on_and_is_due_every_n_steps_and_at_epoch_ends():
    position = Position()
    seen = []
    for _ in range(7):
        position = position.after_step(batches_per_epoch=3)
        seen.append((position.epoch, position.batch, position.step, position.is_due(every_steps=2)))
    assert seen == [
        (0, 1, 1, False),
        (0, 2, 2, True),
        (1, 0, 3, True),
        (1, 1, 4, True),
        (1, 2, 5, False),
        (2, 0, 6, True),
        (2, 1, 7, False),
    ]


# Saved at step 3 (end of epoch 1, not a multiple of 2), at 4 (mid-epoch), and at 4 when stopped in step 6.
@pytest.mark.parametrize("stop_after", [3, 4, 5])
def test_interrupted_run_resumes_to_the_uninterrupted_result(
    tiny_model_dir, tmp_path, monkeypatch, caplog, stop_after
):
    expected_state, expected_history = run(tiny_model_dir, SETTINGS)
    checkpoints = Checkpoints(tmp_path / "ckpt", every_steps=2, method="ft_mask")

    with monkeypatch.context() as patch:
        interrupt_after(patch, stop_after)
        with pytest.raises(Interrupted):
            run(tiny_model_dir, SETTINGS, checkpoints=checkpoints)
    assert (checkpoints.directory / CHECKPOINT_FILE).is_file()

    with caplog.at_level(logging.INFO, logger="plainsight"):
        state, history = run(tiny_model_dir, SETTINGS, checkpoints=checkpoints)
    saved_step = {3: 3, 4: 4, 5: 4}[stop_after]
    assert re.search(
        rf"resuming from checkpoint at epoch {saved_step // 3 + 1} step {saved_step}\b", caplog.text
    )
    assert len(history) == len(expected_history) == 9
    torch.testing.assert_close(history, expected_history, rtol=1e-5, atol=1e-6)
    assert state.keys() == expected_state.keys()
    for name in state:
        torch.testing.assert_close(state[name], expected_state[name])


def test_checkpoint_of_another_config_is_ignored(tiny_model_dir, tmp_path, monkeypatch, caplog):
    checkpoints = Checkpoints(tmp_path / "ckpt", every_steps=1, method="ft")
    with monkeypatch.context() as patch:
        interrupt_after(patch, 2)
        with pytest.raises(Interrupted):
            run(tiny_model_dir, SETTINGS, masked=False, checkpoints=checkpoints)

    other = TrainingSettings(epochs=3, learning_rate=2e-2, batch_size=2, max_length=48)
    expected_state, expected_history = run(tiny_model_dir, other, masked=False)
    with caplog.at_level(logging.INFO, logger="plainsight"):
        state, history = run(tiny_model_dir, other, masked=False, checkpoints=checkpoints)
    assert "ignoring checkpoint" in caplog.text and "resuming" not in caplog.text
    assert history == expected_history  # started over, bit for bit
    assert all(torch.equal(state[name], expected_state[name]) for name in state)

    with caplog.at_level(logging.INFO, logger="plainsight"):  # same settings, other seed: also not reused
        run(tiny_model_dir, other, masked=False, checkpoints=checkpoints, seed=8)
    assert caplog.text.count("ignoring checkpoint") == 2


def test_unreadable_checkpoint_is_ignored_and_removal_cleans_up(tmp_path, caplog):
    directory = tmp_path / "ckpt"
    directory.mkdir()
    (directory / CHECKPOINT_FILE).write_bytes(b"not a checkpoint")
    with caplog.at_level(logging.WARNING, logger="plainsight"):
        assert load_checkpoint(directory, Owner("ft", 0, "0")) is None
    assert "unreadable checkpoint" in caplog.text
    (directory / f".{CHECKPOINT_FILE}.x1y2z3.part").write_bytes(b"half")  # a save killed midway
    remove_checkpoint(directory)
    assert not directory.exists()
    remove_checkpoint(directory)  # nothing to remove is fine


def test_fingerprint_sees_settings_examples_and_weights():
    base = fingerprint(SETTINGS, [1, 2], torch.zeros(3))
    assert base == fingerprint(SETTINGS, [1, 2], torch.zeros(3))
    assert base != fingerprint(TrainingSettings(4, 1e-2, 2, 48), [1, 2], torch.zeros(3))
    assert base != fingerprint(SETTINGS, [1, 3], torch.zeros(3))
    assert base != fingerprint(SETTINGS, [1, 2], torch.tensor([0.0, 0.0, 1e-9]))


def test_killed_training_process_resumes_to_the_uninterrupted_result(tiny_model_dir, tmp_path):
    """SIGKILL a real training process once it has a checkpoint; its rerun resumes and ends identically."""

    def command(out, checkpoint_dir):
        return [sys.executable, str(JOB), str(tiny_model_dir), str(out), str(checkpoint_dir)]

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the job, so float reductions run in the same order
    try:
        run_job(
            str(tiny_model_dir), str(tmp_path / "reference"), str(tmp_path / "ckpt_reference")
        )  # uninterrupted
    finally:
        torch.set_num_threads(threads)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    out, checkpoint_dir = tmp_path / "adapter", tmp_path / "ckpt"
    job = subprocess.Popen(
        command(out, checkpoint_dir), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while not (checkpoint_dir / CHECKPOINT_FILE).is_file():
        assert job.poll() is None, "the job ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 60 s"
        time.sleep(0.05)
    time.sleep(0.5)  # a few more steps
    assert job.poll() is None, "the job finished before it could be killed"
    job.send_signal(signal.SIGKILL)
    assert job.wait(timeout=30) == -signal.SIGKILL
    assert not out.exists()

    rerun = subprocess.run(command(out, checkpoint_dir), env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    resumed = RESUMED.search(rerun.stderr)
    assert resumed and int(resumed.group(2)) > 0, rerun.stderr[-2000:]
    assert not checkpoint_dir.exists()  # removed after the successful finish

    expected, state = load_file(tmp_path / "reference" / ADAPTER_FILE), load_file(out / ADAPTER_FILE)
    assert state.keys() == expected.keys()
    for name in expected:
        torch.testing.assert_close(state[name], expected[name])
    history = json.loads((out / "training.json").read_text())["history"]
    expected_history = json.loads((tmp_path / "reference" / "training.json").read_text())["history"]
    assert len(history) == 200
    torch.testing.assert_close(history, expected_history, rtol=1e-5, atol=1e-6)
