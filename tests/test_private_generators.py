"""RPSG, Aug-PE and the CTCL-style topic generator end to end on the tiny model and the shipped sentence
embedder: the corpus table, the guarantee records, the filters' counts, determinism."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from conftest import RESOURCES
from plainsight.generation.corpus import CORPUS_COLUMNS
from plainsight.generation.job_common import JobCommon
from plainsight.generation.jobs import MauveTextsJob, corpus_job
from plainsight.generation.params import GenerationSettings
from plainsight.generation.private_evolution import EvolutionRun, evolve_corpus
from plainsight.generation.private_selection_jobs import CorpusTextsWriter, PrivateSelectionCorpusJob
from plainsight.generation.seed_rewrite import RewriteRun, draw_seeds, rewrite_corpus
from plainsight.generation.selection import Embedder, PrivateSegments, StepWriter, Written, selection_frame
from plainsight.generation.topic_generation import TopicRun, topic_corpus
from plainsight.methods.pii import PiiPatterns
from plainsight.methods.private_selection import (
    EvolutionSettings,
    SeedRewriteSettings,
    composed_epsilon,
    gaussian_sigma,
    paper_delta,
)
from plainsight.methods.selection_prompts import SelectionPrompts
from plainsight.methods.topics import TopicSettings
from plainsight.models import CPU, load_model
from plainsight.snakemake_job import RuleJob
from plainsight.training.finetune import FinetuneSettings, text_nlls

GENERATION = {"max_new_tokens": 12, "temperature": 1.0, "top_p": 0.9, "batch_size": 4, "group_size": 32}
GENERATION["max_prompt_tokens"] = 256
SETTINGS = GenerationSettings.from_params(GENERATION)


def private_data() -> PrivateSegments:
    """Six documents of two segments; five train, in three privacy units of two documents (the last one
    alone); one test document that no method may read."""
    rows = [
        {
            "doc_id": f"d{d}",
            "split": "train" if d < 5 else "test",
            "segment": segment,
            "text": f"The applicant, Mr Jan Nowak{d}, lodged application no. 4059{d}/04 on 12 March 2003. "
            f"He complained of the length of proceedings number {segment}.",
            "unit_id": f"u{d // 2}",
        }
        for d in range(6)
        for segment in (0, 1)
    ]
    docs = pd.DataFrame(rows)
    codes = docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * len(docs))
    return PrivateSegments.of(docs, codes)


@pytest.fixture(scope="module")
def writer_parts(tiny_model_dir):
    model, tokenizer = load_model(tiny_model_dir)
    prompts = SelectionPrompts.load(RESOURCES / "private_selection_prompts.yaml", "tab")
    return model, tokenizer, prompts


def rewrite(tiny_model_dir, writer_parts, seed: int = 1, keep: float = 0.8):
    model, tokenizer, prompts = writer_parts
    run = RewriteRun(
        "rpsg",
        seed,
        SeedRewriteSettings(2, 3, 4.0, None, keep, 0.25),
        FinetuneSettings("lora", 1, 4e-4, 4, 64),
        6,
        12,
        PiiPatterns.load(RESOURCES / "pii_patterns.yaml"),
    )
    writer = StepWriter(model, tokenizer, prompts, SETTINGS, seed)
    return rewrite_corpus(
        run, private_data(), writer, Embedder("minilm", CPU), (str(tiny_model_dir), (CPU, torch.float32))
    )


def test_private_segments_are_the_training_split_with_their_units():
    private = private_data()
    assert len(private.keys) == 10 and ("d5", 0) not in private.keys
    assert private.ranges == [0, 1] * 5
    assert private.units[:4] == ["u0", "u0", "u0", "u0"] and private.units[-2:] == ["u2", "u2"]


def test_seeds_are_drawn_per_paragraph_range():
    private = private_data()
    chosen = draw_seeds(private, 2, seed=1)
    assert len(chosen) == 4 and sorted(private.ranges[i] for i in chosen) == [0, 0, 1, 1]
    assert draw_seeds(private, 2, seed=1) == chosen
    assert draw_seeds(private, None, seed=1) == list(range(10))
    assert draw_seeds(private, 99, seed=3) == list(range(10))


def test_rpsg_writes_the_corpus_table_and_its_guarantee(tiny_model_dir, writer_parts):
    frame, record = rewrite(tiny_model_dir, writer_parts)
    assert list(frame.columns) == list(CORPUS_COLUMNS)
    # 4 seeds, 4 non-empty texts; the cosine filter keeps floor(0.8 x 4) = 3, the NLL filter those above
    # the 25th percentile of their three (distinct) NLLs: 2
    assert record["seeds"] == 4
    # the seeds drawn with seed 1 are both segments of d0 (unit u0) and of d2 (unit u1): two units, two
    # seeds each, so a person of either has twice a selection's epsilon
    assert record["seeded_units"] == 2 and record["largest_unit_seeds"] == 2
    assert record["privacy_unit"] == "one training segment, per selection (its seed)"
    assert record["texts"] == {"written": 4, "after_cosine_filter": 3, "released": 2} and len(frame) == 2
    assert set(frame["method"]) <= {"rpsg"} and set(frame["segment"]) <= {0, 1}
    # each text names the seed it rewrites; a test document is never one
    assert all(len(ids) == 1 and ids[0] != "d5" for ids in frame["context_doc_ids"])
    assert (frame["fictional_code"] == "").all() and frame["fictional_entities"].map(len).eq(0).all()
    assert record["redactions"]["seeds"] == 4 * 2  # each seed: its application number and its date
    delta = paper_delta(10)
    assert record["delta"] == pytest.approx(delta) and record["sigma"] == pytest.approx(
        gaussian_sigma(4.0, delta)
    )
    assert record["release_epsilon"] is None and "one-to-one rewrite" in record["not_covered"]


def test_rpsg_is_deterministic(tiny_model_dir, writer_parts):
    first, _ = rewrite(tiny_model_dir, writer_parts, seed=2)
    second, _ = rewrite(tiny_model_dir, writer_parts, seed=2)
    pd.testing.assert_frame_equal(first, second)


def evolve(writer_parts, seed: int = 1):
    model, tokenizer, prompts = writer_parts
    run = EvolutionRun("aug_pe", seed, EvolutionSettings(2, 2, 1, 0.5, 4.0, None), 12)
    return evolve_corpus(
        run, private_data(), StepWriter(model, tokenizer, prompts, SETTINGS, seed), Embedder("minilm", CPU)
    )


def test_aug_pe_keeps_samples_per_range_and_states_the_composed_budget(writer_parts):
    frame, record = evolve(writer_parts)
    assert list(frame.columns) == list(CORPUS_COLUMNS)
    assert len(frame) == 4 and sorted(frame["segment"]) == [0, 0, 1, 1]
    assert frame["context_doc_ids"].map(len).eq(0).all()  # no text is written from a private one
    assert record["units"] == 3 and record["private_records"] == 10
    assert record["privacy_unit"].startswith("one privacy unit (the docs' `unit_id`")
    assert record["delta"] == pytest.approx(1 / (3 * math.log(3)))
    assert record["epsilon_spent"] == pytest.approx(
        composed_epsilon(record["noise_multiplier"], 2, record["delta"])
    )
    assert (
        4.0 * 0.99 <= record["epsilon_spent"] <= 4.0 and record["release_epsilon"] == record["epsilon_spent"]
    )


def test_aug_pe_is_deterministic(writer_parts):
    first, _ = evolve(writer_parts, seed=2)
    second, _ = evolve(writer_parts, seed=2)
    pd.testing.assert_frame_equal(first, second)


def topics(writer_parts, seed: int = 1):
    model, tokenizer, prompts = writer_parts
    run = TopicRun("dp_topics", seed, TopicSettings(2, 4, 3, 3, 4.0, None, 0), 12)
    return topic_corpus(
        run, private_data(), StepWriter(model, tokenizer, prompts, SETTINGS, seed), Embedder("minilm", CPU)
    )


def test_dp_topics_writes_its_samples_from_the_noisy_topics_and_states_its_budget(writer_parts):
    frame, record = topics(writer_parts)
    assert list(frame.columns) == list(CORPUS_COLUMNS)
    assert sorted(frame["segment"]) == [0, 0, 0, 1, 1, 1]
    assert frame["context_doc_ids"].map(len).eq(0).all()  # no text is written from a private one
    assert record["units"] == 3 and record["private_records"] == 10 and record["rounds"] == 1
    assert record["delta"] == pytest.approx(1 / (3 * math.log(3)))
    spent = composed_epsilon(record["noise_multiplier"], 1, record["delta"])
    assert record["epsilon_spent"] == pytest.approx(spent)
    assert 4.0 * 0.99 <= record["release_epsilon"] == record["epsilon_spent"] <= 4.0
    # two topics per range, each with at most 3 keywords of the public texts; the texts per range add up
    assert [(t["segment"], t["topic"]) for t in record["topics"]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(len(t["keywords"]) <= 3 for t in record["topics"])
    for segment in (0, 1):
        assert sum(t["texts"] for t in record["topics"] if t["segment"] == segment) == 3


def test_dp_topics_is_deterministic(writer_parts):
    first, first_record = topics(writer_parts, seed=2)
    second, second_record = topics(writer_parts, seed=2)
    pd.testing.assert_frame_equal(first, second)
    assert first_record == second_record


class UniformLM(torch.nn.Module):
    """The same logit for every token: each token costs log V."""

    def __init__(self, vocabulary: int):
        super().__init__()
        self.vocabulary, self.weight = vocabulary, torch.nn.Parameter(torch.zeros(()))

    def forward(self, input_ids, attention_mask=None):
        return type("Output", (), {"logits": self.weight.expand(*input_ids.shape, self.vocabulary)})()


def test_the_surrogate_scores_each_text_on_its_own(tiny_tokenizer):
    texts = ["The applicant was born in 1970 and lives in Ankara.", "", "The Court met on 3 May 2001."]
    sizes = [len(tiny_tokenizer(t, add_special_tokens=False).input_ids) for t in texts]
    scored = text_nlls(UniformLM(len(tiny_tokenizer)), tiny_tokenizer, texts, max_length=8, batch_size=2)
    # windows of 8 tokens: each predicts all but its first token
    predicted = [size - math.ceil(size / 8) if size else 0 for size in sizes]
    assert [tokens for _, tokens in scored] == predicted and predicted[1] == 0
    for (nll, _), expected in zip(scored, predicted):
        assert nll == pytest.approx(expected * math.log(len(tiny_tokenizer)), rel=1e-6)


# --- the job type of the family -------------------------------------------------------------------

PLACEMENT = {"device": "cpu", "dtype": "float32"}


def rule_job(method: str, inputs: dict, params: dict) -> RuleJob:
    """A job as Snakemake hands it to rule generate_private_selection's or mauve_texts's script."""
    params = {"model": "some/model", "placement": PLACEMENT, "generation": GENERATION, **params}
    inputs = SimpleNamespace(**{"codes": "codes.parquet", "docs": "docs.parquet", **inputs})
    wildcards = SimpleNamespace(dataset="tab", method=method, seed="2")
    return RuleJob("a_rule", inputs, ["out.parquet"], SimpleNamespace(**params), wildcards, [], 3, None, {})


def test_the_rule_hands_each_private_generator_its_config_block():
    block = {"rounds": 2, "samples": 3, "variations": 1, "variation_strength": 0.5, "epsilon": 4.0}
    params = {"settings": block, "embedder": "minilm", "dataset_format": "tab"}
    job = corpus_job(rule_job("aug_pe", {"prompts": "prompts.yaml", "pii": []}, params))
    common = JobCommon("aug_pe", 2, "codes.parquet", "some/model", PLACEMENT, SETTINGS, 3)
    assert job == PrivateSelectionCorpusJob(
        common, "docs.parquet", block, "minilm", "prompts.yaml", "tab", None
    )
    rpsg = corpus_job(rule_job("rpsg", {"prompts": "prompts.yaml", "pii": "pii.yaml"}, params))
    assert rpsg.pii == "pii.yaml" and rpsg.common.method == "rpsg"


def test_a_private_generators_mauve_texts_are_its_corpus_texts_of_each_range(tmp_path):
    docs = pd.DataFrame(
        {
            "doc_id": [f"t{d}" for d in range(3) for _ in (0, 1)] + ["r0", "r0"],
            "split": ["test"] * 6 + ["train"] * 2,
            "segment": [0, 1] * 4,
            "text": ["real"] * 8,
            "unit_id": [f"t{d}" for d in range(3) for _ in (0, 1)] + ["r0", "r0"],
        }
    )
    docs.to_parquet(tmp_path / "docs.parquet")
    docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * 8).to_parquet(
        tmp_path / "codes.parquet"
    )
    texts = [Written(f"text {n}", 10, 5) for n in range(7)]
    ranges = [1, 0, 1, 1, 0, 1, 1]  # two texts of range 0, five of range 1
    corpus = selection_frame("aug_pe", 1, texts, ranges, [()] * 7, PLACEMENT)
    corpus.to_parquet(tmp_path / "corpus.parquet")
    job = MauveTextsJob.from_snakemake(
        rule_job(
            "aug_pe",
            {name: str(tmp_path / f"{name}.parquet") for name in ("corpus", "docs", "codes")},
            {"mauve_samples": None},
        )
    )
    assert job.writer == CorpusTextsWriter(str(tmp_path / "corpus.parquet"))
    frame = job.run()
    # targets (the sorted test segments): t0/0, t0/1, t1/0, t1/1, t2/0, t2/1; range 0 has two texts
    assert list(zip(frame["target_doc_id"], frame["segment"])) == [
        ("t0", 0),
        ("t0", 1),
        ("t1", 0),
        ("t1", 1),
        ("t2", 1),
    ]
    assert list(frame["text"]) == ["text 1", "text 0", "text 4", "text 2", "text 3"]
    assert list(frame.columns) == [*CORPUS_COLUMNS[:4], "target_doc_id", *CORPUS_COLUMNS[4:]]
