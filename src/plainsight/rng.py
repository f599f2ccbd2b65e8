"""Random generators keyed by what they are for, so a result does not depend on run order."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def stable_rng(*key: object) -> random.Random:
    """A generator seeded from a hash of `key`, independent of PYTHONHASHSEED."""
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def cuda_indices(*devices: object) -> list[int]:
    """The CUDA device indices among `devices` (torch.device or names), for `seeded_torch`."""
    import torch

    found = {torch.device(d) for d in devices}
    return sorted({d.index or 0 for d in found if d.type == "cuda"})


@contextmanager
def seeded_torch(*key: object, devices: Sequence[int] = ()) -> Iterator[None]:
    """The global torch generators (CPU, and the CUDA `devices` given by index) seeded from a hash of
    `key` inside a fork: what draws from them inside (a layer's random init, dropout) repeats run after
    run, and the caller's generators are as they were afterwards."""
    import torch  # here, so that modules without torch can use the rest

    with torch.random.fork_rng(devices=list(devices)):
        torch.manual_seed(stable_rng(*key).getrandbits(63))
        yield


def numpy_rng(*key: object):
    """A numpy generator seeded from a hash of `key` (as `stable_rng`)."""
    import numpy as np

    return np.random.default_rng(stable_rng(*key).getrandbits(63))
