"""DP-SGD baseline: control-code fine-tuning of a prefix-tuning adapter with Opacus.

The adapter is the same as the non-private method's: peft prefix tuning without
the reparametrisation MLP (`prefix_projection=False`). Opacus computes correct
per-sample gradients for it with its ordinary hooks: the only trainable module
is the prefix `nn.Embedding`, whose input is the fixed prefix token indices
expanded to one row per sequence, so row i of its output feeds sequence i only
and Opacus's embedding grad sampler gives each sequence its own gradient. All
base-model modules are frozen, so Opacus needs no grad sampler for them. The
test suite checks this against single-sequence backward passes on a tiny Llama
(equal to an absolute 0.00001, padded batch rows included), so LoRA is not needed.

Privacy unit: the guarantee protects one document (TAB) or one patient (MIMIC), the docs
table's `unit_id`, not one training sequence. A document gives several sequences (one per
paragraph range, and the ranges share a paragraph), so a per-sequence guarantee of epsilon would
be one of about k x epsilon per document with k sequences. With `privacy_unit="document"`
Poisson sampling draws units (each with all its sequences), and each unit's per-sequence
gradients are summed before clipping, so one unit moves at most one clipped term of norm
`max_grad_norm`. `privacy_unit="sequence"` (the paper's literal reading) makes every sequence
its own unit.

Memory: a Poisson batch can hold many more sequences than `batch_size` units expected. With a physical
batch size the batch passes forward and backward in micro-batches of whole units (`micro_batches`),
accumulated as Opacus's `BatchMemoryManager` accumulates physical batches: each micro-batch's per-unit
gradients are clipped into the DP optimizer's sum by a skipped step (`signal_skip_step`), and the
logical batch's last takes the one noisy update the accountant counts. The sampling, the clipping and
the noise are the unsplit batch's, so the privacy accounting is unchanged; the split is made here
rather than by `BatchMemoryManager`'s sampler so that one logical batch stays one step of `fit`.

Privacy: Poisson sampling of units (sample rate 1 / batches per epoch, about batch_size / N
units, so `batch_size` is the expected batch size in units), per-unit clipping to
`max_grad_norm`, Gaussian noise calibrated by `make_private_with_epsilon` for the target
epsilon over all steps, at the delta of `plainsight.settings.dp_delta` for the run's units. The loss
is each sequence's own mean NLL, averaged over the batch: a token-weighted mean over the whole
batch would scale one sequence's gradient by the others' lengths, so adding or removing a unit
could move more than its own clipped term.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from plainsight.settings import dp_delta
from plainsight.training.examples import TrainingExample, collate, micro_batches
from plainsight.training.loop import Tracking, TrainingSettings, fit
from plainsight.training.objectives import IGNORE_INDEX

log = logging.getLogger(__name__)
DP_TRACKING = Tracking("DP-SGD")

ADAPTER = "prefix"


PRIVACY_UNITS = ("document", "sequence")


@dataclass(frozen=True)
class DPSettings:
    epsilon: float = 8.0
    max_grad_norm: float = 1.0
    delta: float | None = None  # None: `dp_delta`'s default for the run's privacy units
    accountant: str = "prv"  # Opacus accountant, "prv" (tighter, its default) or "rdp"
    # "document": one unit per document or patient (train_dp's `units`); "sequence": per training sequence.
    privacy_unit: str = "document"

    def __post_init__(self):
        if self.privacy_unit not in PRIVACY_UNITS:
            raise ValueError(f"privacy_unit must be one of {PRIVACY_UNITS}, not {self.privacy_unit!r}")

    @classmethod
    def from_config(cls, dpsgd: Mapping[str, Any]) -> DPSettings:
        """The `dpsgd` config block (a DP-SGD adapter's `dp` param), with the default accountant."""
        return cls(
            epsilon=dpsgd["epsilon"],
            max_grad_norm=dpsgd["max_grad_norm"],
            delta=dpsgd["delta"],
            privacy_unit=dpsgd["privacy_unit"],
        )


@dataclass(frozen=True)
class DPTrainingSettings:
    """A DP-SGD run: AdamW without weight decay at a constant `learning_rate`, for `epochs` of Poisson
    batches of `batch_size` privacy units expected, under the guarantee of `privacy`."""

    batch_size: int
    epochs: int
    learning_rate: float
    privacy: DPSettings = DPSettings()
    physical_batch_size: int | None = None  # sequences per forward and backward pass; None: the batch

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DPTrainingSettings:
        """A DP-SGD adapter's training params (`plainsight.training.params.training_params`)."""
        return cls(
            batch_size=params["batch_size"],
            epochs=params["epochs"],
            learning_rate=params["learning_rate"],
            privacy=DPSettings.from_config(params["dp"]),
            physical_batch_size=params.get("physical_batch_size"),
        )

    def loop_settings(self, max_length: int) -> TrainingSettings:
        """The settings of `fit`, for examples of at most `max_length` tokens."""
        return TrainingSettings(
            self.epochs, self.learning_rate, self.batch_size, max_length, weight_decay=0.0
        )


def dp_adapter_model(
    base_model,
    num_virtual_tokens: int,
    tokenizer=None,
    init_text: str | None = None,
    projection_hidden: int | None = None,
    seed: int = 0,
):
    """Wrap `base_model` in a trainable prefix-tuning adapter (base weights frozen).

    With `tokenizer` and `init_text` the prefix starts as the non-private method's does
    (`plainsight.training.prefix.prefix_model`, with its reparametrising MLP when
    `projection_hidden` is given: Opacus's Embedding and Linear grad samplers give each sequence
    its own gradient of it, as a test checks, its random layers seeded with `seed`); otherwise it starts
    at peft's random init. The
    initialisation is outside the DP guarantee, so `init_text` must be public text, never
    a training document.
    """
    if (tokenizer is None) != (init_text is None):
        raise ValueError("give both tokenizer and init_text, or neither")
    if init_text is not None:
        from plainsight.training.prefix import prefix_model

        return prefix_model(base_model, tokenizer, num_virtual_tokens, init_text, projection_hidden, seed)
    from peft import PrefixTuningConfig, TaskType, get_peft_model

    config = PrefixTuningConfig(
        task_type=TaskType.CAUSAL_LM, num_virtual_tokens=num_virtual_tokens, prefix_projection=False
    )
    return get_peft_model(base_model, config)


def per_sequence_loss(logits: torch.Tensor, labels: torch.Tensor, loss_fn: Callable) -> torch.Tensor:
    """Mean over the batch of each sequence's own loss; Opacus's "mean" reduction then
    makes every per-sample gradient that of one sequence's loss alone."""
    losses = [loss_fn(logits[i : i + 1], labels[i : i + 1]) for i in range(logits.shape[0])]
    return torch.stack(losses).mean()


def has_label_tokens(example: TrainingExample) -> bool:
    # The causal shift never predicts position 0, so a label there alone gives an empty (NaN) loss.
    return any(label != IGNORE_INDEX for label in example.labels[1:])


def make_private(
    model,
    optimizer,
    loader,
    settings: DPSettings,
    epochs: int,
    delta: float,
    noise_generator: torch.Generator | None = None,
):
    """Opacus engine, per-sample-gradient model, DP optimizer and Poisson loader."""
    from opacus import PrivacyEngine

    with warnings.catch_warnings():
        # Seeded (non-secure) randomness is deliberate: runs must be reproducible.
        warnings.filterwarnings("ignore", message="Secure RNG turned off", category=UserWarning)
        engine = PrivacyEngine(accountant=settings.accountant, secure_mode=False)
    private_model, private_optimizer, private_loader = engine.make_private_with_epsilon(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        target_epsilon=settings.epsilon,
        target_delta=delta,
        epochs=epochs,
        max_grad_norm=settings.max_grad_norm,
        poisson_sampling=True,
        noise_generator=noise_generator,
    )
    return engine, private_model, private_optimizer, private_loader


def unit_groups(units: Sequence[str]) -> list[list[int]]:
    """Indices of the sequences of each unit, units in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for index, unit in enumerate(units):
        groups.setdefault(unit, []).append(index)
    return list(groups.values())


def example_loader(
    examples: Sequence[TrainingExample],
    pad_token_id: int,
    batch_size: int,
    generator: torch.Generator | None = None,
    groups: Sequence[Sequence[int]] | None = None,
) -> torch.utils.data.DataLoader:
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
        torch.utils.data.TensorDataset(torch.arange(len(groups))),
        batch_size=batch_size,
        shuffle=True,
        collate_fn=collate_units,
        generator=generator,
    )


def _is_empty(batch) -> bool:
    # Opacus yields a zero-row dict for an empty Poisson batch, or a list of empty tensors if the first
    # is empty.
    return not isinstance(batch, Mapping) or batch["input_ids"].shape[0] == 0


def sum_per_unit(params: list[torch.nn.Parameter], unit: torch.Tensor) -> None:
    """Replace each parameter's per-sequence `grad_sample` by its per-unit sums (row j: the
    sum over the sequences at unit position j), so the DP optimizer clips one gradient per unit."""
    units = int(unit.max()) + 1
    for p in params:
        per_sequence = p.grad_sample if isinstance(p.grad_sample, torch.Tensor) else torch.cat(p.grad_sample)
        summed = torch.zeros(
            (units, *per_sequence.shape[1:]), dtype=per_sequence.dtype, device=per_sequence.device
        )
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


class PrivateSteps:
    """DP-SGD as a `plainsight.training.loop.StepStrategy` of `fit`: Opacus makes the model, the
    optimizer and a Poisson loader of privacy units private, each step sums the per-sequence
    gradients per unit before Opacus clips and noises them, and an empty Poisson batch still takes
    a noise-only step. Its checkpoint state is the accountant's history and the sampling and noise
    generators (the sampler's at the epoch's start mid-epoch, so a resumed epoch draws its batches again).

    `units` gives each example's privacy unit (parallel to the examples: the document, or the
    patient); None takes each example's document, `example.key[0]`. They count with
    `settings.privacy_unit="document"` only; "sequence" makes every sequence its own unit.
    `physical_batch_size`: the most sequences of one forward and backward pass (a unit with more
    goes alone); None: the whole Poisson batch at once.
    """

    def __init__(
        self,
        settings: DPSettings,
        loss_fn: Callable,
        units: Sequence[str] | None = None,
        physical_batch_size: int | None = None,
    ):
        self.settings, self.loss_fn, self.units = settings, loss_fn, units
        self.physical_batch_size = physical_batch_size

    def prepare(self, model, optimizer, examples, training: TrainingSettings, seed: int, pad_token_id: int):
        usable, self.groups = _usable_units(examples, self.units, self.settings.privacy_unit)
        self.delta = dp_delta(self.settings.delta, len(self.groups))
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.device = self.params[0].device
        self.sampling_generator = torch.Generator().manual_seed(seed)
        # Noise is drawn on the parameters' device, so its generator must live there too.
        self.noise_generator = torch.Generator(device=self.device).manual_seed(seed + 1)
        loader = example_loader(
            usable, pad_token_id, training.batch_size, self.sampling_generator, self.groups
        )
        self.engine, self.private_model, private_optimizer, self.loader = make_private(
            model, optimizer, loader, self.settings, training.epochs, self.delta, self.noise_generator
        )
        self.sequences = len(usable)
        log.info(
            "DP training: privacy unit %s, %d units of %d sequences, %d epochs x %d steps, sample rate %.4f, "
            "noise multiplier %.4f, clip %.3g, target epsilon %.3g, delta %.3g",
            self.settings.privacy_unit,
            len(self.groups),
            len(usable),
            training.epochs,
            len(self.loader),
            self.loader.sample_rate,
            private_optimizer.noise_multiplier,
            self.settings.max_grad_norm,
            self.settings.epsilon,
            self.delta,
        )
        self.noise_multiplier = private_optimizer.noise_multiplier
        self.optimizer = private_optimizer
        return private_optimizer

    def steps_per_epoch(self) -> int:
        return len(self.loader)

    def fingerprint(self) -> tuple:
        return self.settings, self.groups

    def batches(self, epoch: int) -> Iterator[Any]:
        self.epoch_sampling_rng = self.sampling_generator.get_state()
        return iter(self.loader)

    def backward(self, model, batch) -> dict[str, float]:
        if _is_empty(batch):
            _noise_only_grads(self.params)
            log.info("DP step: empty Poisson batch, noise-only update")
            return {"loss": None, "units": 0, "sequences": 0, "tokens": 0}
        loss = self._accumulate(batch)
        log.debug(
            "DP step: loss %.4f (batch: %d units, %d sequences)",
            loss,
            int(batch["unit"].max()) + 1,
            batch["input_ids"].shape[0],
        )
        return {
            "loss": loss,
            "units": int(batch["unit"].max()) + 1,
            "sequences": int(batch["input_ids"].shape[0]),
            "tokens": int(batch["attention_mask"].sum()),
        }

    def _accumulate(self, batch: Mapping[str, torch.Tensor]) -> float:
        """Per-unit gradients of a non-empty batch, micro-batch by micro-batch: all but the last are
        clipped into the optimizer's sum by a skipped step, the last is left to `fit`'s step. Returns
        the batch's loss (the mean over its sequences)."""
        parts = micro_batches(torch.bincount(batch["unit"]).tolist(), self.physical_batch_size)
        losses, rows = [], []
        for index, (start, end) in enumerate(parts):
            part = {key: value[start:end] for key, value in batch.items()}
            part["unit"] = part["unit"] - part["unit"][0]
            losses.append(_backward(self.private_model, part, self.device, self.loss_fn))
            rows.append(end - start)
            if index < len(parts) - 1:
                self.optimizer.signal_skip_step(do_skip=True)
                self.optimizer.step()
                self.optimizer.zero_grad()  # the per-sample gradients; the clipped sum stays
        if len(losses) == 1:
            return losses[0]  # exactly as an unsplit batch reports it
        return sum(loss * count for loss, count in zip(losses, rows)) / sum(rows)

    def state(self, epoch_done: bool) -> dict[str, Any]:
        # Mid-epoch the sampler restarts the epoch; at an epoch's end the next one starts here.
        sampling = self.sampling_generator.get_state() if epoch_done else self.epoch_sampling_rng
        return {
            "accountant": self.engine.accountant.state_dict(),
            "epoch_sampling_rng": sampling,
            "noise_rng": self.noise_generator.get_state(),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.engine.accountant.load_state_dict(state["accountant"])
        self.sampling_generator.set_state(state["epoch_sampling_rng"])
        self.noise_generator.set_state(state["noise_rng"])

    def finish(self, model) -> None:
        """Leave the caller a plain peft model: no Opacus hooks or per-sample attributes."""
        self.private_model.cleanup()
        for p in self.params:
            if hasattr(p, "summed_grad"):
                del p.summed_grad
        model.zero_grad(set_to_none=True)

    def report(self, history: Sequence[Mapping[str, Any]]) -> dict:
        """The privacy spent over the run's steps (`history`, `fit`'s), and its losses."""
        losses = [record["loss"] for record in history if record["loss"] is not None]
        steps, empty, epsilon = len(history), len(history) - len(losses), self.engine.get_epsilon(self.delta)
        if empty:
            log.info("DP training: %d of %d Poisson batches were empty", empty, steps)
        log.info("DP training done: epsilon %.3f at delta %.3g after %d steps", epsilon, self.delta, steps)
        if not math.isfinite(epsilon) or epsilon > self.settings.epsilon * 1.01:
            log.warning(
                "DP training: spent epsilon %.3f exceeds the target %.3g", epsilon, self.settings.epsilon
            )
        return {
            "privacy_unit": self.settings.privacy_unit,
            # what the guarantee protects, in the release gate's terms: a document unit is the docs' unit_id
            "protects": "unit" if self.settings.privacy_unit == "document" else "sequence",
            "units": len(self.groups),
            "sequences": self.sequences,
            "epsilon": float(epsilon),
            "delta": float(self.delta),
            "noise_multiplier": float(self.noise_multiplier),
            "sample_rate": float(self.loader.sample_rate),
            "steps": steps,
            "empty_batches": empty,
            "losses": losses,
            "adapter": ADAPTER,
        }


def _usable_units(
    examples: Sequence[TrainingExample], units: Sequence[str] | None, privacy_unit: str
) -> tuple[list[TrainingExample], list[list[int]]]:
    """The examples with label tokens, and the indices of each privacy unit's among them."""
    if units is None:
        units = [example.key[0] for example in examples]
    elif len(units) != len(examples):
        raise ValueError(f"{len(units)} units for {len(examples)} examples")
    kept = [index for index, example in enumerate(examples) if has_label_tokens(example)]
    if len(kept) < len(examples):
        log.warning("DP training: dropped %d sequences without label tokens", len(examples) - len(kept))
    if not kept:
        raise ValueError("DP training needs at least one sequence with label tokens")
    unit_of = (
        [str(units[index]) for index in kept]
        if privacy_unit == "document"
        else [str(index) for index in range(len(kept))]
    )
    return [examples[index] for index in kept], unit_groups(unit_of)


def train_dp(
    model,
    examples: Sequence[TrainingExample],
    pad_token_id: int,
    settings: DPTrainingSettings,
    seed: int,
    loss_fn,
    units: Sequence[str] | None = None,
    tracking: Tracking = DP_TRACKING,
) -> dict:
    """Train the adapter of peft `model` in place with DP-SGD (`fit` with `PrivateSteps`); returns the
    privacy spent, the losses and the history.

    With `tracking.checkpoints` the run resumes from its last checkpoint exactly as it would have gone on,
    the accountant's history included.
    """
    strategy = PrivateSteps(settings.privacy, loss_fn, units, settings.physical_batch_size)
    longest = max((len(example.input_ids) for example in examples), default=0)
    training = settings.loop_settings(longest)
    history = fit(model, examples, training, seed, pad_token_id, strategy, tracking)
    return {**strategy.report(history), "history": history}
