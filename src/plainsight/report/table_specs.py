"""What the Snakefile and the table builders both read from a table's spec (resources/paper_tables.yaml),
free of the table code's imports: the Snakefile reads it while it parses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from plainsight.errors import InputError
from plainsight.io import read_text_utf8

TABLE_KEYS: tuple[str, ...] = ("title", "dataset", "setting", "idset", "columns", "paper")


def table_settings(setting: str | Sequence[str]) -> list[str]:
    """A table spec's `setting`, one setting name or a list of them, as a list."""
    return [setting] if isinstance(setting, str) else list(setting)


# --- specifications ----------------------------------------------------------------------------


def load_table_specs(path: str | Path) -> dict[str, Any]:
    """The `methods` display names (in the paper's order) and the `tables`, checked for consistency."""
    specs = yaml.safe_load(read_text_utf8(path))
    if (
        not isinstance(specs, dict)
        or not isinstance(specs.get("methods"), dict)
        or not isinstance(specs.get("tables"), dict)
    ):
        raise InputError(path, None, "expected mappings `methods` and `tables`")
    for name, spec in specs["tables"].items():
        _check_table_spec(path, name, spec, specs["methods"])
    return specs


def _check_table_spec(path: str | Path, name: str, spec: Any, methods: Mapping[str, str]) -> None:
    record = f"tables.{name}"
    if not isinstance(spec, dict):
        raise InputError(path, record, "expected a mapping")
    missing = [key for key in TABLE_KEYS if key not in spec]
    if missing:
        raise InputError(path, record, f"missing {', '.join(missing)}")
    settings = table_settings(spec["setting"])
    for key, column in spec["columns"].items():
        if not isinstance(column, dict) or {"label", "decimals"} - column.keys():
            raise InputError(path, f"{record}.columns.{key}", "expected `label` and `decimals`")
        if column.get("setting", settings[0]) not in settings:
            raise InputError(
                path, f"{record}.columns.{key}", f"setting {column['setting']!r} is not the table's"
            )
    for method in spec.get("methods", []):
        if method not in methods:
            raise InputError(path, f"{record}.methods", f"method {method!r} not listed under `methods`")
    for pair in spec.get("paired", []):
        if not isinstance(pair, list) or len(pair) != 2 or any(method not in methods for method in pair):
            raise InputError(path, f"{record}.paired", f"expected pairs of listed methods, got {pair!r}")
    for method, cells in spec["paper"].items():
        if method not in methods:
            raise InputError(path, f"{record}.paper.{method}", "method not listed under `methods`")
        for metric, cell in cells.items():
            if metric not in spec["columns"]:  # a column key
                raise InputError(path, f"{record}.paper.{method}.{metric}", "metric not among the columns")
            if not isinstance(cell, list) or len(cell) != 2:
                raise InputError(
                    path,
                    f"{record}.paper.{method}.{metric}",
                    "expected [mean, half-width] (half-width null for a single run)",
                )
