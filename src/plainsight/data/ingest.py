"""Dataset ingestion entry point: picks the reader for a dataset's format."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from plainsight.data.builder import CorpusBuilder
from plainsight.data.mimic import PlaceholderTypes, ingest_mimic
from plainsight.data.problems import ProblemPolicy
from plainsight.data.tab import ingest_tab


def ingest_dataset(paths: list[str | Path], dataset: dict, on_invalid: str,
                   placeholder_types: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a dataset's source files into (docs, spans) tables, as configured."""
    policy = ProblemPolicy(on_invalid)
    builder = CorpusBuilder(dataset["segments"], policy)
    if dataset["format"] == "tab":
        ingest_tab(paths, builder, policy)
    else:
        (path,) = paths
        ingest_mimic(path, builder, policy, PlaceholderTypes.from_yaml(placeholder_types),
                     dataset["split_fractions"])
    return builder.tables()
