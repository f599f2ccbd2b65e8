"""Control-code adherence and the diversity and distribution measures, on known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from plainsight.evaluation.adherence import code_adherence, corpus_adherence, found_types
from plainsight.evaluation.diversity import (
    corpus_distinct_n,
    frechet_distance,
    length_distance,
    real_vocabulary_share,
    self_bleu,
    type_distance,
)

CODE = [("PERSON", "Alex Baker"), ("LOC", "Seattle"), ("CODE", "40593/04"), ("ORG", "Google")]


# --- adherence ----------------------------------------------------------------------------------


def test_a_text_holding_all_its_fictional_values_adheres_fully():
    text = "Mr Alex Baker, of Seattle, lodged application no. 40593/04 against Google."
    assert code_adherence(text, CODE) == {
        "adherence_exact": 1.0,
        "adherence_near": 1.0,
        "adherence_types": 1.0,
    }


def test_a_text_without_its_values_adheres_not_at_all():
    assert code_adherence("The court held a hearing.", CODE) == {
        "adherence_exact": 0.0,
        "adherence_near": 0.0,
        "adherence_types": 0.0,
    }


def test_near_variants_count_only_as_near():
    # "Alex Bakker" is one edit from "Alex Baker"; "40593/02" one digit from the code
    text = "Mr Alex Bakker filed application no. 40593/02 in Seattle."
    result = code_adherence(text, CODE)
    assert result["adherence_exact"] == pytest.approx(1 / 4)
    assert result["adherence_near"] == pytest.approx(3 / 4)
    assert result["adherence_types"] == pytest.approx(3 / 4)


def test_types_count_once_each():
    code = [("PERSON", "Alex Baker"), ("PERSON", "Nina Carter"), ("LOC", "Seattle")]
    result = code_adherence("Alex Baker spoke.", code)
    assert result["adherence_exact"] == pytest.approx(1 / 3)
    assert result["adherence_types"] == pytest.approx(1 / 2)
    assert found_types("Alex Baker and Nina Carter spoke.", code) == ["PERSON", "PERSON"]


def test_a_generation_without_a_code_has_no_adherence():
    corpus = pd.DataFrame(
        {
            "text": ["Alex Baker", "Alex Baker"],
            "fictional_code": ["", "PERSON: Alex Baker"],
            "fictional_entities": [[], [{"type": "PERSON", "value": "Alex Baker"}]],
        }
    )
    table = corpus_adherence(corpus)
    assert table.iloc[0].isna().all()
    assert table.iloc[1].tolist() == [1.0, 1.0, 1.0]


# --- diversity ----------------------------------------------------------------------------------


def test_self_bleu_of_identical_texts_is_one():
    text = "The applicant was detained in the police station for four days without a lawyer."
    assert self_bleu([text] * 5) == pytest.approx(1.0)


def test_self_bleu_of_unrelated_texts_is_near_zero():
    texts = [
        "alpha beta gamma delta epsilon zeta",
        "one two three four five six",
        "red green blue cyan pink grey",
    ]
    assert self_bleu(texts) < 0.05
    assert math.isnan(self_bleu(["only one text"]))


def test_corpus_distinct_n_hand_computed():
    # bigrams: (a b) (b a) (a b) | (c d): 3 distinct of 4
    assert corpus_distinct_n(["a b a b", "c d"], 2) == pytest.approx(3 / 4)
    assert corpus_distinct_n(["a a a", "a"], 1) == pytest.approx(1 / 4)
    assert math.isnan(corpus_distinct_n(["a"], 2))


def test_length_and_vocabulary_against_the_real_texts():
    real = ["a b c", "a b c d e"]
    assert length_distance(real, real) == 0.0
    assert length_distance(["a"] * 3, ["a b c d e f"] * 3) == 1.0
    assert real_vocabulary_share(["a b z"], real) == pytest.approx(2 / 3)


def test_type_distance():
    assert type_distance(["PERSON", "LOC"], ["LOC", "PERSON", "PERSON", "LOC"]) == pytest.approx(0.0)
    assert type_distance(["PERSON"], ["LOC"]) == pytest.approx(1.0)


def test_fid_of_a_set_with_itself_is_zero_and_grows_with_a_shift():
    features = np.random.default_rng(0).normal(size=(12, 384))  # fewer samples than dimensions, as MAUVE's
    assert frechet_distance(features, features) == pytest.approx(0.0, abs=1e-6)
    shifted = frechet_distance(features, features + 1.0)
    assert shifted == pytest.approx(384.0, rel=1e-6)  # |mu1 - mu2|^2 of a shift by 1 in 384 dimensions


def test_fid_hand_computed_on_one_dimensional_gaussians():
    first = np.array([[0.0], [2.0]])  # mean 1, variance 2
    second = np.array([[1.0], [5.0]])  # mean 3, variance 8
    # (1-3)^2 + 2 + 8 - 2 sqrt(16) = 4 + 10 - 8 = 6
    assert frechet_distance(first, second) == pytest.approx(6.0)
