"""Rule `table`: one paper table from its runs' files: the table, its Markdown with notes, and the
comparison with the paper's numbers (`plainsight.report.table_format` builds and formats each part)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plainsight.evaluation.utility import summary_rows
from plainsight.io import read_json
from plainsight.methods.registry import base_method
from plainsight.report.review_comments import read_comments, review_notes
from plainsight.report.table_format import (
    adherence_notes,
    build_table,
    document_warnings,
    dp_notes,
    leak_definitions_note,
    markdown_table,
    paired_notes,
    phantom_notes,
    presidio_note,
    protocol_notes,
    regeneration_notes,
    versus_paper,
    write_table,
)
from plainsight.report.table_specs import load_table_specs, table_settings


@dataclass(frozen=True)
class TableRuns:
    """The files a table reads: privacy summaries (.parquet) or utility records (.json, with the base
    model's reference), the privacy runs' per-generation metrics, and the DP adapters' folders."""

    summaries: Sequence[str]
    generations: Sequence[str] = ()
    dp_adapters: Sequence[str] = ()
    comments: Sequence[str] = ()  # reviewers' comments on the table's corpora (review page)
    controls: Sequence[str] = ()  # the held-out control counts of the privacy runs (.json)


@dataclass(frozen=True)
class TableSettings:
    methods: Sequence[str]  # the method keys the table lists (with their model variant)
    max_regenerations: int
    documents_warn_below: float
    presidio_extra_recognizers: Sequence[str] = ()


@dataclass(frozen=True)
class TableOutputs:
    csv: str
    markdown: str
    versus: str


def read_summaries(paths: Sequence[str], settings: Sequence[str]) -> pd.DataFrame:
    """Every run's summary rows; a model variant shows as its method."""
    frames = [pd.read_parquet(p) for p in paths if p.endswith(".parquet")]
    records = [p for p in paths if p.endswith(".json")]
    if records:
        frames.append(summary_rows(records, settings))
    summaries = pd.concat(frames, ignore_index=True)
    summaries["method"] = summaries["method"].map(base_method)
    return summaries


def read_generations(paths: Sequence[str]) -> pd.DataFrame | None:
    """The per-generation metrics of a privacy table's runs; None for a utility table."""
    if not paths:
        return None
    generations = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    generations["method"] = generations["method"].map(base_method)
    return generations


def table_notes(
    table: pd.DataFrame,
    spec: Mapping,
    methods: Mapping[str, str],
    summaries: pd.DataFrame,
    generations: pd.DataFrame | None,
    runs: TableRuns,
    settings: TableSettings,
) -> list[str]:
    """The notes under a table: protocol, leak definitions, regenerations, low document rates, paired
    differences, the DP guarantee and the Presidio recognizers."""
    per_generation = generations is not None
    return [
        *protocol_notes(set(summaries["method"])),
        *leak_definitions_note(table),
        *(regeneration_notes(generations, methods, settings.max_regenerations) if per_generation else []),
        *(adherence_notes(generations, methods) if per_generation else []),
        *phantom_notes([read_json(path) for path in runs.controls], methods),
        *document_warnings(table, settings.documents_warn_below),
        *(paired_notes(generations, spec.get("paired", []), methods) if per_generation else []),
        *dp_notes([read_json(Path(adapter) / "training.json") for adapter in runs.dp_adapters]),
        *presidio_note(spec["setting"], settings.presidio_extra_recognizers),
        *review_notes(table_comments(runs.comments, settings.methods), methods),
    ]


def table_comments(paths: Sequence[str], methods: Sequence[str]) -> pd.DataFrame:
    """Reviewers' comments on the table's corpora, a model variant shown as its method."""
    comments = read_comments(paths)
    if comments is None:
        return pd.DataFrame(columns=["method"])
    comments = comments[comments["method"].isin(methods)]
    return comments.assign(method=comments["method"].map(base_method))


def make_table(
    paper_specs: str | Path, name: str, runs: TableRuns, settings: TableSettings, outputs: TableOutputs
) -> None:
    """Table `name` of the paper's table specs, from its runs, written as CSV, Markdown and the
    comparison with the paper."""
    specs = load_table_specs(paper_specs)
    spec = specs["tables"][name]
    summaries = read_summaries(runs.summaries, table_settings(spec["setting"]))
    generations = read_generations(runs.generations)
    listed = {base_method(m) for m in settings.methods} | set(summaries["method"])
    methods = {key: label for key, label in specs["methods"].items() if key in listed}
    table = build_table(spec, summaries, methods, generations)
    notes = table_notes(table, spec, methods, summaries, generations, runs, settings)
    write_table(
        table,
        markdown_table(table, spec, notes),
        versus_paper(table, spec, methods),
        outputs.csv,
        outputs.markdown,
        outputs.versus,
    )
