"""The generate jobs' entry point (`plainsight.generation.jobs`): what a rule hands it, the table it
returns."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from conftest import PLACEHOLDER_TYPES, RESOURCES
from plainsight.codes.control import codes_table, select_spans
from plainsight.data.ingest import ingest_dataset
from plainsight.data.segments import mauve_targets
from plainsight.generation.corpus import CORPUS_COLUMNS
from plainsight.generation.jobs import GenerateJob, generate_texts

GENERATION = {
    "max_new_tokens": 4,
    "temperature": 1.0,
    "top_p": 0.9,
    "batch_size": 2,
    "group_size": 1,
    "context_documents": 2,
    "max_prompt_tokens": 512,
    "max_regenerations": 1,
    "blocking": "values",
    "generations_per_segment": 1,
}


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory) -> dict[str, str]:
    """docs, spans and codes of the demo TAB corpus (direct identifiers), as the workflow writes them."""
    out = tmp_path_factory.mktemp("demo_tab")
    paths = [RESOURCES / "demo/tab" / f"echr_{split}.json" for split in ("train", "dev", "test")]
    docs, spans = ingest_dataset(
        paths, {"format": "tab", "segments": [[1, 6], [6, 12]]}, "error", PLACEHOLDER_TYPES
    )
    frames = {"docs": docs, "spans": spans, "codes": codes_table(docs, select_spans(spans, "direct"))}
    for name, frame in frames.items():
        frame.to_parquet(out / f"{name}.parquet")
    return {name: str(out / f"{name}.parquet") for name in frames}


def job(demo_files, tiny_model_dir, purpose: str, **fields) -> GenerateJob:
    return GenerateJob(
        "icl",
        1,
        purpose,
        demo_files["codes"],
        str(tiny_model_dir),
        {"device": "cpu", "dtype": "float32"},
        GENERATION,
        docs=demo_files["docs"],
        spans=demo_files["spans"],
        pools=str(RESOURCES / "fictional_pools.yaml"),
        **fields,
    )


def test_mauve_texts_are_written_for_the_sampled_test_segments(demo_files, tiny_model_dir):
    frame = generate_texts(job(demo_files, tiny_model_dir, "mauve", mauve_samples=3))
    targets = mauve_targets(pd.read_parquet(demo_files["docs"]), 3)
    assert list(frame.columns) == [*CORPUS_COLUMNS[:4], "target_doc_id", *CORPUS_COLUMNS[4:]]
    assert list(zip(frame["target_doc_id"], frame["segment"])) == targets
    assert set(frame["method"]) == {"icl"} and set(frame["seed"]) == {1}


def test_a_corpus_shard_is_part_of_the_full_corpus(demo_files, tiny_model_dir):
    full = generate_texts(job(demo_files, tiny_model_dir, "corpus"))
    assert list(full.columns) == list(CORPUS_COLUMNS)
    half = generate_texts(job(demo_files, tiny_model_dir, "corpus", shard=1, shards=2))
    assert 0 < len(half) < len(full)
    expected = full.set_index("generation_id").loc[half["generation_id"]].reset_index()
    pd.testing.assert_frame_equal(half.reset_index(drop=True), expected)


def test_an_unknown_purpose_is_refused(demo_files, tiny_model_dir):
    with pytest.raises(ValueError, match="purpose 'table' is not one of"):
        replace(job(demo_files, tiny_model_dir, "corpus"), purpose="table")
