"""The one training loop, `fit`, of every trained model in the project.

`fit` owns the step, the learning-rate schedule, checkpoints and resume, seeding, the history and
the progress lines. What a step computes is a `StepStrategy`: `Backprop` (the default) runs the
plain or privacy-masked objective over length batches; DP-SGD (`plainsight.training.dp.PrivateSteps`)
makes the model, optimizer and loader private with Opacus and sums per-unit gradients; the
perplexity fine-tuning (`plainsight.evaluation.perplexity`) runs `fit` with `Backprop` on a copy of
the model. Its examples and batches come from `plainsight.training.examples`.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from plainsight.progress import Progress
from plainsight.rng import cuda_indices, seeded_torch
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
from plainsight.training.examples import (
    TrainingExample,
    collate,
    length_batches,
    micro_batches,
    private_share,
)
from plainsight.training.objectives import (
    OBJECTIVES,
    REFERENCE_CODE_LAMBDAS,
    Lambdas,
    lm_loss,
    masked_objective,
    term_counts,
)

log = logging.getLogger(__name__)


LR_SCHEDULES = ("constant", "linear", "cosine")


@dataclass(frozen=True)
class TrainingSettings:
    epochs: int
    learning_rate: float
    batch_size: int
    max_length: int
    lambdas: Lambdas = field(default_factory=Lambdas)
    warmup_steps: int = 0  # the learning rate rises linearly from 0 over these steps
    schedule: str = "constant"  # then stays, or decays to 0 at the last step (linear, cosine)
    masked: bool = False  # `Backprop`: the privacy-masked objective (ft_mask) instead of the LM loss
    objective: str = "paper"  # of the masked objective: paper | reference_code (objectives.OBJECTIVES)
    weight_decay: float = 0.01  # AdamW's (its default); DP-SGD trains without

    def __post_init__(self):
        if self.schedule not in LR_SCHEDULES:
            raise ValueError(
                f"unknown learning-rate schedule {self.schedule!r}: expected one of {LR_SCHEDULES}"
            )
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}: expected one of {OBJECTIVES}")

    @classmethod
    def from_params(cls, params: Mapping, masked: bool) -> TrainingSettings:
        """The settings of a `prefix_tuning` block (or its rule's params, `plainsight.training.params`);
        the objective and its weights only when `masked` (`reference_code` with the reference
        implementation's fixed weights)."""
        objective = params.get("objective", "paper") if masked else "paper"
        lambdas = Lambdas()
        if masked:
            lambdas = (
                REFERENCE_CODE_LAMBDAS
                if objective == "reference_code"
                else Lambdas(params["lambda_lm"], params["lambda_contrastive"], params["lambda_kl"])
            )
        return cls(
            params["epochs"],
            params["learning_rate"],
            params["batch_size"],
            params["max_length"],
            lambdas,
            params["warmup_steps"],
            params["lr_schedule"],
            masked,
            objective,
        )


def learning_rate_factor(step: int, total_steps: int, warmup_steps: int, schedule: str) -> float:
    """The share of the peak learning rate at `step` (0-based): linear warm-up, then the schedule."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    if schedule == "linear":
        return max(0.0, 1.0 - progress)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def batch_loss(
    model,
    batch: dict[str, torch.Tensor],
    masked: bool,
    lambdas: Lambdas,
    objective: str = "paper",
    counts: dict[str, int] | None = None,
) -> dict[str, torch.Tensor]:
    """The training loss of one batch: plain LM loss, or the privacy-masked objective; with `counts`
    (`term_counts` of the whole batch) that of one micro-batch of it, its share of the batch's loss.

    The base model's distribution comes from the same weights with the adapter
    switched off, so no second copy of the model is loaded.
    """
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    if not masked:
        return {"loss": lm_loss(logits, batch["labels"], None if counts is None else counts["lm"])}
    with torch.no_grad(), model.disable_adapter():
        base_logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return masked_objective(
        logits, base_logits, batch["labels"], batch["private"], lambdas, objective, counts
    )


# --- the loop ------------------------------------------------------------------------------------


class StepStrategy(Protocol):
    """What one step of `fit` computes, and the state it adds to a checkpoint.

    `prepare` is called once, before any checkpoint is read, and returns the optimizer to step
    (the given one, or one wrapping it); `batches(epoch)` gives the epoch's batches from its start
    (a resumed run skips those done); `backward` computes a batch's gradients and returns its
    history record (numbers, `tokens` among them); `finish` runs however the loop ends.
    """

    def prepare(
        self,
        model,
        optimizer,
        examples: Sequence[TrainingExample],
        settings: TrainingSettings,
        seed: int,
        pad_token_id: int,
    ) -> torch.optim.Optimizer: ...
    def steps_per_epoch(self) -> int: ...
    def fingerprint(self) -> tuple: ...
    def batches(self, epoch: int) -> Iterator[Any]: ...
    def backward(self, model, batch) -> dict[str, float]: ...
    def state(self, epoch_done: bool) -> dict[str, Any]: ...
    def load_state(self, state: Mapping[str, Any]) -> None: ...
    def finish(self, model) -> None: ...


class Backprop:
    """Ordinary back-propagation of the LM loss, or of the masked objective with `settings.masked`,
    over length batches (`length_batches`) in a seeded order that changes per epoch.

    With `physical_batch_size` a batch passes forward and backward in micro-batches of at most that
    many sequences, padded to the batch's width, whose gradients accumulate: each divides its loss
    sums by the whole batch's token counts (`term_counts`), so the step is the unsplit batch's, up
    to the order of float additions. Activation memory follows the micro-batch, not the batch.
    """

    def __init__(self, physical_batch_size: int | None = None):
        self.physical_batch_size = physical_batch_size

    def prepare(self, model, optimizer, examples, settings, seed, pad_token_id):
        self.examples, self.settings, self.seed, self.pad_token_id = examples, settings, seed, pad_token_id
        self.device = next(p for p in model.parameters() if p.requires_grad).device
        return optimizer

    def steps_per_epoch(self) -> int:
        return -(-len(self.examples) // self.settings.batch_size)

    def fingerprint(self) -> tuple:
        return (self.settings.masked,)

    def batches(self, epoch: int) -> Iterator[dict[str, torch.Tensor]]:
        for batch in length_batches(self.examples, self.settings.batch_size, self.seed, epoch):
            yield {name: tensor.to(self.device) for name, tensor in collate(batch, self.pad_token_id).items()}

    def backward(self, model, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        settings = self.settings
        counts = term_counts(batch["labels"], batch["private"], settings.objective)
        totals: dict[str, float] = {}
        rows = [1] * batch["input_ids"].shape[0]
        for start, end in micro_batches(rows, self.physical_batch_size):
            part = {name: tensor[start:end] for name, tensor in batch.items()}
            terms = batch_loss(model, part, settings.masked, settings.lambdas, settings.objective, counts)
            terms["loss"].backward()
            for name, value in terms.items():
                totals[name] = totals.get(name, 0.0) + value.item()
        return {**totals, "private_share": private_share(batch), "tokens": int(batch["attention_mask"].sum())}

    def state(self, epoch_done: bool) -> dict[str, Any]:
        return {}  # its batches are a function of seed and epoch

    def load_state(self, state: Mapping[str, Any]) -> None:
        pass

    def finish(self, model) -> None:
        pass


@dataclass
class _Run:
    """What `fit` carries from step to step, and saves in a checkpoint."""

    model: Any
    strategy: StepStrategy
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    checkpoints: Checkpoints | None
    owner: Owner | None
    position: Position = field(default_factory=Position)
    history: list[dict[str, float]] = field(default_factory=list)

    def save(self) -> None:
        save_checkpoint(
            self.checkpoints.directory,
            self.owner,
            self.position,
            {
                "adapter": trainable_state(self.model),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "rng": global_rng_state(),
                "history": self.history,
                "strategy": self.strategy.state(epoch_done=self.position.batch == 0),
            },
        )

    def resume(self) -> None:
        """Continue from the run's checkpoint, if it left one."""
        resumed = (
            None if self.checkpoints is None else load_checkpoint(self.checkpoints.directory, self.owner)
        )
        if resumed is None:
            return
        self.position, state = resumed
        load_trainable_state(self.model, state["adapter"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        set_global_rng_state(state["rng"])
        self.history = state["history"]
        self.strategy.load_state(state["strategy"])


def _start(
    model,
    examples,
    settings: TrainingSettings,
    seed: int,
    pad_token_id: int,
    strategy: StepStrategy,
    checkpoints: Checkpoints | None,
) -> _Run:
    """The optimizer (AdamW), the strategy prepared, the schedule, and the checkpoint's owner."""
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    optimizer = strategy.prepare(model, optimizer, examples, settings, seed, pad_token_id)
    # Before the first step, so that it names the starting weights: a checkpoint of other settings,
    # data or starting weights is ignored.
    owner = (
        None
        if checkpoints is None
        else Owner(
            checkpoints.method,
            seed,
            fingerprint(settings, examples, *strategy.fingerprint(), *trainable_state(model).values()),
        )
    )
    total_steps = strategy.steps_per_epoch() * settings.epochs
    # A function of the step alone, so a resumed run continues the schedule where it stopped.
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: learning_rate_factor(step, total_steps, settings.warmup_steps, settings.schedule),
    )
    return _Run(model, strategy, optimizer, scheduler, checkpoints, owner)


@dataclass(frozen=True)
class Tracking:
    """How a training run shows and keeps itself: its progress label, its checkpoints (None: none; the run
    cannot resume) and a call after each step (`on_step(step, record)`: monitoring, such as samples)."""

    desc: str = "train"
    checkpoints: Checkpoints | None = None
    on_step: Callable[[int, dict[str, float]], None] | None = None


UNTRACKED = Tracking()


def fit(
    model,
    examples: Sequence[TrainingExample],
    settings: TrainingSettings,
    seed: int,
    pad_token_id: int,
    strategy: StepStrategy | None = None,
    tracking: Tracking = UNTRACKED,
) -> list[dict[str, float]]:
    """Train the trainable parameters of `model` in place; returns the history, one record per step
    (the strategy's numbers, its loss terms among them, with the epoch and the learning rate).

    The global torch generators (dropout, any other sampling in the model) are seeded from `seed` inside
    a fork, so the run repeats without disturbing the caller's. With `tracking.checkpoints` the run saves its
    state as it goes and, started again, resumes from its last checkpoint exactly as it would have
    gone on: the batches done of the epoch are drawn again and skipped. `tracking.on_step(step, record)` is
    called after each step (monitoring: samples during training).
    """
    strategy = Backprop() if strategy is None else strategy
    run = _start(model, examples, settings, seed, pad_token_id, strategy, tracking.checkpoints)
    devices = cuda_indices(*{p.device for p in model.parameters() if p.requires_grad})
    was_training = model.training
    try:
        with seeded_torch(seed, "train", devices=devices):
            run.resume()
            model.train()
            _epochs(run, settings.epochs, tracking.desc, tracking.on_step)
    finally:
        strategy.finish(model)
        model.train(was_training)
    return run.history


def _epochs(run: _Run, epochs: int, desc: str, on_step) -> None:
    steps_per_epoch = run.strategy.steps_per_epoch()
    with Progress(epochs * steps_per_epoch, desc, "steps", initial=run.position.step) as progress:
        for epoch in range(run.position.epoch, epochs):
            for batch in itertools.islice(run.strategy.batches(epoch), run.position.batch, None):
                record = _step(run, batch, epoch)
                if on_step is not None:
                    on_step(len(run.history), record)
                loss = record.get("loss")  # None for a DP-SGD step on an empty Poisson batch
                progress.update(1, int(record.get("tokens", 0)), loss="-" if loss is None else f"{loss:.3f}")
                run.position = run.position.after_step(steps_per_epoch)
                if run.checkpoints is not None and run.position.is_due(run.checkpoints.every_steps):
                    run.save()
            losses = [h["loss"] for h in run.history if h["epoch"] == epoch and h.get("loss") is not None]
            if losses:
                log.info(
                    "%s epoch %d: mean loss %.4f over %d steps",
                    desc,
                    epoch + 1,
                    sum(losses) / len(losses),
                    len(losses),
                )


def _step(run: _Run, batch, epoch: int) -> dict[str, float]:
    """One optimizer step: the strategy's backward, then the update at the schedule's learning rate."""
    run.optimizer.zero_grad(set_to_none=True)
    record = run.strategy.backward(run.model, batch)
    learning_rate = run.scheduler.get_last_lr()[0]
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    run.history.append({"epoch": epoch, **record, "learning_rate": learning_rate})
    return run.history[-1]
