"""A training job for the kill test: prefix tuning of a tiny model with a checkpoint every step.

Usage: resume_job.py MODEL_DIR OUTPUT_DIR CHECKPOINT_DIR. Like the workflow's training
rule it trains (resuming from CHECKPOINT_DIR when there is a checkpoint), saves the
adapter, then removes the checkpoint. Many small steps (200) make it run for a few seconds.
"""

import sys
from pathlib import Path

import torch

from plainsight.logs import configure_logging
from plainsight.models import load_model
from plainsight.training.checkpoints import Checkpoints, remove_checkpoint
from plainsight.training.examples import build_example
from plainsight.training.loop import Tracking, TrainingSettings, fit
from plainsight.training.prefix import prefix_model, save_adapter

TEXT = "The applicant, Mr Cengiz Polat, lives in Ankara. Polat appealed."


def run_job(model_dir: str, output_dir: str, checkpoint_dir: str) -> None:
    model, tokenizer = load_model(model_dir)
    examples = [
        build_example((f"d{i}", 0), f"PERSON: Mr Polat {i}", TEXT[: 20 + 4 * i], ["Polat"], tokenizer, 48)
        for i in range(10)
    ]
    adapter = prefix_model(model, tokenizer, 4, TEXT)
    settings = TrainingSettings(epochs=20, learning_rate=1e-2, batch_size=1, max_length=48)
    checkpoints = Checkpoints(Path(checkpoint_dir), every_steps=1, method="ft")
    history = fit(
        adapter,
        examples,
        settings,
        seed=11,
        pad_token_id=tokenizer.pad_token_id,
        tracking=Tracking(checkpoints=checkpoints),
    )
    save_adapter(adapter, output_dir, {"training.json": {"history": history}})
    remove_checkpoint(checkpoint_dir)


if __name__ == "__main__":
    configure_logging()
    torch.set_num_threads(1)
    run_job(*sys.argv[1:])
