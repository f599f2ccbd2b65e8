"""Progress of a long job, on the terminal and in the rule's log.

tqdm's bar reaches a terminal only; a SLURM job's log would show nothing until a document or an
epoch ends. `Progress` keeps the bar and writes a line to the log every `interval_s` seconds (and
at the end): units done of the total, tokens per second and the time left at the current rate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from tqdm.auto import tqdm

log = logging.getLogger("plainsight.progress")


def format_duration(seconds: float) -> str:
    """`1h02m`, `3m05s` or `42s`."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def progress_line(desc: str, done: int, total: int, unit: str, tokens: int, elapsed: float) -> str:
    """`generate icl seed 1: 12/24 documents (50%), 37.2 tokens/s, 1m05s elapsed, ETA 1m05s`."""
    share = f" ({100 * done / total:.0f}%)" if total else ""
    rate = f", {tokens / elapsed:.1f} tokens/s" if tokens and elapsed > 0 else ""
    eta = (
        f", ETA {format_duration(elapsed * (total - done) / done)}" if done and total and done < total else ""
    )
    return f"{desc}: {done}/{total} {unit}{share}{rate}, {format_duration(elapsed)} elapsed{eta}"


class Progress:
    """A tqdm bar that also logs `progress_line` every `interval_s` seconds and when it closes.

    `update(units, tokens)` counts units done (documents, steps, batches) and the tokens they took.
    `clock` is injectable so tests need not sleep.
    """

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str,
        initial: int = 0,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.total, self.desc, self.unit, self.interval_s, self.clock = total, desc, unit, interval_s, clock
        self.done, self.tokens = initial, 0
        self.started = self.last_logged = clock()
        self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit)

    def update(self, units: int = 1, tokens: int = 0, **postfix) -> None:
        self.done += units
        self.tokens += tokens
        self.bar.update(units)
        if postfix:
            self.bar.set_postfix(**postfix)
        now = self.clock()
        if now - self.last_logged >= self.interval_s:
            self.last_logged = now
            log.info("%s", self.line(now))

    def line(self, now: float | None = None) -> str:
        elapsed = (self.clock() if now is None else now) - self.started
        return progress_line(self.desc, self.done, self.total, self.unit, self.tokens, elapsed)

    def close(self) -> None:
        self.bar.close()
        log.info("%s", self.line())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
