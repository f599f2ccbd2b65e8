"""Where a configured dataset's source files are, by its format and source: the ingest rule's inputs and
what `validate` reads. No torch, no pandas: the Snakefile imports it while it parses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TAB_SPLITS = ("train", "dev", "test")  # echr_{split}.json
TAB_FOLDERS = {"demo": "resources/demo/tab", "github": "results/downloads/tab"}
# `source: generated`: the workflow writes the dataset's fictional TAB corpus here (rule generate_tab)
GENERATED_TAB_FOLDER = "results/generated/{dataset}"
MIMIC_DEMO = "resources/demo/mimic/NOTEEVENTS.csv"


def tab_folder(name: str, dataset: Mapping[str, Any]) -> str:
    """The folder of a TAB dataset's echr_{train,dev,test}.json."""
    source = dataset["source"]
    if source == "generated":
        return GENERATED_TAB_FOLDER.format(dataset=name)
    return TAB_FOLDERS.get(source) or dataset["path"]


def source_files(name: str, dataset: Mapping[str, Any]) -> list[str]:
    """The user-facing source files of the dataset `name`, from its config block."""
    if dataset["format"] == "tab":
        return [f"{tab_folder(name, dataset)}/echr_{split}.json" for split in TAB_SPLITS]
    if dataset["source"] == "demo":
        return [MIMIC_DEMO]
    return [dataset["path"]]
