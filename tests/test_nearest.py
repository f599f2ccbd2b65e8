"""Nearest real training segments of each generation: word n-grams, cosine ranking, the output table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plainsight.audit import nearest
from plainsight.audit.nearest import (
    NEAREST_COLUMNS,
    NEAREST_RANKS,
    embed,
    longest_shared_ngram,
    nearest_rows,
    top_cosines,
    training_segments,
    words,
)
from plainsight.evaluation.features import FeatureSettings


def test_words_are_case_folded_word_runs():
    assert words("The Applicant, Mr. Polat (born 1970)!") == [
        "the",
        "applicant",
        "mr",
        "polat",
        "born",
        "1970",
    ]


def test_longest_shared_ngram_of_a_hand_made_pair():
    first = words("On 3 May 2001 the applicant, Mr Polat, lodged an appeal with the Supreme Court in Ankara.")
    second = words(
        "The court noted that the applicant Mr Polat lodged an appeal with the Supreme Court, twice."
    )
    # "the applicant mr polat lodged an appeal with the supreme court": 11 words
    assert longest_shared_ngram(first, second) == 11
    assert longest_shared_ngram(second, first) == 11


def test_longest_shared_ngram_edge_cases():
    assert longest_shared_ngram([], ["a"]) == 0
    assert longest_shared_ngram(["a", "b"], ["c", "d"]) == 0
    assert longest_shared_ngram(["x", "a", "b", "y"], ["a", "b"]) == 2
    # a frequent word is not junked: 300 repeats of "the" share a 300-word run
    assert longest_shared_ngram(["the"] * 300, ["the"] * 300) == 300


def test_top_cosines_ranks_by_angle_not_length():
    keys = np.array([[1.0, 0.0], [10.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    order, cosines = top_cosines(np.array([[2.0, 0.0], [0.0, 3.0]]), keys, 3)
    assert order.tolist() == [[0, 1, 3], [2, 3, 1]]
    assert cosines[0, 0] == pytest.approx(1.0)
    assert cosines[0, 2] == pytest.approx(1 / np.sqrt(2))
    assert cosines[1, 1] == pytest.approx(1 / np.sqrt(2))


def test_top_cosines_keeps_the_lower_index_on_ties():
    order, _ = top_cosines(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0]]), 2)
    assert order.tolist() == [[1, 2]]


VOCABULARY = ["applicant", "court", "ankara", "prison", "lawyer", "hospital", "patient", "appeal"]


def bag_of_words(texts, settings, batch_size=16):
    """A stand-in embedder with known cosines: counts of the vocabulary words."""
    return np.array([[words(text).count(word) for word in VOCABULARY] for text in texts], dtype=np.float32)


def tiny_corpus():
    docs = pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d2", "d3", "d4", "d5"],
            "split": ["train", "train", "train", "train", "test", "dev"],
            "segment": [0, 1, 0, 0, 0, 0],
            "text": [
                "The applicant went to court in Ankara with a lawyer.",
                "The applicant stayed in prison.",
                "The patient was admitted to hospital.",
                "The lawyer lodged an appeal with the court.",
                "The applicant went to court in Ankara with a lawyer.",
                "A patient in hospital.",
            ],
            "annotator": "a",
        }
    )
    codes = docs[["doc_id", "segment", "split"]].assign(code="", entities=[[]] * len(docs))
    return docs, codes


def nearest_table(corpus, codes, docs):
    """A corpus's nearest table, built in the steps the released-text audit takes for each corpus."""
    keys, texts = training_segments(codes, docs)
    generations = corpus["text"].tolist()
    settings = FeatureSettings()
    order, cosines = top_cosines(embed(generations, settings), embed(texts, settings), NEAREST_RANKS)
    return nearest_rows(generations, keys, texts, order, cosines)


def test_nearest_rows_rank_training_segments_only(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes = tiny_corpus()
    corpus = pd.DataFrame(
        {
            "text": [
                "Later the applicant went to court in Ankara with a lawyer, again.",
                "The patient in hospital.",
                "",
            ]
        }
    )
    table = nearest_table(corpus, codes, docs)
    assert {name: str(dtype) for name, dtype in table.dtypes.items()} == {
        name: ("string" if dtype == "string" else dtype) for name, dtype in NEAREST_COLUMNS.items()
    }
    assert table["generation"].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert table["rank"].tolist() == [1, 2, 3] * 3
    first = table[table["generation"] == 0]
    assert next(zip(first["doc_id"], first["segment"])) == ("d1", 0)
    assert first["cosine"].iloc[0] == pytest.approx(1.0)
    # "the applicant went to court in ankara with a lawyer": 10 words
    assert first["longest_shared_ngram"].iloc[0] == 10
    second = table[table["generation"] == 1]
    assert (second["doc_id"].iloc[0], second["segment"].iloc[0]) == ("d2", 0)
    assert second["longest_shared_ngram"].iloc[0] == 2  # "the patient"
    assert "d4" not in set(table["doc_id"]) and "d5" not in set(table["doc_id"])  # held-out segments never
    empty = table[table["generation"] == 2]
    assert empty["longest_shared_ngram"].tolist() == [0, 0, 0]
    assert empty["cosine"].tolist() == [0.0, 0.0, 0.0]


def test_nearest_rows_are_deterministic(monkeypatch):
    monkeypatch.setattr(nearest, "sentence_features", bag_of_words)
    docs, codes = tiny_corpus()
    corpus = pd.DataFrame({"text": ["applicant court", "hospital lawyer"]})
    first = nearest_table(corpus, codes, docs)
    pd.testing.assert_frame_equal(first, nearest_table(corpus, codes, docs))


@pytest.mark.embedded
def test_minilm_finds_a_copied_segment_first():
    docs, codes = tiny_corpus()
    corpus = pd.DataFrame(
        {"text": ["The applicant stayed in prison.", "A patient was admitted to the hospital."]}
    )
    table = nearest_table(corpus, codes, docs)
    top = table[table["rank"] == 1]
    assert list(zip(top["doc_id"], top["segment"])) == [("d1", 1), ("d2", 0)]
    assert top["cosine"].iloc[0] == pytest.approx(1.0, abs=1e-4)
    assert (table.groupby("generation")["cosine"].diff().dropna() <= 1e-9).all()  # best first
