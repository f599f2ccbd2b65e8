"""Utility metrics with known answers: corpus perplexity, fine-tuning, MAUVE, and the utility table."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

import plainsight.evaluation.utility_measures as utility_measures_module
from conftest import RESOURCES
from plainsight.data.segments import mauve_targets
from plainsight.evaluation.downstream import NOT_MEASURED, DownstreamSettings
from plainsight.evaluation.features import FeatureSettings, featurize
from plainsight.evaluation.mauve_score import MauveSettings, mauve_from_features, mauve_interval, mauve_score
from plainsight.evaluation.perplexity import corpus_perplexity
from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.evaluation.utility import BASE_MODEL_METHOD, summary_rows, utility_record
from plainsight.evaluation.utility_measures import RunKey
from plainsight.report.table_format import build_table, versus_paper
from plainsight.report.table_specs import load_table_specs
from plainsight.training.finetune import FinetuneSettings, finetune, text_examples, windows
from test_review import corpus_frames


class UniformLM(torch.nn.Module):
    """The same logit for every token: probability 1/V each."""

    def __init__(self, vocabulary: int):
        super().__init__()
        self.vocabulary = vocabulary
        self.logit = torch.nn.Parameter(torch.zeros(()))

    def forward(self, input_ids, attention_mask=None):
        return type("Output", (), {"logits": self.logit.expand(*input_ids.shape, self.vocabulary)})()


class PeakedLM(torch.nn.Module):
    """Puts logit `peak` on token 7 only: NLL of token 7 is log(e^peak + V - 1) - peak."""

    def __init__(self, vocabulary: int, peak: float):
        super().__init__()
        self.vocabulary, self.peak = vocabulary, torch.nn.Parameter(torch.tensor(peak))

    def forward(self, input_ids, attention_mask=None):
        logits = torch.zeros(*input_ids.shape, self.vocabulary)
        logits[..., 7] = self.peak
        return type("Output", (), {"logits": logits})()


def test_windows_cover_every_token_once():
    assert windows(list(range(10)), 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert windows(list(range(9)), 4) == [[0, 1, 2, 3], [4, 5, 6, 7]]  # a lone last token predicts nothing
    with pytest.raises(ValueError):
        windows([1, 2], 1)


def test_uniform_model_has_perplexity_v(tiny_tokenizer):
    vocabulary = len(tiny_tokenizer)
    texts = ["The applicant was born in 1970 and lives in Ankara.", "", "The Court met on 3 May 2001."]
    result = corpus_perplexity(UniformLM(vocabulary), tiny_tokenizer, texts, max_length=8, batch_size=2)
    assert result.perplexity == pytest.approx(vocabulary, rel=1e-6)
    lengths = [len(tiny_tokenizer(t, add_special_tokens=False).input_ids) for t in texts if t]
    assert result.tokens == sum(sum(len(w) - 1 for w in windows(range(n), 8)) for n in lengths)


def test_scoring_logs_windows_done_and_tokens_per_second(tiny_tokenizer, caplog):
    texts = ["The applicant was born in 1970 and lives in Ankara.", "The Court met on 3 May 2001."]
    count = sum(len(windows(tiny_tokenizer(t, add_special_tokens=False).input_ids, 8)) for t in texts)
    with caplog.at_level("INFO", logger="plainsight.progress"):
        corpus_perplexity(
            UniformLM(len(tiny_tokenizer)), tiny_tokenizer, texts, max_length=8, batch_size=2, desc="score"
        )
    assert count > 2  # several batches
    assert caplog.records[-1].getMessage().startswith(f"score: {count}/{count} windows (100%), ")
    assert "tokens/s" in caplog.records[-1].getMessage()


def test_perplexity_is_over_tokens_not_a_mean_of_documents(tiny_tokenizer):
    """A peaked model: exp of the token-weighted mean NLL, which differs from the mean of per-text
    perplexities."""
    vocabulary, peak = len(tiny_tokenizer), 5.0
    token_seven = tiny_tokenizer.convert_ids_to_tokens(7)
    short, long = "Court", "The applicant complained under Article 6 of the Convention about the length."
    model = PeakedLM(vocabulary, peak)
    hit = math.log(math.exp(peak) + vocabulary - 1) - peak
    miss = math.log(math.exp(peak) + vocabulary - 1)
    nll, count, per_text = 0.0, 0, []
    for text in (short, long):
        ids = tiny_tokenizer(text, add_special_tokens=False).input_ids
        text_nll = sum(hit if t == 7 else miss for t in ids[1:])
        nll, count = nll + text_nll, count + len(ids) - 1
        if len(ids) > 1:
            per_text.append(math.exp(text_nll / (len(ids) - 1)))
    result = corpus_perplexity(model, tiny_tokenizer, [short, long], max_length=512)
    assert result.perplexity == pytest.approx(math.exp(nll / count), rel=1e-6)
    assert token_seven is not None and result.tokens == count


def test_empty_corpus_is_an_error(tiny_tokenizer):
    with pytest.raises(ValueError, match="no text to score"):
        corpus_perplexity(UniformLM(10), tiny_tokenizer, ["", "  "], max_length=8)


def test_text_examples_train_on_every_token_and_stop(tiny_tokenizer):
    examples = text_examples(["Mr Polat lives in Ankara.", ""], tiny_tokenizer, max_length=512)
    assert len(examples) == 1
    ids = tiny_tokenizer("Mr Polat lives in Ankara.", add_special_tokens=False).input_ids
    assert examples[0].input_ids == [*ids, tiny_tokenizer.eos_token_id] == examples[0].labels


@pytest.mark.parametrize("mode, learning_rate", [("full", 3e-3), ("lora", 5e-2)])
def test_finetuning_on_a_text_lowers_its_perplexity(tiny_model_dir, mode, learning_rate):
    from plainsight.models import load_model

    model, tokenizer = load_model(tiny_model_dir)
    text = ["The applicant, Mr Henrik Hasslund, was born in 1970 and lives in Copenhagen."] * 8
    before = corpus_perplexity(model, tokenizer, text, max_length=64).perplexity
    settings = FinetuneSettings(mode, epochs=3, learning_rate=learning_rate, batch_size=4, max_length=64)
    tuned, history = finetune(model, tokenizer, text, settings, seed=1)
    after = corpus_perplexity(tuned, tokenizer, text, max_length=64).perplexity
    assert len(history) == 6 and after < 0.9 * before


def test_finetuning_on_nothing_leaves_the_model(tiny_model_dir):
    from plainsight.models import load_model

    model, tokenizer = load_model(tiny_model_dir)
    tuned, history = finetune(model, tokenizer, ["", " "], FinetuneSettings("full", 1, 1e-3, 2, 16), seed=1)
    assert tuned is model and history == []


def test_perplexity_of_a_bfloat16_model_is_close_to_float32(tiny_model_dir):
    from plainsight.models import load_model

    text = ["The applicant, Mr Henrik Hasslund, was born in 1970 and lives in Copenhagen."] * 2
    scores = {
        dtype: corpus_perplexity(*load_model(tiny_model_dir, dtype=dtype), text, max_length=16).perplexity
        for dtype in (torch.float32, torch.bfloat16)
    }
    assert scores[torch.bfloat16] == pytest.approx(scores[torch.float32], rel=0.02)


@pytest.mark.parametrize("mode, expected", [("full", torch.float32), ("lora", torch.bfloat16)])
def test_trained_weights_stay_float32(mode, expected):
    assert FinetuneSettings(mode, 1, 1e-3, 2, 16).weights_dtype(torch.bfloat16) == expected


def test_unknown_finetune_mode_is_rejected():
    with pytest.raises(ValueError, match="qlora"):
        FinetuneSettings("qlora", 1, 1e-3, 2, 16)


def test_mauve_of_a_set_against_itself_is_one_and_lower_when_shifted():
    rng = np.random.default_rng(0)
    p = rng.normal(size=(60, 16))
    settings = MauveSettings()
    assert mauve_from_features(p, p, settings).mauve == pytest.approx(1.0, abs=1e-9)
    same_distribution = mauve_from_features(p, rng.normal(size=(60, 16)), settings).mauve
    shifted = mauve_from_features(p, rng.normal(size=(60, 16)) + 3.0, settings).mauve
    assert same_distribution > 0.9 and shifted < 0.1
    assert mauve_from_features(p, p, settings).fid == pytest.approx(0.0, abs=1e-6)
    assert mauve_from_features(p, p + 3.0, settings).fid == pytest.approx(16 * 9.0, rel=1e-6)


@pytest.mark.parametrize(
    "p_samples, q_samples, buckets",
    [
        (20, 30, 2),
        (25, 90, 2),  # 2.5 rounds half to even
        (155, 200, 16),  # 15.5 rounds to 16 (one per ten samples, floored, would give 15)
        (176, 176, 18),
        (9, 9, 2),  # never fewer than 2
    ],
)
def test_mauve_buckets_are_mauve_texts_auto(p_samples, q_samples, buckets):
    rng = np.random.default_rng(1)
    result = mauve_from_features(
        rng.normal(size=(p_samples, 4)), rng.normal(size=(q_samples, 4)), MauveSettings()
    )
    assert result.buckets == buckets


def test_mauve_on_embedded_sentence_features(caplog):
    court = [f"The applicant number {i} was born in {1950 + i} and lives in town {i % 7}." for i in range(20)]
    clinic = [f"Patient {i} was admitted with chest pain and given {i} mg of aspirin." for i in range(20)]
    settings = MauveSettings()
    with caplog.at_level("INFO", logger="plainsight.progress"):
        features = featurize(court, settings, desc="court")
    assert features.shape == (20, 384)
    # every batch of the embedder's forward passes counted, 16 texts and then 4
    assert caplog.records[-1].getMessage().startswith("court: 20/20 texts (100%), ")
    assert mauve_score(court, court, settings)[0].mauve == pytest.approx(1.0, abs=1e-9)
    shifted, interval = mauve_score(court, clinic, settings)
    assert shifted.mauve < 0.5 and shifted.p_samples == shifted.q_samples == 20 and shifted.buckets == 2
    assert (shifted.device, shifted.dtype) == ("cpu", "float32")
    assert all(math.isnan(bound) for bound in interval)  # no resamples asked for


def test_mauve_interval_resamples_the_pairs():
    rng = np.random.default_rng(3)
    p = rng.normal(size=(60, 4))
    settings = MauveSettings()
    # every resample of a set paired with itself is the same set twice: MAUVE 1 each time
    assert mauve_interval(p, p, settings, 5, 1) == pytest.approx((1.0, 1.0), abs=1e-9)
    low, high = mauve_interval(p, p + 3.0, settings, 5, 1)
    assert 0 <= low <= high < 0.1
    near = rng.normal(size=(60, 4)) + 0.3
    estimate = mauve_from_features(p, near, settings).mauve
    low, high = mauve_interval(p, near, settings, 20, 1)
    assert low < high and low - 0.05 <= estimate <= high + 0.05
    assert mauve_interval(p, near, settings, 20, 1) == (low, high)  # seeded
    assert all(math.isnan(b) for b in mauve_interval(p, near, settings, 0, 1))
    with pytest.raises(ValueError, match="pairs expected"):
        mauve_interval(p, near[:50], settings, 5, 1)


def test_mauve_on_a_hugging_face_model_last_hidden_state(tiny_model_dir, caplog):
    settings = MauveSettings(featurizer=str(tiny_model_dir), max_tokens=32)
    texts = ["The Court met.", "The applicant, Mr Polat, complained under Article 6 of the Convention."]
    with caplog.at_level("INFO", logger="plainsight.progress"):
        features = featurize(texts, settings)
    assert caplog.records[-1].getMessage().startswith("features: 2/2 texts (100%), ")  # the default desc
    assert features.shape == (2, 32)  # the tiny Llama's hidden size
    alone = featurize(texts[1:], settings)
    np.testing.assert_allclose(features[1], alone[0], rtol=1e-4, atol=1e-5)  # padding does not change it
    half = featurize(texts, replace(settings, dtype=torch.bfloat16))
    assert half.dtype == np.float32
    np.testing.assert_allclose(half, features, rtol=0.05, atol=0.05)


def test_mauve_targets_are_test_segments_fixed_across_runs():
    docs = pd.DataFrame(
        {
            "doc_id": ["a", "a", "b", "b", "c", "c"],
            "segment": [0, 1, 0, 1, 0, 1],
            "split": ["test", "test", "train", "train", "test", "test"],
        }
    )
    assert mauve_targets(docs, None) == [("a", 0), ("a", 1), ("c", 0), ("c", 1)]
    drawn = mauve_targets(docs, 2)
    assert (
        len(drawn) == 2
        and drawn == mauve_targets(docs, 2)
        and set(drawn) < {("a", 0), ("a", 1), ("c", 0), ("c", 1)}
    )
    with pytest.raises(ValueError, match="no test split"):
        mauve_targets(docs[docs["split"] == "train"], None)


def test_utility_table_reads_each_setting_and_shows_the_base_model(tmp_path):
    import json

    specs = load_table_specs(RESOURCES / "paper_tables.yaml")
    spec = specs["tables"]["table4"]
    paths = []
    for setting, offset in (("known", 0.0), ("unknown", 1.0)):
        for seed, perplexity in ((1, 10.0), (2, 12.0)):
            path = tmp_path / f"{setting}_{seed}.json"
            path.write_text(
                json.dumps(
                    {
                        "method": "icl",
                        "seed": seed,
                        "setting": setting,
                        "perplexity": perplexity + offset,
                        "mauve": 0.5 + offset / 10,
                    }
                )
            )
            paths.append(path)
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"method": BASE_MODEL_METHOD, "perplexity": 20.0}))
    rows = summary_rows([*paths, base], ["known", "unknown"])
    assert set(rows["segment"]) == {AVERAGED_SEGMENT} and len(rows) == 6
    methods = {k: v for k, v in specs["methods"].items() if k in ("icl", BASE_MODEL_METHOD)}
    table = build_table(spec, rows, methods)
    icl = table.set_index("Method").loc["ICL"]
    assert icl["Perplexity (known)"] == 11.0 and icl["Perplexity (unknown)"] == 12.0
    assert icl["MAUVE (unknown)"] == pytest.approx(0.6)
    base_row = table.set_index("Method").loc[specs["methods"][BASE_MODEL_METHOD]]
    assert base_row["Perplexity (known)"] == base_row["Perplexity (unknown)"] == 20.0
    assert math.isnan(base_row["MAUVE (known)"])
    versus = versus_paper(table, spec, methods).set_index("Method")
    assert versus.loc["ICL", "Perplexity (unknown) paper"] == 13.5
    assert versus.loc["ICL", "Perplexity (unknown) ours"] == 12.0


def test_the_utility_record_gives_the_run_once_and_prefixes_mauve_keys():
    perplexity = {"method": "icl", "seed": 1, "setting": "known", "perplexity": 12.5, "device": "cpu"}
    mauve = {"mauve": 0.8, "buckets": 2, "device": "cpu"}
    assert utility_record("icl", 1, "known", perplexity, mauve) == {
        "method": "icl",
        "seed": 1,
        "setting": "known",
        "perplexity": 12.5,
        "device": "cpu",
        "mauve": 0.8,
        "mauve_buckets": 2,
        "mauve_device": "cpu",
    }


def test_the_utility_job_of_a_corpus_without_labels_says_why_instead_of_stopping(monkeypatch):
    """Rule utility_measures, which every release bundle reads: no labels, no downstream scores, the rest
    measured."""
    monkeypatch.setattr(
        utility_measures_module,
        "featurize",
        lambda texts, _: np.random.default_rng(0).normal(size=(len(texts), 4)),
    )
    docs = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d"],
            "segment": 0,
            "split": ["train", "train", "test", "test"],
            "text": ["one two three", "four five six", "seven eight", "nine ten"],
            "labels": [[]] * 4,
            "group": None,
        }
    )
    codes = pd.DataFrame({"split": ["train"], "entities": [[{"type": "PERSON", "value": "Tomas Berg"}]]})
    corpus, _, _ = corpus_frames("icl")
    rows = utility_measures_module.utility_measures(
        docs,
        codes,
        {("icl", 1): corpus},
        RunKey("plain", "known", "direct"),
        DownstreamSettings(),
        FeatureSettings("minilm"),
        None,
    )
    assert rows["method"].tolist() == ["real", "icl"] and rows["macro_f1"].isna().all()
    assert set(rows[NOT_MEASURED]) == {"no labels: no document has a `label`"}
    assert rows["texts"].tolist() == [2, 3]  # the real sample and the corpus are measured all the same
