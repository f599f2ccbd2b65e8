"""Corpus quality flags with known answers: an empty text, a text that is its code twice, a loop, a
document."""

from __future__ import annotations

import math

import pytest

from plainsight.evaluation.quality import (
    DocumentCriteria,
    code_copy_share,
    distinct_n,
    document_quality,
    repeated_ngram_share,
)

CODE = "PERSON: Ms Casey Johnson, Prof Morgan Hayes\nCODE: AJWIL/PU"
DOCUMENT = (
    "The applicant, Ms Casey Johnson, was born in 1961 and lives in Tokyo. She lodged her application with "
    "the Court on 3 May 2004, complaining that the length of the civil proceedings against her employer "
    "had been unreasonable. The Government contested that argument and submitted that the applicant "
    "herself had contributed to the delays by requesting several adjournments."
)


def test_empty_text_is_no_document():
    quality = document_quality("", DocumentCriteria())
    assert quality["words"] == 0 and quality["is_document"] is False
    assert math.isnan(quality["distinct2"]) and quality["repeated_4gram_share"] == 0.0
    assert quality["code_copy_share"] == 0.0


def test_a_text_that_is_its_code_twice_is_no_document():
    text = f"{CODE}\n{CODE}\n" * 3  # 48 words, all on code lines
    quality = document_quality(text, DocumentCriteria(min_words=10))
    assert quality["code_copy_share"] == 1.0 and quality["is_document"] is False
    assert quality["repeated_4gram_share"] > 0.5


def test_a_normal_document_is_one():
    quality = document_quality(DOCUMENT, DocumentCriteria())
    assert quality["words"] == len(DOCUMENT.split()) == 58
    assert quality["code_copy_share"] == 0.0 and quality["repeated_4gram_share"] == 0.0
    assert quality["is_document"] is True


def test_a_short_text_is_no_document_below_the_word_limit():
    assert document_quality(DOCUMENT, DocumentCriteria(min_words=59))["is_document"] is False
    assert document_quality(DOCUMENT, DocumentCriteria(min_words=58))["is_document"] is True


def test_hand_computed_shares():
    # bigrams: a b, b a, a b, b c -> 3 distinct of 4
    assert distinct_n("A b a B c", 2) == pytest.approx(3 / 4)
    # 4-grams of "x y z w x y z w": xyzw, yzwx, zwxy, wxyz, xyzw -> 1 repeat of 5
    assert repeated_ngram_share("x y z w x y z w", 4) == pytest.approx(1 / 5)
    # non-space characters: 10 on the code line "PERSON: Ann", 8 on "Ann left." -> 10 / 18
    assert code_copy_share("PERSON: Ann\nAnn left.") == pytest.approx(10 / 18)
    # a type name inside prose is not a code line
    assert code_copy_share("He said PERSON: no.") == 0.0


def test_criteria_from_config():
    criteria = DocumentCriteria.from_config(
        {"min_words": 30, "max_code_copy_share": 0.4, "max_repeated_4gram_share": 0.3}
    )
    assert criteria == DocumentCriteria(30, 0.4, 0.3)
