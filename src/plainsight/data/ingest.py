"""Dataset ingestion entry point: picks the reader for a dataset's format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from plainsight.data.builder import CorpusBuilder
from plainsight.data.generic import GenericSettings, ingest_generic, seeded_split
from plainsight.data.mimic import PlaceholderTypes, ingest_mimic
from plainsight.data.problems import ProblemPolicy
from plainsight.data.tab import ingest_tab
from plainsight.errors import InputError

# A reader adds a dataset's documents from its source files to the builder:
# (paths, builder, dataset config, MIMIC placeholder types file).
Reader = Callable[[list[str | Path], CorpusBuilder, dict, str | Path], None]


def ingest_dataset(
    paths: list[str | Path], dataset: dict, on_invalid: str, placeholder_types: str | Path
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a dataset's source files into (docs, spans) tables, as configured."""
    read = reader(paths, dataset)
    builder = _builder(dataset, on_invalid)
    read(paths, builder, dataset, placeholder_types)
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
    read = reader(paths, dataset)
    builder = _builder(dataset, on_invalid)
    with builder.writing(docs_path, spans_path):
        read(paths, builder, dataset, placeholder_types)


def reader(paths: list[str | Path], dataset: dict) -> Reader:
    """The reader of the dataset's `format`; an unknown one is bad config, named before any file is read."""
    name = dataset.get("format")
    if name not in READERS:
        sources = ", ".join(str(path) for path in paths)
        raise InputError(
            "config", f"the dataset read from {sources}", f"format {name!r} is not one of {sorted(READERS)}"
        )
    return READERS[name]


def _builder(dataset: dict, on_invalid: str) -> CorpusBuilder:
    return CorpusBuilder(
        dataset["segments"],
        ProblemPolicy(on_invalid),
        dataset.get("paragraph_break", "blank_line"),
        coin_split(dataset),
    )


def coin_split(dataset: dict) -> Callable[[str], str] | None:
    """With `split: coin`, a unit's split drawn by a seeded hash against `split_fractions` (the one the
    generic reader gives a record without a split); None: the source's split is kept."""
    if dataset.get("split", "given") != "coin":
        return None
    fractions, seed = dict(dataset["split_fractions"]), int(dataset.get("split_seed", 0))
    return lambda unit_id: seeded_split(unit_id, fractions, seed)


def _read_tab(
    paths: list[str | Path], builder: CorpusBuilder, dataset: dict, placeholder_types: str | Path
) -> None:
    ingest_tab(paths, builder, builder.policy)


def _read_mimic(
    paths: list[str | Path], builder: CorpusBuilder, dataset: dict, placeholder_types: str | Path
) -> None:
    (path,) = paths
    ingest_mimic(
        path,
        builder,
        builder.policy,
        PlaceholderTypes.from_yaml(placeholder_types),
        dataset["split_fractions"],
    )


def _read_generic(
    paths: list[str | Path], builder: CorpusBuilder, dataset: dict, placeholder_types: str | Path
) -> None:
    (path,) = paths
    ingest_generic(path, builder, builder.policy, GenericSettings.from_config(dataset))


READERS: dict[str, Reader] = {"tab": _read_tab, "mimic": _read_mimic, "generic": _read_generic}
