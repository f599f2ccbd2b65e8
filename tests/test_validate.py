"""Checks before work: every problem of a config and its corpus at once, one line each, nothing written;
a privacy unit in two splits stops ingestion with one line naming it."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from plainsight.data.ingest import ingest_dataset
from plainsight.data.validate import config_problems, findings, main, problems, read_config
from plainsight.errors import InputError
from test_generic import PLACEHOLDER_TYPES, REPO, TEXT, dataset, records, write_jsonl


@pytest.fixture
def in_repo(monkeypatch):
    """validate reads the schema and the demo corpora by their repository paths, as `make` runs it."""
    monkeypatch.chdir(REPO)


def test_a_unit_in_two_splits_stops_ingestion_with_one_line_naming_it(tmp_path):
    rows = records(3, unit_id="u7")  # one person's three records in train, dev and test
    path = write_jsonl(tmp_path / "notes.jsonl", rows)
    with pytest.raises(InputError) as stopped:
        ingest_dataset([path], dataset(path), "error", PLACEHOLDER_TYPES)
    assert str(stopped.value) == (
        f"{path}: unit u7: its documents are in 3 splits (dev: d1; test: d2; train: d0); "
        "a unit's documents share one split"
    )
    assert "\n" not in str(stopped.value)


def test_validate_lists_every_planted_problem_in_one_run_and_writes_nothing(tmp_path, in_repo, capsys):
    rows = records(6)
    rows[1]["text"], rows[1]["spans"] = "", []  # an empty document
    rows[2] = {**rows[2], "doc_id": "d0"}  # a duplicate id
    rows[3]["unit_id"], rows[4]["unit_id"] = "u9", "u9"  # one unit in train and dev
    corpus = write_jsonl(tmp_path / "notes.jsonl", rows)
    overlay = tmp_path / "mine.yaml"
    overlay.write_text(
        yaml.safe_dump({"datasets": {"tab": dataset(corpus)}}),
        encoding="utf-8",
    )
    before = sorted(os.listdir(tmp_path))
    status = main(["--configfile", "config/config.yaml", str(overlay)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 1 and lines[-1] == "3 problem(s)"
    assert all(line.startswith("note: dataset mimic: ") for line in lines[3:-1])  # its labels: below
    assert lines[:3] == [
        f"dataset tab: {corpus}: document d1: document text is empty",
        f"dataset tab: {corpus}: document d0: duplicate document id",
        f"dataset tab: {corpus}: unit u9: its documents are in 2 splits (dev: d4; train: d3); "
        "a unit's documents share one split",
    ]
    assert sorted(os.listdir(tmp_path)) == before  # nothing written beside the inputs


def test_every_config_problem_is_listed_before_any_corpus_is_read(in_repo):
    config = read_config(["config/config.yaml"])
    config["seeds"] = "one"
    config["release"]["drop"] = "everything"
    config["generation"]["nonsense"] = 1
    found = config_problems(config)
    assert len(found) == 3 and all(line.startswith("config: ") for line in found)
    assert any(line.startswith("config: release.drop: 'everything' is not one of") for line in found)
    assert problems(config) == found  # the datasets wait for a valid config


def test_the_embedded_default_validates_cleanly(in_repo, capsys):
    assert main([]) == 0
    assert capsys.readouterr().out.strip().endswith("every dataset read cleanly")


def test_a_missing_source_file_is_one_line(tmp_path, in_repo):
    config = read_config(["config/config.yaml"])
    config["datasets"]["tab"] = {**config["datasets"]["tab"], "source": "path", "path": str(tmp_path)}
    assert problems(config) == [
        f"dataset tab: {tmp_path}/echr_{split}.json: the file is missing"
        for split in ("train", "dev", "test")
    ]


def test_validate_names_what_a_json_line_lacks(tmp_path, in_repo):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text(json.dumps({"doc_id": "x", "split": "train"}) + "\n", encoding="utf-8")
    config = read_config(["config/config.yaml"])
    config["datasets"]["tab"] = dataset(corpus)
    found = problems(config)
    assert found and all(line.startswith(f"dataset tab: {corpus}") for line in found)
    assert TEXT not in "".join(found)


def labelled(labels: list[str], splits: list[str]) -> list[dict]:
    """One record per label, in the split beside it."""
    rows = records(len(labels))
    return [{**row, "label": label, "split": split} for row, label, split in zip(rows, labels, splits)]


def overlay_with(tmp_path, corpus, on_rare_label: str):
    overlay = tmp_path / "mine.yaml"
    downstream = {
        **read_config(["config/config.yaml"])["utility"]["downstream"],
        "on_rare_label": on_rare_label,
    }
    overlay.write_text(
        yaml.safe_dump({"datasets": {"tab": dataset(corpus)}, "utility": {"downstream": downstream}}),
        encoding="utf-8",
    )
    return overlay


# housing in 2 training and 2 test documents (and 1 dev); debt in 3 training documents but 1 test document
RARE_IN_TEST = (
    ["housing", "housing", "debt", "debt", "debt", "housing", "housing", "housing", "debt"],
    ["train", "train", "train", "train", "train", "dev", "test", "test", "test"],
)


def test_a_label_too_rare_for_the_downstream_task_is_a_problem_before_anything_runs(tmp_path, in_repo):
    corpus = write_jsonl(tmp_path / "notes.jsonl", labelled(*RARE_IN_TEST))
    config = read_config(["config/config.yaml", str(overlay_with(tmp_path, corpus, "error"))])
    del config["datasets"]["mimic"]  # the demo MIMIC's test split lacks labels too (a note under drop)
    assert problems(config) == [
        f"dataset tab: {corpus}: label 'debt': 1 documents in the test split, fewer than "
        "downstream.min_documents (2)"
    ]


def test_too_few_labels_left_is_a_note_saying_the_task_will_not_be_measured(tmp_path, in_repo):
    corpus = write_jsonl(tmp_path / "notes.jsonl", labelled(*RARE_IN_TEST))
    found = findings(read_config(["config/config.yaml", str(overlay_with(tmp_path, corpus, "drop"))]))
    assert found.problems == ()
    mine = [line for line in found.notes if line.startswith("dataset tab: ")]
    assert mine == [
        f"dataset tab: {corpus}: label 'debt': 1 documents in the test split, fewer than "
        "downstream.min_documents (2)",
        f"dataset tab: {corpus}: the downstream task will not be measured: 1 label(s) left with at least 2 "
        "documents in the training and the test split; a downstream task needs 2",
    ]


def test_enough_documents_per_label_and_a_corpus_without_labels_raise_nothing_but_a_note(tmp_path, in_repo):
    splits = [*RARE_IN_TEST[1][:-1], "test", "test"]  # a second debt document in the test split
    enough = write_jsonl(tmp_path / "enough.jsonl", labelled([*RARE_IN_TEST[0], "debt"], splits))
    config = read_config(["config/config.yaml", str(overlay_with(tmp_path, enough, "error"))])
    del config["datasets"]["mimic"]
    found = findings(config)
    assert found.problems == () and not [line for line in found.notes if line.startswith("dataset tab")]
    unlabelled = write_jsonl(tmp_path / "plain.jsonl", records(6))
    config["datasets"]["tab"] = dataset(unlabelled)
    found = findings(config)
    assert found.problems == ()
    assert [line for line in found.notes if line.startswith("dataset tab")] == [
        f"dataset tab: {unlabelled}: the downstream task will not be measured: no labels: no document has a "
        "`label`"
    ]
