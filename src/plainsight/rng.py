"""Random generators keyed by what they are for, so a result does not depend on run order."""

from __future__ import annotations

import hashlib
import random


def stable_rng(*key: object) -> random.Random:
    """A generator seeded from a hash of `key`, independent of PYTHONHASHSEED."""
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
