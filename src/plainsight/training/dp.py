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

Privacy unit: the guarantee protects one document (TAB) or one patient (MIMIC), the docs
table's `unit_id`, not one training sequence. A document gives several sequences (one per
paragraph range, and the ranges share a paragraph), so a per-sequence guarantee of epsilon would
be one of about k x epsilon per document with k sequences. With `privacy_unit="document"`
Poisson sampling draws units (each with all its sequences), and each unit's per-sequence
gradients are summed before clipping, so one unit moves at most one clipped term of norm
`max_grad_norm`. `privacy_unit="sequence"` (the paper's literal reading) makes every sequence
its own unit.

Privacy: Poisson sampling of units (sample rate 1 / batches per epoch, about batch_size / N
units, so `batch_size` is the expected batch size in units), per-unit clipping to
`max_grad_norm`, Gaussian noise calibrated by `make_private_with_epsilon` for the target
epsilon over all steps. Delta defaults to min(1e-5, 1 / (10 N)) for N units: publishing one
randomly chosen unit in full is (0, 1 / N)-DP, so delta must stay well below 1 / N. The loss
is each sequence's own mean NLL, averaged over the batch: a token-weighted mean over the whole
batch would scale one sequence's gradient by the others' lengths, so adding or removing a unit
could move more than its own clipped term.
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


PRIVACY_UNITS = ("document", "sequence")


def default_delta(units: int) -> float:
    """min(1e-5, 1 / (10 N)) for N privacy units."""
    return min(1e-5, 1.0 / (10 * units))


@dataclass(frozen=True)
class DPSettings:
    epsilon: float = 8.0
    max_grad_norm: float = 1.0
    delta: float | None = None  # None = default_delta(N units) = min(1e-5, 1 / (10 N))
    accountant: str = "prv"  # Opacus accountant, "prv" (tighter, its default) or "rdp"
    # "document": one unit per document or patient (train_dp's `units`); "sequence": per training sequence.
    privacy_unit: str = "document"

    def __post_init__(self):
        if self.privacy_unit not in PRIVACY_UNITS:
            raise ValueError(f"privacy_unit must be one of {PRIVACY_UNITS}, not {self.privacy_unit!r}")


def dp_adapter_model(base_model, num_virtual_tokens: int, tokenizer=None, init_text: str | None = None,
                     projection_hidden: int | None = None):
    """Wrap `base_model` in a trainable prefix-tuning adapter (base weights frozen).

    With `tokenizer` and `init_text` the prefix starts as the non-private method's does
    (`plainsight.training.prefix.prefix_model`, with its reparametrising MLP when
    `projection_hidden` is given: Opacus's Embedding and Linear grad samplers give each sequence
    its own gradient of it, as a test checks); otherwise it starts at peft's random init. The
    initialisation is outside the DP guarantee, so `init_text` must be public text, never
    a training document.
    """
    if (tokenizer is None) != (init_text is None):
        raise ValueError("give both tokenizer and init_text, or neither")
    if init_text is not None:
        from plainsight.training.prefix import prefix_model

        return prefix_model(base_model, tokenizer, num_virtual_tokens, init_text, projection_hidden)
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


def unit_groups(units: Sequence[str]) -> list[list[int]]:
    """Indices of the sequences of each unit, units in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for index, unit in enumerate(units):
        groups.setdefault(unit, []).append(index)
    return list(groups.values())


def example_loader(examples: Sequence[TrainingExample], pad_token_id: int, batch_size: int,
                   generator: torch.Generator | None = None,
                   groups: Sequence[Sequence[int]] | None = None) -> torch.utils.data.DataLoader:
    """Batches of units of `examples` through `training.collate`, in a form Opacus can make private.

    `groups` lists the example indices of each unit (default: one unit per example). The
    dataset holds unit indices, so Opacus's Poisson sampler draws units; the collate expands
    each drawn unit to all its sequences and adds `unit`, each sequence's unit position in
    the batch. Indices, not examples: for an empty first Poisson batch Opacus builds zero-row
    tensors from the fields of dataset[0], which must then be tensors.
    """
    if groups is None:
        groups = [[index] for index in range(len(examples))]

    def collate_units(rows):
        members = [groups[int(index)] for (index,) in rows]
        batch = collate([examples[i] for group in members for i in group], pad_token_id)
        batch["unit"] = torch.tensor([position for position, group in enumerate(members) for _ in group])
        return batch

    return torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(len(groups))), batch_size=batch_size, shuffle=True,
        collate_fn=collate_units, generator=generator)


def _is_empty(batch) -> bool:
    # Opacus yields a zero-row dict for an empty Poisson batch, or a list of empty tensors if the first is empty.
    return not isinstance(batch, Mapping) or batch["input_ids"].shape[0] == 0


def sum_per_unit(params: list[torch.nn.Parameter], unit: torch.Tensor) -> None:
    """Replace each parameter's per-sequence `grad_sample` by its per-unit sums (row j: the
    sum over the sequences at unit position j), so the DP optimizer clips one gradient per unit."""
    units = int(unit.max()) + 1
    for p in params:
        per_sequence = p.grad_sample if isinstance(p.grad_sample, torch.Tensor) else torch.cat(p.grad_sample)
        summed = torch.zeros((units, *per_sequence.shape[1:]), dtype=per_sequence.dtype, device=per_sequence.device)
        p.grad_sample = summed.index_add_(0, unit.to(per_sequence.device), per_sequence)


def _backward(private_model, batch: Mapping[str, torch.Tensor], device, loss_fn) -> float:
    """Per-unit gradients of one non-empty batch in each parameter's `grad_sample`; returns its loss."""
    batch = {key: value.to(device) for key, value in batch.items()}
    out = private_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    loss = per_sequence_loss(out.logits, batch["labels"], loss_fn)
    with warnings.catch_warnings():
        # Expected: the prefix embedding's inputs are token indices, which take no gradient.
        warnings.filterwarnings("ignore", message="Full backward hook is firing", category=UserWarning)
        loss.backward()
    sum_per_unit([p for p in private_model.parameters() if p.requires_grad], batch["unit"])
    return loss.item()


def _noise_only_grads(params: list[torch.nn.Parameter]) -> None:
    """Zero-row per-sample gradients, so the DP optimizer still adds noise and the
    accountant still counts the step (skipping it would reveal the batch was empty)."""
    for p in params:
        p.grad_sample = torch.zeros((0, *p.shape), dtype=p.dtype, device=p.device)


def train_dp(model, examples: Sequence[TrainingExample], pad_token_id: int, batch_size: int, epochs: int, lr: float,
             settings: DPSettings, seed: int, loss_fn, checkpoints: Checkpoints | None = None,
             units: Sequence[str] | None = None) -> dict:
    """Train the adapter of peft `model` in place with DP-SGD; returns the privacy spent and the losses.

    `units` gives each example's privacy unit (parallel to `examples`: the document, or the
    patient); None takes each example's document, `example.key[0]`. They count with
    `settings.privacy_unit="document"` only; "sequence" makes every sequence its own unit.
    `batch_size` is the expected number of units per batch.

    With `checkpoints` the run resumes from its last checkpoint exactly as it would have
    gone on: the accountant's history, the optimizer, the noise and global generators
    are restored, and the Poisson sampler restarts the epoch from its state at the
    epoch's start, its batches already done drawn again and skipped.
    """
    if units is None:
        units = [example.key[0] for example in examples]
    elif len(units) != len(examples):
        raise ValueError(f"{len(units)} units for {len(examples)} examples")
    kept = [index for index, example in enumerate(examples) if has_label_tokens(example)]
    if len(kept) < len(examples):
        log.warning("DP training: dropped %d sequences without label tokens", len(examples) - len(kept))
    if not kept:
        raise ValueError("DP training needs at least one sequence with label tokens")
    usable = [examples[index] for index in kept]
    unit_of = [str(units[index]) for index in kept] if settings.privacy_unit == "document" \
        else [str(index) for index in range(len(usable))]
    groups = unit_groups(unit_of)
    n = len(groups)
    delta = settings.delta if settings.delta is not None else default_delta(n)

    params = [p for p in model.parameters() if p.requires_grad]
    device = params[0].device
    owner = None if checkpoints is None else Owner(checkpoints.method, seed, fingerprint(
        settings, batch_size, epochs, lr, usable, groups, *trainable_state(model).values()))
    sampling_generator = torch.Generator().manual_seed(seed)
    # Noise is drawn on the parameters' device, so its generator must live there too.
    noise_generator = torch.Generator(device=device).manual_seed(seed + 1)
    loader = example_loader(usable, pad_token_id, batch_size, sampling_generator, groups)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    engine, private_model, private_optimizer, private_loader = make_private(
        model, optimizer, loader, settings, epochs, delta, noise_generator)
    noise_multiplier = private_optimizer.noise_multiplier
    sample_rate = private_loader.sample_rate
    steps_per_epoch = len(private_loader)
    log.info("DP training: privacy unit %s, %d units of %d sequences, %d epochs x %d steps, sample rate %.4f, "
             "noise multiplier %.4f, clip %.3g, target epsilon %.3g, delta %.3g", settings.privacy_unit, n,
             len(usable), epochs, steps_per_epoch, sample_rate, noise_multiplier, settings.max_grad_norm,
             settings.epsilon, delta)

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
                        log.info("DP epoch %d step %d: loss %.4f (batch: %d units, %d sequences)", epoch + 1,
                                 position.step + 1, losses[-1], int(batch["unit"].max()) + 1,
                                 batch["input_ids"].shape[0])
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
    return {"privacy_unit": settings.privacy_unit, "units": n, "sequences": len(usable), "epsilon": float(epsilon),
            "delta": float(delta), "noise_multiplier": float(noise_multiplier), "sample_rate": float(sample_rate),
            "steps": steps, "empty_batches": empty, "losses": losses, "adapter": ADAPTER}
