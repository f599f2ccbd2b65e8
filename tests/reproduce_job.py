"""A tiny adapter training for the reproducibility tests: the same config gives the same bytes.

Usage: reproduce_job.py MODEL_DIR OUTPUT_DIR METHOD, METHOD one of ft, ft_mask, dpsgd. The prefix
trains through the reparametrising MLP (its random layers are what once made reruns differ).
"""

import sys
from pathlib import Path

import torch

from plainsight.models import load_model
from plainsight.training.dp import DPSettings, DPTrainingSettings, dp_adapter_model, train_dp
from plainsight.training.examples import build_example
from plainsight.training.loop import TrainingSettings, fit
from plainsight.training.objectives import lm_loss
from plainsight.training.prefix import prefix_model, save_adapter

TEXT = "The applicant, Mr Cengiz Polat, lives in Ankara. Polat appealed."
SEED = 3


def train_tiny_adapter(model_dir: str, output_dir: str, method: str) -> None:
    model, tokenizer = load_model(model_dir)
    examples = [
        build_example((f"d{i}", 0), f"PERSON: Mr Polat {i}", TEXT[: 24 + 5 * i], ["Polat"], tokenizer, 48)
        for i in range(6)
    ]
    if method == "dpsgd":
        adapter = dp_adapter_model(model, 4, tokenizer, TEXT, projection_hidden=16, seed=SEED)
        train_dp(
            adapter,
            examples,
            tokenizer.pad_token_id,
            settings=DPTrainingSettings(
                batch_size=2, epochs=2, learning_rate=1e-2, privacy=DPSettings(accountant="rdp")
            ),
            seed=SEED,
            loss_fn=lm_loss,
        )
    else:
        adapter = prefix_model(model, tokenizer, 4, TEXT, projection_hidden=16, seed=SEED)
        settings = TrainingSettings(
            epochs=2,
            learning_rate=1e-2,
            batch_size=2,
            max_length=48,
            warmup_steps=1,
            schedule="cosine",
            masked=method == "ft_mask",
        )
        fit(adapter, examples, settings, SEED, tokenizer.pad_token_id)
    save_adapter(adapter, Path(output_dir))


if __name__ == "__main__":
    torch.set_num_threads(1)
    train_tiny_adapter(*sys.argv[1:])
