"""Dataset ingestion entry point: picks the reader for a dataset's format."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from plainsight.data.builder import CorpusBuilder
from plainsight.data.generic import GenericSettings, ingest_generic
from plainsight.data.mimic import PlaceholderTypes, ingest_mimic
from plainsight.data.problems import ProblemPolicy
from plainsight.data.tab import ingest_tab


def ingest_dataset(
    paths: list[str | Path], dataset: dict, on_invalid: str, placeholder_types: str | Path
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a dataset's source files into (docs, spans) tables, as configured."""
    builder = _builder(dataset, on_invalid)
    _fill(builder, paths, dataset, placeholder_types)
    return builder.tables()


def write_dataset(
    paths: list[str | Path],
    dataset: dict,
    on_invalid: str,
    placeholder_types: str | Path,
    docs_path: str | Path,
    spans_path: str | Path,
) -> None:
    """Read a dataset's source files straight into docs and spans Parquet files (both or neither)."""
    builder = _builder(dataset, on_invalid)
    with builder.writing(docs_path, spans_path):
        _fill(builder, paths, dataset, placeholder_types)


def _builder(dataset: dict, on_invalid: str) -> CorpusBuilder:
    return CorpusBuilder(
        dataset["segments"], ProblemPolicy(on_invalid), dataset.get("paragraph_break", "blank_line")
    )


def _fill(
    builder: CorpusBuilder, paths: list[str | Path], dataset: dict, placeholder_types: str | Path
) -> None:
    if dataset["format"] == "tab":
        ingest_tab(paths, builder, builder.policy)
        return
    (path,) = paths
    if dataset["format"] == "generic":
        ingest_generic(path, builder, builder.policy, GenericSettings.from_config(dataset))
    else:
        ingest_mimic(
            path,
            builder,
            builder.policy,
            PlaceholderTypes.from_yaml(placeholder_types),
            dataset["split_fractions"],
        )
