"""Ingestion's dispatch: one reader per dataset format, and an unknown format as one line of bad config."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import PLACEHOLDER_TYPES
from plainsight.data.ingest import READERS, ingest_dataset, write_dataset
from plainsight.errors import InputError

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def notes_dataset(format_name: str) -> dict:
    return {"format": format_name, "source": "path", "path": "notes.csv", "segments": [[1, 6]]}


def test_every_format_the_schema_allows_has_a_reader():
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    assert sorted(READERS) == sorted(schema["$defs"]["dataset"]["properties"]["format"]["enum"])


def test_an_unknown_format_names_the_dataset_and_the_known_formats(tmp_path):
    notes = tmp_path / "notes.csv"
    notes.write_text("ROW_ID,SUBJECT_ID,TEXT\n1,7,A note.\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        ingest_dataset([notes], notes_dataset("notes"), "error", PLACEHOLDER_TYPES)
    message = str(error.value)
    assert message == (
        f"config: the dataset read from {notes}: format 'notes' is not one of ['generic', 'mimic', 'tab']"
    )
    assert "\n" not in message


def test_an_unknown_format_writes_nothing(tmp_path):
    notes = tmp_path / "notes.csv"
    notes.write_text("ROW_ID,SUBJECT_ID,TEXT\n1,7,A note.\n", encoding="utf-8")
    docs, spans = tmp_path / "docs.parquet", tmp_path / "spans.parquet"
    with pytest.raises(InputError, match="format 'notes' is not one of"):
        write_dataset([notes], notes_dataset("notes"), "error", PLACEHOLDER_TYPES, docs, spans)
    assert not docs.exists() and not spans.exists()


def test_a_missing_format_is_named_as_missing(tmp_path):
    dataset = {key: value for key, value in notes_dataset("tab").items() if key != "format"}
    with pytest.raises(InputError, match="format None is not one of"):
        ingest_dataset([tmp_path / "notes.csv"], dataset, "error", PLACEHOLDER_TYPES)
