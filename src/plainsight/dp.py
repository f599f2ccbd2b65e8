"""DP-SGD baseline: control-code fine-tuning of a prefix-tuning adapter with Opacus.

The adapter is the same as the non-private method's: peft prefix tuning without
the reparametrisation MLP (`prefix_projection=False`). Opacus computes correct
per-sample gradients for it with its ordinary hooks: the only trainable module
is the prefix `nn.Embedding`, whose input is the fixed prefix token indices
expanded to one row per sequence, so row i of its output feeds sequence i only
and Opacus's embedding grad sampler gives each sequence its own gradient. All
base-model modules are frozen, so Opacus needs no grad sampler for them. The
test suite checks this against single-sequence backward passes on a tiny Llama
(equal to 1e-5, padded batch rows included), so LoRA is not needed.

Privacy: Poisson sampling (sample rate 1 / batches per epoch, about batch_size / N),
per-sequence clipping to `max_grad_norm`, Gaussian noise calibrated by
`make_private_with_epsilon` for the target epsilon over all steps, delta = 1 / N
by default. The loss is each sequence's own mean NLL, averaged over the batch: a
token-weighted mean over the whole batch would scale one sequence's gradient by
the others' lengths, so adding or removing a sequence could move more than one
clipped term.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch
from tqdm import tqdm

log = logging.getLogger(__name__)

ADAPTER = "prefix"


@dataclass(frozen=True)
class DPSettings:
    epsilon: float = 8.0
    max_grad_norm: float = 1.0
    delta: float | None = None  # None = 1 / number of training sequences
    accountant: str = "prv"  # Opacus accountant, "prv" (tighter, its default) or "rdp"


def dp_adapter_model(base_model, num_virtual_tokens: int, tokenizer=None, init_text: str | None = None):
    """Wrap `base_model` in a trainable prefix-tuning adapter (base weights frozen).

    With `tokenizer` and `init_text` the prefix starts as the non-private method's does
    (`plainsight.prefix.prefix_model`); otherwise it starts at peft's random init. The
    initialisation is outside the DP guarantee, so `init_text` must be public text, never
    a training document.
    """
    if (tokenizer is None) != (init_text is None):
        raise ValueError("give both tokenizer and init_text, or neither")
    if init_text is not None:
        from plainsight.prefix import prefix_model

        return prefix_model(base_model, tokenizer, num_virtual_tokens, init_text)
    from peft import PrefixTuningConfig, TaskType, get_peft_model

    config = PrefixTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=num_virtual_tokens,
                                prefix_projection=False)
    return get_peft_model(base_model, config)


def per_sequence_loss(logits: torch.Tensor, labels: torch.Tensor, loss_fn: Callable) -> torch.Tensor:
    """Mean over the batch of each sequence's own loss; Opacus's "mean" reduction then
    makes every per-sample gradient that of one sequence's loss alone."""
    losses = [loss_fn(logits[i:i + 1], labels[i:i + 1]) for i in range(logits.shape[0])]
    return torch.stack(losses).mean()


def has_label_tokens(example: Mapping[str, list[int]]) -> bool:
    # The causal shift never predicts position 0, so a label there alone gives an empty (NaN) loss.
    return any(label != -100 for label in example["labels"][1:])


def make_private(model, optimizer, loader, settings: DPSettings, epochs: int, delta: float,
                 noise_generator: torch.Generator | None = None):
    """Opacus engine, per-sample-gradient model, DP optimizer and Poisson loader."""
    from opacus import PrivacyEngine

    with warnings.catch_warnings():
        # Seeded (non-secure) randomness is deliberate: runs must be reproducible.
        warnings.filterwarnings("ignore", message="Secure RNG turned off", category=UserWarning)
        engine = PrivacyEngine(accountant=settings.accountant, secure_mode=False)
    private_model, private_optimizer, private_loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, target_epsilon=settings.epsilon,
        target_delta=delta, epochs=epochs, max_grad_norm=settings.max_grad_norm,
        poisson_sampling=True, noise_generator=noise_generator)
    return engine, private_model, private_optimizer, private_loader


def _is_empty(batch) -> bool:
    # Opacus yields a zero-row dict for an empty Poisson batch, or a list if the first batch is empty.
    return not isinstance(batch, Mapping) or batch["input_ids"].shape[0] == 0


def _noise_only_grads(params: list[torch.nn.Parameter]) -> None:
    """Zero-row per-sample gradients, so the DP optimizer still adds noise and the
    accountant still counts the step (skipping it would reveal the batch was empty)."""
    for p in params:
        p.grad_sample = torch.zeros((0, *p.shape), dtype=p.dtype, device=p.device)


def train_dp(model, examples: list[dict[str, list[int]]], collate, batch_size: int, epochs: int, lr: float,
             settings: DPSettings, seed: int, loss_fn) -> dict:
    """Train the adapter of peft `model` in place with DP-SGD; returns the privacy spent and the losses."""
    usable = [example for example in examples if has_label_tokens(example)]
    if len(usable) < len(examples):
        log.warning("DP training: dropped %d sequences without label tokens", len(examples) - len(usable))
    if not usable:
        raise ValueError("DP training needs at least one sequence with label tokens")
    n = len(usable)
    delta = settings.delta if settings.delta is not None else 1.0 / n

    params = [p for p in model.parameters() if p.requires_grad]
    device = params[0].device
    sampling_generator = torch.Generator().manual_seed(seed)
    # Noise is drawn on the parameters' device, so its generator must live there too.
    noise_generator = torch.Generator(device=device).manual_seed(seed + 1)
    loader = torch.utils.data.DataLoader(usable, batch_size=batch_size, shuffle=True, collate_fn=collate,
                                         generator=sampling_generator)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    engine, private_model, private_optimizer, private_loader = make_private(
        model, optimizer, loader, settings, epochs, delta, noise_generator)
    noise_multiplier = private_optimizer.noise_multiplier
    steps_per_epoch = len(private_loader)
    log.info("DP training: %d sequences, %d epochs x %d steps, sample rate %.4f, noise multiplier %.4f, "
             "clip %.3g, target epsilon %.3g, delta %.3g", n, epochs, steps_per_epoch,
             private_loader.sample_rate, noise_multiplier, settings.max_grad_norm, settings.epsilon, delta)

    was_training = model.training
    model.train()
    losses: list[float] = []
    steps = empty = 0
    devices = [device.index or 0] if device.type == "cuda" else []
    try:
        # Dropout and any other global-RNG draws repeat with the seed without disturbing the caller's RNG.
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            progress = tqdm(total=epochs * steps_per_epoch, desc="DP-SGD", unit="step")
            for epoch in range(epochs):
                for batch in private_loader:
                    private_optimizer.zero_grad(set_to_none=True)
                    if _is_empty(batch):
                        _noise_only_grads(params)
                        empty += 1
                        log.info("DP epoch %d step %d: empty Poisson batch, noise-only update", epoch + 1, steps + 1)
                    else:
                        batch = {key: value.to(device) for key, value in batch.items()}
                        out = private_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
                        loss = per_sequence_loss(out.logits, batch["labels"], loss_fn)
                        with warnings.catch_warnings():
                            # Expected: the prefix embedding's inputs are token indices, which take no gradient.
                            warnings.filterwarnings("ignore", message="Full backward hook is firing",
                                                    category=UserWarning)
                            loss.backward()
                        losses.append(loss.item())
                        log.info("DP epoch %d step %d: loss %.4f (batch %d)", epoch + 1, steps + 1, losses[-1],
                                 batch["input_ids"].shape[0])
                        progress.set_postfix(loss=f"{losses[-1]:.3f}")
                    private_optimizer.step()
                    steps += 1
                    progress.update(1)
            progress.close()
    finally:
        # Leave the caller a plain peft model: no Opacus hooks or per-sample attributes.
        private_model.cleanup()
        for p in params:
            if hasattr(p, "summed_grad"):
                del p.summed_grad
        model.zero_grad(set_to_none=True)
        model.train(was_training)

    epsilon = engine.get_epsilon(delta)
    if empty:
        log.info("DP training: %d of %d Poisson batches were empty", empty, steps)
    log.info("DP training done: epsilon %.3f at delta %.3g after %d steps", epsilon, delta, steps)
    if not math.isfinite(epsilon) or epsilon > settings.epsilon * 1.01:
        log.warning("DP training: spent epsilon %.3f exceeds the target %.3g", epsilon, settings.epsilon)
    return {"epsilon": float(epsilon), "delta": float(delta), "noise_multiplier": float(noise_multiplier),
            "steps": steps, "empty_batches": empty, "losses": losses, "adapter": ADAPTER}
