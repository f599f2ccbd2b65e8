"""Logging set-up and the error boundary shared by the workflow scripts."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

from plainsight.errors import InputError


def configure_logging(log_file: str | Path | None = None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )


def run_step(main: Callable[[], None], log_file: str | Path | None = None) -> None:
    """Run one workflow step; bad input ends it with a one-line error instead of a traceback."""
    configure_logging(log_file)
    try:
        main()
    except InputError as error:
        logging.getLogger("plainsight").error("%s", error)
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)


def warn_if(note: str) -> None:
    """Log `note` as a warning of the running step; an empty note says nothing."""
    if note:
        logging.getLogger("plainsight").warning("%s", note)
