"""Resumable training: one checkpoint file per training run, outside the run's output.

A checkpoint holds everything a training loop needs to go on exactly where it
stopped: adapter weights, optimizer state, random number generator states, the
position (epoch, batches done in it, steps done) and the loss history so far. It
names its owner (method, seed and a fingerprint of everything that shapes the
run), so a checkpoint left by a run with other settings or data is ignored, never
silently reused. It is written to a temporary file and renamed over the old one:
a job killed during a save leaves the previous checkpoint intact.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from plainsight.io import atomic_path

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "checkpoint.pt"


@dataclass(frozen=True)
class Checkpoints:
    """Where a run keeps its checkpoint and how often it saves one (also at every epoch's end)."""

    directory: Path
    every_steps: int
    method: str

    def __post_init__(self):
        if self.every_steps < 1:
            raise ValueError("every_steps must be at least 1")


@dataclass(frozen=True)
class Owner:
    method: str
    seed: int
    fingerprint: str


@dataclass(frozen=True)
class Position:
    """Where a run stands: `batch` batches of `epoch` done, `step` optimizer steps in all."""

    epoch: int = 0
    batch: int = 0
    step: int = 0

    def after_step(self, batches_per_epoch: int) -> Position:
        if self.batch + 1 == batches_per_epoch:
            return Position(self.epoch + 1, 0, self.step + 1)
        return Position(self.epoch, self.batch + 1, self.step + 1)

    def is_due(self, every_steps: int) -> bool:
        """A checkpoint is due every `every_steps` steps and at the end of every epoch."""
        return self.step % every_steps == 0 or self.batch == 0


def fingerprint(*parts: Any) -> str:
    """A hash of `parts`: dataclasses, JSON-able values and tensors (hashed by their bytes)."""
    digest = hashlib.sha256()
    for part in parts:
        for piece in _pieces(part):
            digest.update(piece)
            digest.update(b"\x1f")
    return digest.hexdigest()[:16]


def _pieces(part: Any) -> Iterable[bytes]:
    if isinstance(part, torch.Tensor):
        yield str((part.dtype, tuple(part.shape))).encode()
        yield part.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()
    elif dataclasses.is_dataclass(part) and not isinstance(part, type):
        yield json.dumps(dataclasses.asdict(part), sort_keys=True, default=str).encode()
    else:
        yield json.dumps(part, sort_keys=True, default=str).encode()


def trainable_state(model) -> dict[str, torch.Tensor]:
    """Copies of the trainable parameters (the adapter), by name."""
    return {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


@torch.no_grad()
def load_trainable_state(model, state: dict[str, torch.Tensor]) -> None:
    parameters = {name: p for name, p in model.named_parameters() if p.requires_grad}
    if parameters.keys() != state.keys():
        raise ValueError(f"checkpoint holds {sorted(state)}, the model trains {sorted(parameters)}")
    for name, parameter in parameters.items():
        parameter.copy_(state[name])


def global_rng_state() -> dict[str, Any]:
    """The global torch generators (dropout and other sampling in the model)."""
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_global_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["cpu"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(directory: Path, owner: Owner, position: Position, state: dict[str, Any]) -> None:
    """Write the checkpoint atomically (`plainsight.io.atomic_path`: temporary file, then rename)."""
    target = Path(directory) / CHECKPOINT_FILE
    with atomic_path(target) as temporary:
        torch.save(
            {"owner": dataclasses.asdict(owner), "position": dataclasses.asdict(position), **state}, temporary
        )
    log.info("checkpoint at step %d saved to %s", position.step, target)


def load_checkpoint(directory: Path, owner: Owner) -> tuple[Position, dict[str, Any]] | None:
    """The checkpoint in `directory` if it belongs to `owner`; None (with a log line) otherwise."""
    path = Path(directory) / CHECKPOINT_FILE
    if not path.is_file():
        return None
    try:
        state = torch.load(path, weights_only=True)
    except Exception as error:  # an unreadable file is no reason to fail the job: train from the start
        log.warning("ignoring unreadable checkpoint %s: %s", path, error)
        return None
    found = state.pop("owner")
    if found != dataclasses.asdict(owner):
        log.warning(
            "ignoring checkpoint %s: it belongs to %s, this run is %s", path, found, dataclasses.asdict(owner)
        )
        return None
    position = Position(**state.pop("position"))
    log.info(
        "resuming from checkpoint at epoch %d step %d (%d batches of the epoch done; %s)",
        position.epoch + 1,
        position.step,
        position.batch,
        path,
    )
    return position, state


def remove_checkpoint(directory: Path) -> None:
    """Delete a finished run's checkpoint, any temporary file a killed save left, and the empty directory."""
    directory = Path(directory)
    (directory / CHECKPOINT_FILE).unlink(missing_ok=True)
    for leftover in directory.glob(f".{CHECKPOINT_FILE}.*.part"):  # atomic_path's temporary files
        leftover.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # holds other files, or already gone
        directory.rmdir()
