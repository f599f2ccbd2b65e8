"""What the Snakefile and the table builders both read from a table's spec (resources/paper_tables.yaml),
free of the table code's imports: the Snakefile reads it while it parses."""

from __future__ import annotations

from collections.abc import Sequence


def table_settings(setting: str | Sequence[str]) -> list[str]:
    """A table spec's `setting`, one setting name or a list of them, as a list."""
    return [setting] if isinstance(setting, str) else list(setting)
