"""What to do with an invalid record: stop with its error, or drop it and count."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from plainsight.errors import InputError

log = logging.getLogger(__name__)


@dataclass
class ProblemPolicy:
    """`error` raises the first problem; `drop` logs it, counts it and goes on."""

    on_invalid: str = "error"
    dropped: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.on_invalid not in ("error", "drop"):
            raise ValueError(f"on_invalid must be 'error' or 'drop', not {self.on_invalid!r}")

    def report(self, error: InputError, kind: str) -> None:
        if self.on_invalid == "error":
            raise error
        self.dropped[kind] += 1
        log.warning("dropped (%s): %s", kind, error)
