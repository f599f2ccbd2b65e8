"""Where a configured dataset's source files are, by its format and source: the ingest rule's inputs and
what `validate` reads. No torch, no pandas: the Snakefile imports it while it parses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TAB_FOLDERS = {"demo": "resources/demo/tab", "github": "results/downloads/tab"}
MIMIC_DEMO = "resources/demo/mimic/NOTEEVENTS.csv"


def source_files(dataset: Mapping[str, Any]) -> list[str]:
    """The user-facing source files of one dataset's config block."""
    if dataset["format"] == "tab":
        folder = TAB_FOLDERS.get(dataset["source"]) or dataset.get("path")
        return [f"{folder}/echr_{split}.json" for split in ("train", "dev", "test")]
    if dataset["source"] == "demo":
        return [MIMIC_DEMO]
    return [dataset["path"]]
