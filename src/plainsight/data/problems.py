"""What to do with an invalid record: stop with its error, drop it and count, or (checking a corpus before
any work) collect every problem and go on."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from plainsight.errors import InputError

log = logging.getLogger(__name__)


@dataclass
class ProblemPolicy:
    """`error` raises the first problem; `drop` logs it, counts it and goes on; `collect` keeps every
    problem in `problems` and goes on, dropping nothing it could have kept."""

    on_invalid: str = "error"
    dropped: Counter = field(default_factory=Counter)
    problems: list[InputError] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.on_invalid not in ("error", "drop", "collect"):
            raise ValueError(f"on_invalid must be 'error', 'drop' or 'collect', not {self.on_invalid!r}")

    def report(self, error: InputError, kind: str) -> None:
        if self.on_invalid == "collect":
            self.problems.append(error)
            return
        if self.on_invalid == "error":
            raise error
        self.dropped[kind] += 1
        log.warning("dropped (%s): %s", kind, error)

    def fatal(self, error: InputError) -> None:
        """A problem no policy may drop (it would make the run's evidence wrong): raised, or collected."""
        if self.on_invalid != "collect":
            raise error
        self.problems.append(error)
