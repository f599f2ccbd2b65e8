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

import itertools
import logging
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import torch
from tqdm import tqdm

from plainsight.training.checkpoints import (
    Checkpoints,
    Owner,
    Position,
    fingerprint,
    global_rng_state,
    load_checkpoint,
    load_trainable_state,
    save_checkpoint,
    set_global_rng_state,
    trainable_state,
)
from plainsight.training.loop import TrainingExample, collate
from plainsight.training.objectives import IGNORE_INDEX

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
    (`plainsight.training.prefix.prefix_model`); otherwise it starts at peft's random init. The
    initialisation is outside the DP guarantee, so `init_text` must be public text, never
    a training document.
    """
    if (tokenizer is None) != (init_text is None):
        raise ValueError("give both tokenizer and init_text, or neither")
    if init_text is not None:
        from plainsight.training.prefix import prefix_model

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


def has_label_tokens(example: TrainingExample) -> bool:
    # The causal shift never predicts position 0, so a label there alone gives an empty (NaN) loss.
    return any(label != IGNORE_INDEX for label in example.labels[1:])


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


def example_loader(examples: Sequence[TrainingExample], pad_token_id: int, batch_size: int,
                   generator: torch.Generator | None = None) -> torch.utils.data.DataLoader:
    """Batches of `examples` through `training.collate`, in a form Opacus can make private.

    The dataset holds indices, not the examples: for an empty first Poisson batch Opacus
    builds zero-row tensors from the fields of dataset[0], which must then be tensors.
    """
    return torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(len(examples))), batch_size=batch_size, shuffle=True,
        collate_fn=lambda rows: collate([examples[int(index)] for (index,) in rows], pad_token_id),
        generator=generator)


def _is_empty(batch) -> bool:
    # Opacus yields a zero-row dict for an empty Poisson batch, or a list of empty tensors if the first is empty.
    return not isinstance(batch, Mapping) or batch["input_ids"].shape[0] == 0


def _backward(private_model, batch: Mapping[str, torch.Tensor], device, loss_fn) -> float:
    """Per-sample gradients of one non-empty batch; returns its loss."""
    batch = {key: value.to(device) for key, value in batch.items()}
    out = private_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    loss = per_sequence_loss(out.logits, batch["labels"], loss_fn)
    with warnings.catch_warnings():
        # Expected: the prefix embedding's inputs are token indices, which take no gradient.
        warnings.filterwarnings("ignore", message="Full backward hook is firing", category=UserWarning)
        loss.backward()
    return loss.item()


def _noise_only_grads(params: list[torch.nn.Parameter]) -> None:
    """Zero-row per-sample gradients, so the DP optimizer still adds noise and the
    accountant still counts the step (skipping it would reveal the batch was empty)."""
    for p in params:
        p.grad_sample = torch.zeros((0, *p.shape), dtype=p.dtype, device=p.device)


def train_dp(model, examples: Sequence[TrainingExample], pad_token_id: int, batch_size: int, epochs: int, lr: float,
             settings: DPSettings, seed: int, loss_fn, checkpoints: Checkpoints | None = None) -> dict:
    """Train the adapter of peft `model` in place with DP-SGD; returns the privacy spent and the losses.

    With `checkpoints` the run resumes from its last checkpoint exactly as it would have
    gone on: the accountant's history, the optimizer, the noise and global generators
    are restored, and the Poisson sampler restarts the epoch from its state at the
    epoch's start, its batches already done drawn again and skipped.
    """
    usable = [example for example in examples if has_label_tokens(example)]
    if len(usable) < len(examples):
        log.warning("DP training: dropped %d sequences without label tokens", len(examples) - len(usable))
    if not usable:
        raise ValueError("DP training needs at least one sequence with label tokens")
    n = len(usable)
    delta = settings.delta if settings.delta is not None else 1.0 / n

    params = [p for p in model.parameters() if p.requires_grad]
    device = params[0].device
    owner = None if checkpoints is None else Owner(checkpoints.method, seed, fingerprint(
        settings, batch_size, epochs, lr, usable, *trainable_state(model).values()))
    sampling_generator = torch.Generator().manual_seed(seed)
    # Noise is drawn on the parameters' device, so its generator must live there too.
    noise_generator = torch.Generator(device=device).manual_seed(seed + 1)
    loader = example_loader(usable, pad_token_id, batch_size, sampling_generator)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    engine, private_model, private_optimizer, private_loader = make_private(
        model, optimizer, loader, settings, epochs, delta, noise_generator)
    noise_multiplier = private_optimizer.noise_multiplier
    steps_per_epoch = len(private_loader)
    log.info("DP training: %d sequences, %d epochs x %d steps, sample rate %.4f, noise multiplier %.4f, "
             "clip %.3g, target epsilon %.3g, delta %.3g", n, epochs, steps_per_epoch,
             private_loader.sample_rate, noise_multiplier, settings.max_grad_norm, settings.epsilon, delta)

    position, losses, empty, rng = Position(), [], 0, None
    resumed = None if checkpoints is None else load_checkpoint(checkpoints.directory, owner)
    if resumed is not None:
        position, state = resumed
        load_trainable_state(model, state["adapter"])
        private_optimizer.load_state_dict(state["optimizer"])
        engine.accountant.load_state_dict(state["accountant"])
        sampling_generator.set_state(state["epoch_sampling_rng"])
        noise_generator.set_state(state["noise_rng"])
        losses, empty, rng = state["losses"], state["empty_batches"], state["rng"]

    was_training = model.training
    model.train()
    devices = [device.index or 0] if device.type == "cuda" else []
    try:
        # Dropout and any other global-RNG draws repeat with the seed without disturbing the caller's RNG.
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            if rng is not None:
                set_global_rng_state(rng)
            progress = tqdm(total=epochs * steps_per_epoch, initial=position.step, desc="DP-SGD", unit="step")
            for epoch in range(position.epoch, epochs):
                epoch_sampling_rng = sampling_generator.get_state()
                done = position.batch
                for batch in itertools.islice(private_loader, done, None):
                    private_optimizer.zero_grad(set_to_none=True)
                    if _is_empty(batch):
                        _noise_only_grads(params)
                        empty += 1
                        log.info("DP epoch %d step %d: empty Poisson batch, noise-only update", epoch + 1,
                                 position.step + 1)
                    else:
                        losses.append(_backward(private_model, batch, device, loss_fn))
                        log.info("DP epoch %d step %d: loss %.4f (batch %d)", epoch + 1, position.step + 1,
                                 losses[-1], batch["input_ids"].shape[0])
                        progress.set_postfix(loss=f"{losses[-1]:.3f}")
                    private_optimizer.step()
                    position = position.after_step(steps_per_epoch)
                    progress.update(1)
                    if checkpoints is not None and position.is_due(checkpoints.every_steps):
                        # Mid-epoch the sampler restarts the epoch; at an epoch's end the next one starts here.
                        sampling_rng = epoch_sampling_rng if position.batch else sampling_generator.get_state()
                        save_checkpoint(checkpoints.directory, owner, position, {
                            "adapter": trainable_state(model), "optimizer": private_optimizer.state_dict(),
                            "accountant": engine.accountant.state_dict(), "epoch_sampling_rng": sampling_rng,
                            "noise_rng": noise_generator.get_state(), "rng": global_rng_state(),
                            "losses": losses, "empty_batches": empty})
            progress.close()
    finally:
        # Leave the caller a plain peft model: no Opacus hooks or per-sample attributes.
        private_model.cleanup()
        for p in params:
            if hasattr(p, "summed_grad"):
                del p.summed_grad
        model.zero_grad(set_to_none=True)
        model.train(was_training)

    steps = position.step
    epsilon = engine.get_epsilon(delta)
    if empty:
        log.info("DP training: %d of %d Poisson batches were empty", empty, steps)
    log.info("DP training done: epsilon %.3f at delta %.3g after %d steps", epsilon, delta, steps)
    if not math.isfinite(epsilon) or epsilon > settings.epsilon * 1.01:
        log.warning("DP training: spent epsilon %.3f exceeds the target %.3g", epsilon, settings.epsilon)
    return {"epsilon": float(epsilon), "delta": float(delta), "noise_multiplier": float(noise_multiplier),
            "steps": steps, "empty_batches": empty, "losses": losses, "adapter": ADAPTER}
