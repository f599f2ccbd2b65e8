"""`source: generated`: a fictional TAB corpus of the configured size from the demo generator, written
deterministically, read by the TAB loader, scheduled before ingestion, and its config checked."""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path

import pytest

from conftest import PLACEHOLDER_TYPES, REPO_ROOT, SEGMENTS
from plainsight.data.ingest import ingest_dataset
from plainsight.data.sources import source_files
from plainsight.data.validate import SCHEMA, config_problems, problems, read_config
from test_tab import assert_offsets_match
from test_workflow import make_workdir, snakemake, write_overlay

GENERATOR_DIR = REPO_ROOT / "tools" / "demo_corpora"
SMALL = {"train": 6, "dev": 2, "test": 2}
SPLITS = ("train", "dev", "test")
GENERATED = {
    "format": "tab",
    "source": "generated",
    "documents": SMALL,
    "segments": [list(r) for r in SEGMENTS],
}


@pytest.fixture(scope="module")
def generator():
    """tools/demo_corpora's entry module, as the rule's script imports it (Faker needed)."""
    pytest.importorskip("faker")
    sys.path.insert(0, str(GENERATOR_DIR))
    try:
        import make_demo_corpora
    finally:
        sys.path.remove(str(GENERATOR_DIR))
    return make_demo_corpora


def read_split(folder: Path, split: str) -> list[dict]:
    return json.loads((folder / f"echr_{split}.json").read_text(encoding="utf-8"))


def test_a_small_corpus_is_written_byte_for_byte_twice_and_logged(generator, tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="demo_corpora"):
        generator.write_tab_of_size(SMALL, tmp_path / "first")
    # the sizes in another order draw the same corpus
    generator.write_tab_of_size({"test": 2, "dev": 2, "train": 6}, tmp_path / "second")
    for split in SPLITS:
        name = f"echr_{split}.json"
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
    docs = {split: read_split(tmp_path / "first", split) for split in SPLITS}
    assert {split: len(split_docs) for split, split_docs in docs.items()} == SMALL
    assert caplog.messages == [
        f"echr_{split}.json: {SMALL[split]} documents, {sum(len(d['text']) for d in docs[split])} characters"
        for split in SPLITS
    ]


def test_a_generated_corpus_ingests_with_every_offset_matching_and_unique_ids(generator, tmp_path):
    generator.write_tab_of_size(SMALL, tmp_path)
    documents = [doc for split in SPLITS for doc in read_split(tmp_path, split)]
    assert len({doc["doc_id"] for doc in documents}) == 10  # unique across the three splits
    assert [doc["dataset_type"] for doc in documents] == ["train"] * 6 + ["dev"] * 2 + ["test"] * 2
    mentions = [
        (doc["text"], mention)
        for doc in documents
        for annotation in doc["annotations"].values()
        for mention in annotation["entity_mentions"]
    ]
    assert mentions and all(
        text[m["start_offset"] : m["end_offset"]] == m["span_text"] for text, m in mentions
    )
    paths = [str(tmp_path / f"echr_{split}.json") for split in SPLITS]
    docs, spans = ingest_dataset(paths, GENERATED, "error", str(PLACEHOLDER_TYPES))  # a bad span stops it
    assert docs.groupby("split")["doc_id"].nunique().to_dict() == SMALL
    assert len(docs) == 20 and len(spans) > 0  # two segments per document
    assert_offsets_match(docs, spans)


def test_the_shipped_sizes_give_the_shipped_files(generator, tmp_path):
    generator.write_tab_of_size({"train": 64, "dev": 12, "test": 12}, tmp_path)
    for split in SPLITS:
        name = f"echr_{split}.json"
        assert (tmp_path / name).read_bytes() == (REPO_ROOT / "resources/demo/tab" / name).read_bytes(), name


def test_a_generated_dataset_reads_the_files_the_workflow_writes_for_it():
    assert source_files("tab_large", GENERATED) == [
        "results/generated/tab_large/echr_train.json",
        "results/generated/tab_large/echr_dev.json",
        "results/generated/tab_large/echr_test.json",
    ]


@pytest.fixture
def default_config(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    return read_config(["config/config.yaml"])


WITHOUT_DOCUMENTS = {key: value for key, value in GENERATED.items() if key != "documents"}


@pytest.mark.parametrize(
    ("dataset", "problem"),
    [
        (WITHOUT_DOCUMENTS, "config: datasets.big: 'documents' is a required property"),
        ({**GENERATED, "documents": None}, "config: datasets.big.documents: None is not of type 'object'"),
        (
            {**GENERATED, "documents": {"train": 6, "dev": 2}},
            "config: datasets.big.documents: 'test' is a required property",
        ),
        (
            {**GENERATED, "documents": {**SMALL, "dev": 0}},
            "config: datasets.big.documents.dev: 0 is less than the minimum of 1",
        ),
        (
            {**GENERATED, "documents": {**SMALL, "train": 3001}},
            "config: datasets.big.documents.train: 3001 is greater than the maximum of 3000",
        ),
        ({**GENERATED, "format": "mimic"}, "config: datasets.big.format: 'tab' was expected"),
        (
            {**GENERATED, "source": "demo"},
            "config: datasets.big.documents: {'train': 6, 'dev': 2, 'test': 2} is not of type 'null'",
        ),
    ],
)
def test_the_schema_names_the_key_of_a_bad_generated_dataset(default_config, dataset, problem):
    default_config["datasets"]["big"] = dataset
    found = config_problems(default_config, SCHEMA)
    assert problem in found
    assert problems(default_config) == found  # validate stops at the config


def test_validate_checks_a_generated_dataset_by_its_config_without_reading_files(default_config):
    default_config["datasets"]["big"] = GENERATED  # its files are not written yet
    assert problems(default_config) == []


def planned_jobs(dry_run: str) -> dict[str, dict[str, str]]:
    """rule -> its job's fields (`input`, `output`, ...) from a dry run's job listing, one job a rule."""
    parts = re.split(r"^(?:local)?rule (\w+):$", dry_run, flags=re.MULTILINE)[1:]
    return {
        rule: dict(re.findall(r"^ {4}(\w+): (.*)$", block, flags=re.MULTILINE))
        for rule, block in zip(parts[0::2], parts[1::2])
    }


@pytest.mark.workflow
def test_the_generating_rule_runs_before_ingest_and_logs_what_it_wrote(tmp_path):
    pytest.importorskip("faker")
    workdir = make_workdir(tmp_path / "generated")
    write_overlay(workdir, "big.yaml", {"datasets": {"big": GENERATED}})
    target = ("results/big/docs.parquet", "--configfile", "big.yaml")
    jobs = planned_jobs(snakemake(workdir, "--dry-run", *target).stdout)
    generated = ", ".join(f"results/generated/big/echr_{split}.json" for split in SPLITS)
    assert set(jobs) == {"generate_tab", "ingest"}
    # ingest reads what generate_tab writes, so it waits for it
    assert jobs["generate_tab"]["output"] == jobs["ingest"]["input"] == generated
    snakemake(workdir, *target)
    log = (workdir / "results/logs/generate_tab/big.log").read_text(encoding="utf-8")
    assert [line.split(": ", 1)[1].split(" documents")[0] for line in log.splitlines()] == [
        "echr_train.json: 6",
        "echr_dev.json: 2",
        "echr_test.json: 2",
    ]
    assert (workdir / "results/big/docs.parquet").is_file()
