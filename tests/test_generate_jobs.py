"""The generate jobs (`plainsight.generation.jobs`): what each rule hands its job, the table it returns."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import get_args

import pandas as pd
import pytest

from conftest import PLACEHOLDER_TYPES, RESOURCES
from plainsight.codes.control_code import codes_table, select_spans
from plainsight.codes.surrogates import fictional_codes
from plainsight.data.ingest import ingest_dataset
from plainsight.data.segments import mauve_targets
from plainsight.generation.corpus import CORPUS_COLUMNS
from plainsight.generation.in_context_jobs import FictionalValues, InContextCorpusJob, InContextWriter
from plainsight.generation.job_common import JobCommon, Shard
from plainsight.generation.jobs import KINDS, MauveTextsJob, corpus_job
from plainsight.generation.params import GenerationSettings
from plainsight.generation.trained_jobs import TrainedCorpusJob, TrainedWriter, ZeroLearningCorpusJob
from plainsight.methods import registry
from plainsight.snakemake_job import RuleJob

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
SETTINGS = GenerationSettings.from_params(GENERATION)
PLACEMENT = {"device": "cpu", "dtype": "float32"}
POOLS = str(RESOURCES / "fictional_pools.yaml")


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory) -> dict[str, str]:
    """docs, spans, codes and seed 1's fictional codes of the demo TAB corpus (direct identifiers), as
    the workflow writes them."""
    out = tmp_path_factory.mktemp("demo_tab")
    paths = [RESOURCES / "demo/tab" / f"echr_{split}.json" for split in ("train", "dev", "test")]
    docs, spans = ingest_dataset(
        paths, {"format": "tab", "segments": [[1, 6], [6, 12]]}, "error", PLACEHOLDER_TYPES
    )
    codes = codes_table(docs, select_spans(spans, "direct"))
    frames = {
        "docs": docs,
        "spans": spans,
        "codes": codes,
        "fictional": fictional_codes(codes, spans, POOLS, 1),
    }
    for name, frame in frames.items():
        frame.to_parquet(out / f"{name}.parquet")
    return {name: str(out / f"{name}.parquet") for name in frames}


def common(demo_files, model: str, method: str = "icl") -> JobCommon:
    return JobCommon(method, 1, demo_files["codes"], model, PLACEMENT, SETTINGS, 1)


def icl_corpus(demo_files, tiny_model_dir, shard: Shard) -> InContextCorpusJob:
    fictional = FictionalValues(demo_files["spans"], POOLS, "paper", None)
    return InContextCorpusJob(common(demo_files, str(tiny_model_dir)), demo_files["docs"], fictional, shard)


def rule_job(method: str, inputs: dict, params: dict) -> RuleJob:
    """A job as Snakemake hands it to a generate rule's script (named inputs and params as attributes)."""
    params = {"model": "some/model", "placement": PLACEMENT, "generation": GENERATION, **params}
    return RuleJob(
        "a_generate_rule",
        SimpleNamespace(codes="codes.parquet", **inputs),
        ["out.parquet"],
        SimpleNamespace(**params),
        SimpleNamespace(dataset="tab", method=method, seed="2"),
        [],
        3,
        SimpleNamespace(),
        {},
    )


def test_mauve_texts_are_written_for_the_sampled_test_segments(demo_files, tiny_model_dir):
    job = MauveTextsJob(common(demo_files, str(tiny_model_dir)), demo_files["docs"], 3, InContextWriter())
    frame = job.run()
    targets = mauve_targets(pd.read_parquet(demo_files["docs"]), 3)
    assert list(frame.columns) == [*CORPUS_COLUMNS[:4], "target_doc_id", *CORPUS_COLUMNS[4:]]
    assert list(zip(frame["target_doc_id"], frame["segment"])) == targets
    assert set(frame["method"]) == {"icl"} and set(frame["seed"]) == {1}


def test_a_corpus_shard_is_part_of_the_full_corpus(demo_files, tiny_model_dir):
    full = icl_corpus(demo_files, tiny_model_dir, Shard()).run()
    assert list(full.columns) == list(CORPUS_COLUMNS)
    half = icl_corpus(demo_files, tiny_model_dir, Shard(1, 2)).run()
    assert 0 < len(half) < len(full)
    expected = full.set_index("generation_id").loc[half["generation_id"]].reset_index()
    pd.testing.assert_frame_equal(half.reset_index(drop=True), expected)


def test_a_trained_corpus_takes_the_seeds_fictional_code_of_each_drawn_sample(demo_files):
    job = TrainedCorpusJob(common(demo_files, "unused", "ft"), "unused", demo_files["fictional"], 3, Shard())
    plan = job.plan()
    fictional = pd.read_parquet(demo_files["fictional"]).set_index(["doc_id", "segment"])["code"]
    assert [g.generation_id for g in plan.generations] == [0, 1, 2]
    assert [g.target_code for g in plan.generations] == [
        fictional[g.context_keys[0]] for g in plan.generations
    ]
    assert plan.common_words == frozenset()


def test_every_family_of_methods_has_its_job_types():
    assert set(KINDS) == set(get_args(registry.Family))


def test_the_methods_family_picks_the_corpus_job_and_reads_what_its_rule_hands_it():
    icl = corpus_job(
        rule_job(
            "icl_pe",
            {"docs": "docs.parquet", "spans": "spans.parquet", "pools": "pools.yaml", "lists": []},
            {"surrogates": "paper", "shard": {"index": 1, "count": 4}},
        )
    )
    shared = JobCommon("icl_pe", 2, "codes.parquet", "some/model", PLACEMENT, SETTINGS, 3)
    fictional = FictionalValues("spans.parquet", "pools.yaml", "paper", None)
    assert icl == InContextCorpusJob(shared, "docs.parquet", fictional, Shard(1, 4))
    ft = corpus_job(
        rule_job(
            "ft_mask",
            {"adapter": "adapter/", "fictional": "fictional.parquet"},
            {"generations": 50, "shard": {"index": 0, "count": 1}},
        )
    )
    shared = JobCommon("ft_mask", 2, "codes.parquet", "some/model", PLACEMENT, SETTINGS, 3)
    assert ft == TrainedCorpusJob(shared, "adapter/", "fictional.parquet", 50, Shard())


@pytest.mark.parametrize(
    "method, adapter, writer",
    [("baseline", [], InContextWriter()), ("dpsgd", "adapter/", TrainedWriter("adapter/"))],
)
def test_mauve_texts_are_written_as_the_methods_family_writes(method, adapter, writer):
    job = MauveTextsJob.from_snakemake(
        rule_job(method, {"docs": "docs.parquet", "adapter": adapter}, {"mauve_samples": None})
    )
    shared = JobCommon(method, 2, "codes.parquet", "some/model", PLACEMENT, SETTINGS, 3)
    assert job == MauveTextsJob(shared, "docs.parquet", None, writer)


def test_the_zero_learning_corpus_writes_the_trained_plan_without_an_adapter(demo_files, tiny_model_dir):
    handed = rule_job(
        "unused", {}, {"generations": 3, "label": "negative_control", "model": str(tiny_model_dir)}
    )
    inputs = SimpleNamespace(codes=demo_files["codes"], fictional=demo_files["fictional"])
    job = ZeroLearningCorpusJob.from_snakemake(dataclasses.replace(handed, input=inputs))
    # the same seed draws the same fine-tuning samples a trained method's corpus writes from
    trained_plan = TrainedCorpusJob(
        JobCommon(job.corpus.common.method, 2, demo_files["codes"], "unused", PLACEMENT, SETTINGS, 3),
        "",
        demo_files["fictional"],
        3,
        Shard(),
    ).plan()
    assert registry.method(job.corpus.common.method).trained and job.corpus.adapter == ""
    assert job.corpus.plan() == trained_plan
    frame = job.run()
    assert len(frame) == 3 and set(frame["method"]) == {"negative_control"} and set(frame["seed"]) == {2}
