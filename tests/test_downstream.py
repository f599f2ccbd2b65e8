"""Train on synthetic, test on real: the task, the classifiers, the scores and their known answers."""

from __future__ import annotations

import logging
import random

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from plainsight.errors import InputError
from plainsight.evaluation.downstream import (
    CHANCE,
    NOT_MEASURED,
    REAL,
    REAL_SAMPLE,
    DownstreamSettings,
    LabelTask,
    RealSplit,
    chance_scores,
    document_resamples,
    downstream_scores,
    equalised_odds_gap,
    exact_match,
    inherited_labels,
    label_task,
    macro_f1,
    matched_labels,
)
from plainsight.evaluation.encoder_settings import EncoderSettings

TOPIC_WORDS = {
    "detention": ["custody", "remand", "arrest", "cell", "prison", "detained"],
    "property": ["land", "expropriation", "house", "compensation", "owner", "plot"],
}
FILLER = ["the", "court", "applicant", "government", "held", "that", "case", "on", "of", "in"]


def topic_text(rng: random.Random, topic: str) -> str:
    words = [rng.choice(TOPIC_WORDS[topic]) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(40)]
    return " ".join(words)


def topic_docs(documents: dict[str, int], seed: int = 0) -> pd.DataFrame:
    """Two-segment documents whose label is their topic, half and half, a group per document parity."""
    rng = random.Random(seed)
    rows = []
    for split, count in documents.items():
        for number in range(count):
            topic = list(TOPIC_WORDS)[number % 2]
            for segment in (0, 1):
                rows.append(
                    {
                        "doc_id": f"{split}{number}",
                        "split": split,
                        "segment": segment,
                        "text": topic_text(rng, topic),
                        "labels": [topic],
                        "group": "A" if number % 4 < 2 else "B",
                    }
                )
    return pd.DataFrame(rows)


SETTINGS = DownstreamSettings(bootstrap_resamples=300)


# --- known answers ------------------------------------------------------------------------------


def test_real_trained_classifier_separates_learnable_topics():
    docs = topic_docs({"train": 40, "test": 60})
    real = downstream_scores(docs, {}, SETTINGS, "topics").set_index("method").loc[REAL]
    assert real["accuracy"] > 0.95 and real["macro_f1"] > 0.95
    assert real["macro_f1_low"] <= real["macro_f1"] <= real["macro_f1_high"]


def test_a_classifier_trained_on_shuffled_labels_is_at_chance():
    docs = topic_docs({"train": 40, "test": 100})
    train = docs[docs["split"] == "train"]

    # The "synthetic" texts are the real training texts, each inheriting the labels of another
    # document: its own for documents 0, 1, 4, 5, ..., its neighbour's (the other topic) for 2, 3,
    # 6, 7, ...; so exactly half of each topic's texts carry the other label and the labels say
    # nothing about the text.
    def source(doc_id: str) -> str:
        number = int(doc_id.removeprefix("train"))
        return f"train{number if number // 2 % 2 == 0 else number ^ 1}"

    corpus = pd.DataFrame(
        {"text": train["text"].to_numpy(), "context_doc_ids": [[source(d)] for d in train["doc_id"]]}
    )
    settings = DownstreamSettings(synthetic_labels="inherited", bootstrap_resamples=300)
    rows = downstream_scores(docs, {("shuffled", 1): corpus}, settings, "topics").set_index("method")
    assert rows.loc[REAL, "accuracy"] > 0.95
    shuffled_row = rows.loc["shuffled"]
    assert 0.35 <= shuffled_row["accuracy"] <= 0.65  # two balanced labels: chance is 0.5
    assert shuffled_row["accuracy_low"] <= 0.5 <= shuffled_row["accuracy_high"]


def test_real_trained_classifier_is_above_chance_on_the_demo_corpus():
    from plainsight.data.ingest import ingest_dataset

    docs, _ = ingest_dataset(
        [f"resources/demo/tab/echr_{split}.json" for split in ("train", "dev", "test")],
        {"format": "tab", "segments": [[1, 6], [6, 12]]},
        "error",
        "resources/mimic_placeholder_types.yaml",
    )
    rows = downstream_scores(docs, {}, SETTINGS, "tab").set_index("method")
    # the floor: a rule that ignores the text, here every label to every text
    assert rows.loc[REAL, "macro_f1_low"] > rows.loc[CHANCE, "macro_f1"]
    assert rows.loc[REAL, "macro_f1"] > 0.6


def test_matched_silver_labels_learn_what_the_texts_say():
    docs = topic_docs({"train": 40, "test": 60})
    fresh = topic_docs({"train": 20}, seed=5)  # unseen texts of the same topics, no labels used
    corpus = pd.DataFrame({"text": fresh["text"], "context_doc_ids": [[] for _ in range(len(fresh))]})
    settings = DownstreamSettings(bootstrap_resamples=300)
    assert settings.synthetic_labels == "silver_matched"
    rows = downstream_scores(docs, {("icl", 1): corpus}, settings, "topics").set_index("method")
    assert rows.loc["icl", "label_source"] == "silver_matched"
    assert rows.loc["icl", "macro_f1"] > 0.9 > 0.6 > rows.loc[CHANCE, "macro_f1"]


def test_matched_labels_give_each_label_its_share_by_rank_even_when_every_score_is_negative():
    scores = np.array([[-3.0, -1.0], [-1.0, -4.0], [-2.0, -2.0], [-5.0, -0.5]])
    # multi-label, shares 0.5 and 0.25: label 0 to its top 2 texts (rows 1, 2), label 1 to row 3
    assert matched_labels(scores, np.array([0.5, 0.25]), True).tolist() == [[0, 0], [1, 0], [1, 0], [0, 1]]
    # single-label, shares 0.5 / 0.5: pairs by score: (3, 1) -0.5, (0, 1) -1, (1, 0) -1, then label 1
    # is full, so row 2 takes label 0
    assert matched_labels(scores, np.array([0.5, 0.5]), False).tolist() == [[0, 1], [1, 0], [1, 0], [0, 1]]
    # a label with a share that rounds to no text still gets one
    assert matched_labels(scores, np.array([0.5, 0.01]), True)[:, 1].sum() == 1


def test_chance_is_the_best_a_rule_that_ignores_the_text_can_do_hand_computed_and_simulated():
    multi = RealSplit(
        ["x"] * 4,
        np.array([[1, 0], [1, 1], [0, 0], [1, 0]]),
        np.array(list("abcd")),
        np.array([None] * 4, dtype=object),
    )
    chance = chance_scores(multi, True)
    # p = 0.75, 0.25 -> every label to every text: F1 2p / (1 + p) = 6/7 and 0.4; the most common
    # label set, {first}, is right on 2 of 4 texts
    assert chance["macro_f1"] == pytest.approx((6 / 7 + 0.4) / 2)
    assert chance["accuracy"] == pytest.approx(0.5)
    assert macro_f1(multi.targets, np.ones_like(multi.targets)) == pytest.approx(chance["macro_f1"])
    rng = np.random.default_rng(0)
    big = np.repeat(multi.targets, 500, axis=0)
    for rates in ([0.5, 0.25], [0.75, 0.25], [0.9, 0.9]):  # text-blind draws: below the floor
        draws = [(rng.random(big.shape) < np.array(rates)).astype(np.int64) for _ in range(50)]
        assert np.mean([macro_f1(big, d) for d in draws]) < chance["macro_f1"] - 0.01
    for label_set in ([0, 0], [0, 1], [1, 1]):
        assert exact_match(multi.targets, np.array([label_set] * 4)) < chance["accuracy"]

    single = RealSplit(
        ["x"] * 4,
        np.array([[1, 0], [1, 0], [0, 1], [1, 0]]),
        np.array(list("abcd")),
        np.array([None] * 4, dtype=object),
    )
    chance = chance_scores(single, False)
    # p = 0.75, 0.25 summing to 1: labels drawn at 0.75 / 0.25 expect F1 2p / 2 = 0.75 and 0.25
    assert chance["macro_f1"] == pytest.approx(0.5)
    assert chance["accuracy"] == pytest.approx(0.75)
    big = np.repeat(single.targets, 500, axis=0)

    def drawn(rates):
        picks = rng.random(len(big)) < rates[1]
        return np.stack([~picks, picks], axis=1).astype(np.int64)

    assert np.mean([macro_f1(big, drawn([0.75, 0.25])) for _ in range(50)]) == pytest.approx(0.5, abs=0.01)
    # uniform draws expect (0.6 + 1/3) / 2, one label to every text (6/7) / 2: both under the floor
    assert np.mean([macro_f1(big, drawn([0.5, 0.5])) for _ in range(50)]) < 0.48
    assert macro_f1(big, np.tile([1, 0], (len(big), 1))) == pytest.approx(3 / 7)


# --- scores -------------------------------------------------------------------------------------


def test_macro_f1_and_accuracy_match_scikit_learn():
    rng = np.random.default_rng(1)
    truth, guess = rng.integers(0, 2, (30, 4)), rng.integers(0, 2, (30, 4))
    guess[:, 3] = 0
    truth[:, 3] = 0  # a label with no true and no predicted positive: 0, as zero_division=0
    assert macro_f1(truth, guess) == pytest.approx(f1_score(truth, guess, average="macro", zero_division=0))
    assert exact_match(truth, guess) == pytest.approx(float((truth == guess).all(axis=1).mean()))


def test_hand_computed_macro_f1():
    truth = np.array([[1, 0], [1, 0], [0, 1]])
    guess = np.array([[1, 0], [0, 1], [0, 1]])
    # label 0: tp 1, fn 1 -> F1 2/3; label 1: tp 1, fp 1 -> 2/3
    assert macro_f1(truth, guess) == pytest.approx(2 / 3)
    assert exact_match(truth, guess) == pytest.approx(2 / 3)


def test_bootstrap_draws_whole_documents_and_is_seeded():
    doc_ids = np.array(["a", "a", "b", "b", "c", "c"])
    first, again = document_resamples(doc_ids, 20, 7), document_resamples(doc_ids, 20, 7)
    assert all((x == y).all() for x, y in zip(first, again))
    for rows in first:
        drawn = doc_ids[rows]
        assert all((drawn[i] == drawn[i + 1]) for i in range(0, len(drawn), 2))


def test_equalised_odds_gap_hand_computed():
    truth = np.array([[1], [1], [0], [0], [1], [1], [0], [0]])
    guess = np.array([[1], [1], [0], [0], [1], [0], [1], [1]])
    groups = np.array(["A"] * 4 + ["B"] * 4, dtype=object)
    # A: TPR 1, FPR 0; B: TPR 0.5, FPR 1 -> gaps 0.5 and 1 -> 1
    assert equalised_odds_gap(truth, guess, groups) == pytest.approx(1.0)
    assert equalised_odds_gap(truth, truth, groups) == 0.0
    assert np.isnan(equalised_odds_gap(truth, guess, np.array([None] * 8, dtype=object)))


# --- the task and rare labels --------------------------------------------------------------------


def test_top_labels_by_training_documents_and_multi_label_detection():
    docs = pd.DataFrame(
        {
            "doc_id": ["1", "2", "3", "4", "5", "6"],
            "split": ["train"] * 4 + ["test"] * 2,
            "segment": 0,
            "text": "x",
            "group": None,
            "labels": [["6", "5"], ["6"], ["3"], ["6", "3"], ["6", "3"], ["3", "6"]],
        }
    )
    settings = DownstreamSettings(top_labels=2, min_documents=1)
    assert label_task(docs, settings, "tab") == LabelTask(("6", "3"), True)


def test_rare_label_stops_naming_dataset_and_label():
    docs = topic_docs({"train": 8, "test": 4})
    # both property documents of the test split become detention cases: property has none left there
    for doc_id in ("test1", "test3"):
        rows = docs.index[docs["doc_id"] == doc_id]
        docs.loc[rows, "labels"] = pd.Series([["detention"]] * len(rows), index=rows)
    settings = DownstreamSettings(on_rare_label="error")
    with pytest.raises(InputError, match=r"dataset topics: label 'property': 0 documents in the test split"):
        label_task(docs, settings, "topics")


def test_rare_label_dropped_with_a_logged_count(caplog):
    docs = topic_docs({"train": 8, "test": 4})
    docs["labels"] = [
        list(labels) + (["rare"] if doc_id == "train0" else [])
        for doc_id, labels in zip(docs["doc_id"], docs["labels"])
    ]
    with caplog.at_level(logging.INFO):
        task = label_task(docs, DownstreamSettings(on_rare_label="drop"), "topics")
    assert "rare" not in task.labels and set(task.labels) == {"detention", "property"}
    assert "label 'rare' dropped: 1 in train, 0 in test" in caplog.text


def test_unknown_option_is_refused():
    with pytest.raises(ValueError, match="synthetic_labels"):
        DownstreamSettings(synthetic_labels="gold")


def test_inherited_labels_follow_the_sample_or_the_context_majority():
    labels_of = {"a": ["6"], "b": ["6", "3"], "c": ["8"]}
    corpus = pd.DataFrame({"context_doc_ids": [["c"], ["a", "b", "c"], ["a", "c", "x"]]})
    assert inherited_labels(corpus, labels_of) == [["8"], ["6"], []]


def test_a_real_sample_as_large_as_the_largest_corpus_is_scored_too():
    docs = topic_docs({"train": 20, "test": 10})
    corpus = pd.DataFrame(
        {"text": docs["text"].head(6), "context_doc_ids": [[d] for d in docs["doc_id"].head(6)]}
    )
    rows = downstream_scores(docs, {("icl", 1): corpus, ("ft", 1): corpus.head(4)}, SETTINGS, "topics")
    assert rows["method"].tolist() == [REAL, CHANCE, REAL_SAMPLE, "icl", "ft"]
    assert rows.set_index("method")["train_texts"].to_dict() == {
        REAL: 40,
        CHANCE: 0,
        REAL_SAMPLE: 6,
        "icl": 6,
        "ft": 4,
    }
    full = downstream_scores(docs, {("icl", 1): docs[docs["split"] == "train"]}, SETTINGS, "topics")
    assert REAL_SAMPLE not in set(full["method"])  # a corpus as large as the real split: no sample row


def test_scores_are_deterministic():
    docs = topic_docs({"train": 10, "test": 10})
    corpus = pd.DataFrame(
        {"text": docs["text"].head(8), "context_doc_ids": [[d] for d in docs["doc_id"].head(8)]}
    )
    first = downstream_scores(docs, {("icl", 1): corpus}, SETTINGS, "topics")
    pd.testing.assert_frame_equal(first, downstream_scores(docs, {("icl", 1): corpus}, SETTINGS, "topics"))


# --- the encoder (paper profile), a few steps of a tiny random one on the CPU ---------------------


@pytest.fixture(scope="module")
def tiny_encoder_dir(tiny_tokenizer, tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=tiny_tokenizer.pad_token_id,
    )
    out = tmp_path_factory.mktemp("tiny_encoder")
    BertForSequenceClassification(config).save_pretrained(out)
    tiny_tokenizer.save_pretrained(out)
    return out


def test_encoder_classifier_trains_and_predicts_on_the_cpu(tiny_encoder_dir):
    docs = topic_docs({"train": 12, "test": 6})
    settings = DownstreamSettings(
        classifier="encoder",
        bootstrap_resamples=50,
        encoder=EncoderSettings(str(tiny_encoder_dir), epochs=2, batch_size=8, max_length=48),
    )
    corpus = pd.DataFrame(
        {"text": docs["text"].head(6), "context_doc_ids": [[d] for d in docs["doc_id"].head(6)]}
    )
    rows = downstream_scores(
        docs, {("ft", 1): corpus}, settings, "topics", {"device": "cpu", "dtype": "float32"}
    )
    assert rows["method"].tolist() == [REAL, CHANCE, REAL_SAMPLE, "ft"]
    assert rows["macro_f1"].between(0, 1).all() and rows["accuracy"].between(0, 1).all()
    again = downstream_scores(
        docs, {("ft", 1): corpus}, settings, "topics", {"device": "cpu", "dtype": "float32"}
    )
    pd.testing.assert_frame_equal(rows, again)  # seeded


# --- where no task runs -------------------------------------------------------------------------


def test_a_corpus_without_labels_gets_unmeasured_rows_saying_why_instead_of_stopping():
    docs = topic_docs({"train": 4, "test": 2}).assign(labels=[[]] * 12)
    corpus = docs[docs["split"] == "train"].head(3)
    rows = downstream_scores(docs, {("icl", 1): corpus}, SETTINGS, "plain")
    assert list(zip(rows["method"], rows["seed"])) == [(REAL, 0), ("icl", 1)]
    assert rows["macro_f1"].isna().all() and rows["accuracy"].isna().all()
    assert set(rows[NOT_MEASURED]) == {"no labels: no document has a `label`"}


def test_one_label_left_of_a_single_label_task_is_not_measured_even_under_on_rare_label_drop():
    docs = topic_docs({"train": 8, "test": 4})
    # property keeps 4 training documents but none in the test split: one label left, two needed
    for doc_id in ("test1", "test3"):
        rows = docs.index[docs["doc_id"] == doc_id]
        docs.loc[rows, "labels"] = pd.Series([["detention"]] * len(rows), index=rows)
    task = label_task(docs, DownstreamSettings(on_rare_label="drop"), "topics")
    assert task == LabelTask(
        ("detention",),
        False,
        "1 label(s) left with at least 2 documents in the training and the test split; a downstream task "
        "needs 2",
    )
    rows = downstream_scores(docs, {}, SETTINGS, "topics")
    assert rows["method"].tolist() == [REAL] and rows["macro_f1"].isna().all()


def test_a_measured_task_has_no_not_measured_column():
    rows = downstream_scores(topic_docs({"train": 8, "test": 4}), {}, SETTINGS, "topics")
    assert NOT_MEASURED not in rows
