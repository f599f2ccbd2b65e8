"""Leak matching, ROUGE, and PIPP/ELP in both method families, on hand-built corpora with known answers."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest
from rouge_score.rouge_scorer import RougeScorer

from plainsight.evaluation.intervals import wilson_interval
from plainsight.evaluation.privacy import (
    AVERAGED_SEGMENT,
    GENERATION_COLUMNS,
    SUMMARY_COLUMNS,
    context_private_values,
    ft_privacy_metrics,
    gold_values_by_segment,
    icl_privacy_metrics,
    pooled_elp,
    pooled_interval,
    real_values,
    segment_type_sets,
    summarise,
)
from plainsight.evaluation.quality import DocumentCriteria
from plainsight.evaluation.rouge import lcs_length, max_rouge, rouge, rouge_text
from plainsight.matching import leaked_values, name_words, partial_leak, value_pattern

# --- matching ----------------------------------------------------------------------------------


def measured(docs, spans, idset, min_letters=4):
    """The real segments as the leak metrics match them (verbatim runs of 5 words)."""
    return real_values(docs, spans, idset, 5, min_letters)


@pytest.mark.parametrize("text", ["POLAT was heard.", "polat was heard.", "Mr Polat was heard."])
def test_case_variants_match(text):
    assert leaked_values(text, ["Polat"]) == ["Polat"]


@pytest.mark.parametrize(
    "value, text",
    [
        ("Anna", "Annabel came."),
        ("Polat", "Polatli is a town."),
        ("Polat", "Ypolat"),
        ("40593/04", "no. 140593/04"),
        ("40593/04", "no. 40593/041"),
    ],
)
def test_value_inside_a_longer_word_does_not_count(value, text):
    assert leaked_values(text, [value]) == []


@pytest.mark.parametrize("text", ["(Polat)", "Polat.", "Polat, then", "'Polat'", "-Polat-"])
def test_punctuation_around_a_value_counts(text):
    assert leaked_values(text, ["Polat"]) == ["Polat"]


@pytest.mark.parametrize(
    "value, text",
    [
        ("[**Hospital 18**]", "Admitted to [**Hospital 18**] on day one."),
        ("$87,500", "He claimed $87,500 in damages."),
        ("40593/04", "application no. 40593/04 against"),
    ],
)
def test_values_with_non_word_edges_match(value, text):
    assert leaked_values(text, [value]) == [value]


def test_values_with_non_word_edges_are_still_whole_words():
    # "$87,500" followed by a digit is a different number; "[**Hospital 18**]" then a letter is too.
    assert leaked_values("He claimed $87,5001.", ["$87,500"]) == []
    assert leaked_values("x[**Hospital 18**]y", ["[**Hospital 18**]"]) == []


def test_whitespace_inside_a_value_matches_any_whitespace_run():
    text = "The applicant, Mr Henrik\nHasslund, and Ms  Nina\tHolst."
    assert leaked_values(text, ["Mr Henrik Hasslund", "Ms Nina Holst"]) == [
        "Mr Henrik Hasslund",
        "Ms Nina Holst",
    ]


def test_values_are_normalised_deduplicated_and_empty_ones_ignored():
    values = ["Henrik\nHasslund", "Henrik Hasslund", "  ", "", "Berg"]
    assert leaked_values("Henrik Hasslund and Berg", values) == ["Henrik Hasslund", "Berg"]


def test_value_pattern_is_compiled_once_and_rejects_empty_values():
    assert value_pattern("Polat") is value_pattern("Polat")
    with pytest.raises(ValueError):
        value_pattern("   ")


def test_partial_leak_counts_a_surname_alone():
    assert partial_leak("The applicant Hasslund appealed.", ["Mr Henrik Hasslund"])
    assert partial_leak("HOLST appealed.", ["Ms Nina Holst-Christensen"])


def test_partial_leak_ignores_honorifics_and_short_words():
    # "Mr", "Judge" and "Miss" are titles; "Ole" has 3 letters, below min_letters=4.
    assert not partial_leak(
        "Mr Smith met Judge Brown and Miss Grey.", ["Mr Ole Berg", "Judge Ann Lee", "Miss Eva Hoy"]
    )
    assert not partial_leak("Ole was there.", ["Mr Ole Berg"], min_letters=4)
    assert partial_leak("Ole was there.", ["Mr Ole Berg"], min_letters=3)
    assert name_words(["Mr Henrik Hasslund", "Dr. Ole Berg", "Prof Anna Holst-Christensen"]) == [
        "Henrik",
        "Hasslund",
        "Berg",
        "Anna",
        "Holst",
        "Christensen",
    ]


def test_partial_leak_needs_whole_words():
    assert not partial_leak("Bergen is a city.", ["Mr Ole Berg"])


# --- ROUGE -------------------------------------------------------------------------------------


def test_rouge_identical_and_disjoint_texts():
    assert rouge("the applicant lodged a complaint", "the applicant lodged a complaint") == (1.0, 1.0)
    assert rouge("the cat", "dog ran") == (0.0, 0.0)


def test_rouge_hand_computed():
    # Bigrams {the cat, cat sat} vs {the cat, cat ran}: 1 of 2 shared, P = R = F = 0.5.
    # Longest common subsequence "the cat": P = R = 2/3, F = 2/3.
    assert rouge("the cat sat", "the cat ran") == pytest.approx((0.5, 2 / 3))


def test_max_rouge_maximises_each_score_on_its_own():
    # vs "a b": bigrams {ab} of {ab, bc, cd}: P = 1/3, R = 1, F = 0.5; LCS 2: P = 1/2, R = 1, F = 2/3.
    # vs "a x b x c x d": no shared bigram, F = 0; LCS 4: P = 1, R = 4/7, F = 8/11.
    references = [rouge_text("a b"), rouge_text("a x b x c x d")]
    assert max_rouge(rouge_text("a b c d"), references) == pytest.approx((0.5, 8 / 11))
    with pytest.raises(ValueError):
        max_rouge(rouge_text("a b"), [])


def rouge_pairs() -> list[tuple[str, str]]:
    """Edge cases, then word salad from a small vocabulary: many repeats stress the LCS."""
    rng = random.Random(7)
    vocabulary = ["the", "court", "applicant", "complained", "running", "runs", "of", "a", "b"]
    salad = [
        (
            " ".join(rng.choices(vocabulary, k=rng.randint(0, 40))),
            " ".join(rng.choices(vocabulary, k=rng.randint(0, 40))),
        )
        for _ in range(200)
    ]
    long = (" ".join(rng.choices(vocabulary, k=300)), " ".join(rng.choices(vocabulary, k=250)))
    return [
        ("", ""),
        ("", "a b"),
        ("a", "a"),
        ("a b", ""),
        ("Running, runs!", "runs ran running"),
        long,
        *salad,
    ]


def test_rouge_equals_rouge_score():
    scorer = RougeScorer(["rouge2", "rougeL"], use_stemmer=True)
    for prediction, reference in rouge_pairs():
        expected = scorer.score(reference, prediction)
        assert rouge(prediction, reference) == pytest.approx(
            (expected["rouge2"].fmeasure, expected["rougeL"].fmeasure)
        ), (prediction, reference)


@pytest.mark.parametrize(
    "prediction, reference, length",
    [
        ("", "", 0),
        ("a b", "", 0),
        ("a", "a", 1),
        ("a b c d", "a x b x c x d", 4),  # a b c d, in order, with x between
        ("a b c", "c b a", 1),  # reversed: any one token
        ("a b a b a", "b a b", 3),  # repeats: b a b
        ("the cat sat on the mat", "the mat sat on the cat", 4),  # the sat on the
    ],
)
def test_lcs_length_hand_computed(prediction, reference, length):
    assert lcs_length(rouge_text(prediction), rouge_text(reference)) == length


def test_max_rouge_over_many_references_equals_rouge_score_pair_by_pair():
    scorer = RougeScorer(["rouge2", "rougeL"], use_stemmer=True)
    pairs = rouge_pairs()
    prediction, references = (
        pairs[5][0],
        [reference for _, reference in pairs],
    )  # the long text, every reference
    scores = [scorer.score(reference, prediction) for reference in references]
    assert max_rouge(rouge_text(prediction), [rouge_text(r) for r in references]) == pytest.approx(
        (max(s["rouge2"].fmeasure for s in scores), max(s["rougeL"].fmeasure for s in scores))
    )
    assert max_rouge(rouge_text(""), [rouge_text("a b"), rouge_text("")]) == (0.0, 0.0)


# --- a tiny dataset ----------------------------------------------------------------------------

TEXTS = {
    ("A", 0): "Mr Henrik Hasslund lodged application no. 40593/04 in Copenhagen.",
    ("B", 0): "Ms Nina Holst was born on 15 October 2004.",
    ("C", 1): "Mr Ole Berg complained to the court.",
    ("D", 1): "The Government contested the claim.",
}
SPANS = [  # (doc_id, segment, value, entity type, identifier type)
    ("A", 0, "Mr Henrik Hasslund", "PERSON", "DIRECT"),
    ("A", 0, "40593/04", "CODE", "DIRECT"),
    ("A", 0, "Copenhagen", "LOC", "QUASI"),
    ("A", 0, "Mr Henrik\nHasslund", "PERSON", "DIRECT"),  # a second mention, split over two lines
    ("B", 0, "Ms Nina Holst", "PERSON", "DIRECT"),
    ("B", 0, "15 October 2004", "DATETIME", "QUASI"),
    ("C", 1, "Mr Ole Berg", "PERSON", "DIRECT"),
    ("C", 1, "the court", "MISC", "DIRECT"),  # private, though ignored when matching types
]


@pytest.fixture
def docs() -> pd.DataFrame:
    return pd.DataFrame(
        [{"doc_id": d, "split": "train", "segment": s, "text": t} for (d, s), t in TEXTS.items()]
    )


@pytest.fixture
def spans() -> pd.DataFrame:
    # Offsets only order the mentions here; metrics never use them.
    return pd.DataFrame(
        [
            {
                "doc_id": doc_id,
                "segment": segment,
                "start": n,
                "end": n + len(value),
                "text": value,
                "entity_type": entity_type,
                "identifier_type": identifier_type,
                "entity_id": f"e{n}",
                "mention_id": f"m{n}",
                "raw_label": None,
            }
            for n, (doc_id, segment, value, entity_type, identifier_type) in enumerate(SPANS)
        ]
    )


def generation(
    generation_id: int,
    segment: int,
    text: str,
    context: list[tuple[str, int]] = (),
    types: list[str] = (),
    method: str = "icl",
    seed: int = 1,
) -> dict:
    return {
        "generation_id": generation_id,
        "method": method,
        "seed": seed,
        "segment": segment,
        "text": text,
        "context_doc_ids": [d for d, _ in context],
        "context_segments": [s for _, s in context],
        "fictional_code": "",
        "fictional_entities": [{"type": t, "value": f"fake {t}"} for t in types],
    }


def test_gold_values_by_segment_deduplicates_and_selects_the_identifier_set(spans):
    direct = gold_values_by_segment(spans, "direct")
    assert direct[("A", 0)] == ["Mr Henrik Hasslund", "40593/04"]
    assert ("D", 1) not in direct
    assert gold_values_by_segment(spans, "quasi") == {("A", 0): ["Copenhagen"], ("B", 0): ["15 October 2004"]}
    assert gold_values_by_segment(spans, "both", {"PERSON"})[("B", 0)] == ["Ms Nina Holst"]


def test_segment_type_sets_leave_out_misc(spans):
    types = segment_type_sets(spans, "direct")
    assert types[("A", 0)] == {"PERSON", "CODE"}
    assert types[("C", 1)] == {"PERSON"}


def test_context_private_values_are_the_union_of_the_context_segments(spans):
    row = generation(1, 0, "", [("A", 0), ("B", 0), ("A", 0)])
    assert context_private_values(row, gold_values_by_segment(spans, "direct")) == [
        "Mr Henrik Hasslund",
        "40593/04",
        "Ms Nina Holst",
    ]
    with pytest.raises(ValueError, match="context"):
        context_private_values({**row, "context_segments": [0]}, {})


# --- in-context learning -----------------------------------------------------------------------


def icl_corpus() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # context values {Mr Henrik Hasslund, 40593/04, Ms Nina Holst}: 2 leaked -> 2/3; partial leak.
            generation(1, 0, "Mr Henrik Hasslund lodged application no. 40593/04.", [("A", 0), ("B", 0)]),
            # {Mr Henrik Hasslund, 40593/04}: surname alone is no exact leak -> 0/2; partial leak.
            generation(2, 0, "The applicant Hasslund lives in Copenhagen.", [("A", 0)]),
            # {Mr Ole Berg, the court}: 0/2; "Judge" and "Smith" are not words of the name.
            generation(3, 1, "Judge Smith ruled.", [("C", 1)]),
            # no private values: ELP undefined, not a leak.
            generation(4, 1, "The Government contested the claim.", [("D", 1)]),
            # {Mr Ole Berg, the court}: 1/2; partial leak too.
            generation(5, 1, "mr ole berg appealed.", [("C", 1)]),
        ]
    )


def test_icl_per_generation(docs, spans):
    per_generation = icl_privacy_metrics(icl_corpus(), measured(docs, spans, "direct"))
    assert list(per_generation.columns) == list(GENERATION_COLUMNS)
    assert per_generation["n_private_values"].tolist() == [3, 2, 2, 0, 2]
    assert per_generation["n_leaked"].tolist() == [2, 0, 0, 0, 1]
    assert per_generation["leaked_values"][0] == ["Mr Henrik Hasslund", "40593/04"]
    assert per_generation["leaked"].tolist() == [True, False, False, False, True]
    assert per_generation["elp"].tolist() == pytest.approx([2 / 3, 0, 0, math.nan, 1 / 2], nan_ok=True)
    assert per_generation["partial_leak"].tolist() == [True, True, False, False, True]
    # generation 4 copies its only context segment.
    assert (per_generation["rouge2"][3], per_generation["rougeL"][3]) == (1.0, 1.0)


def test_icl_near_leaks_include_exact_partial_and_variants(docs, spans):
    per_generation = icl_privacy_metrics(icl_corpus(), measured(docs, spans, "direct"))
    # 1, 2 and 5 leak exactly or partly, so near too; 3 and 4 hold nothing like a private value.
    assert per_generation["near_leak"].tolist() == [True, True, False, False, True]
    assert per_generation["near_leaked_values"][1] == ["Hasslund"]
    variants = pd.DataFrame(
        [
            # the name and the code as variants; "Henrik" alone is a partial leak too
            generation(1, 0, "Mr Henrik Hasslud lodged application no. 40593/02.", [("A", 0)]),
            # "Nina" is a word of Ms Nina Holst, and the whole name is two edits away (11 letters)
            generation(2, 0, "Ms Nina Holts met Mr Hendrik.", [("B", 0)]),
            # Hasslund is not a name of this generation's context
            generation(3, 0, "The applicant, Mr Hasslund's brother, wrote.", [("B", 0)]),
        ]
    )
    near = icl_privacy_metrics(variants, measured(docs, spans, "direct"))
    assert near["leaked"].tolist() == [False, False, False]
    assert near["partial_leak"].tolist() == [True, True, False]
    assert near["near_leak"].tolist() == [True, True, False]
    assert near["near_leaked_values"][1] == ["Ms Nina Holst", "Nina"]
    assert near["near_leaked_values"][0] == ["Mr Henrik Hasslund", "40593/04", "Henrik", "Hasslund"]
    summary = summarise(near, "in_context")
    assert summary["near_leak"].iloc[-1] == pytest.approx(100 * 2 / 3)


def test_icl_rouge_is_the_best_context_and_the_last_one_is_kept(docs, spans):
    """The paper's protocol: one reference per context document, the maximum of each score."""
    per_generation = icl_privacy_metrics(icl_corpus(), measured(docs, spans, "direct"))
    text = icl_corpus()["text"][0]
    against_a, against_b = rouge(text, TEXTS[("A", 0)]), rouge(text, TEXTS[("B", 0)])
    assert against_a[1] > against_b[1]  # the text copies A, the first context
    assert (per_generation["rouge2"][0], per_generation["rougeL"][0]) == pytest.approx(
        (max(against_a[0], against_b[0]), max(against_a[1], against_b[1]))
    )
    assert (per_generation["rouge2_last"][0], per_generation["rougeL_last"][0]) == pytest.approx(against_b)
    joined = rouge(text, TEXTS[("A", 0)] + "\n\n" + TEXTS[("B", 0)])
    assert (
        per_generation["rougeL"][0] > joined[1]
    )  # one reference per document scores higher than both joined


def test_icl_identifier_set_both(docs, spans):
    per_generation = icl_privacy_metrics(icl_corpus(), measured(docs, spans, "both"))
    # generation 1 now also has Copenhagen and 15 October 2004 as private values: 2 of 5 leaked.
    assert per_generation["n_private_values"][0] == 5
    assert per_generation["elp"][0] == pytest.approx(2 / 5)
    # generation 2 leaks Copenhagen (quasi).
    assert per_generation["leaked_values"][1] == ["Copenhagen"]


def test_icl_summary(docs, spans):
    summary = summarise(icl_privacy_metrics(icl_corpus(), measured(docs, spans, "direct")), "in_context")
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    assert summary["segment"].tolist() == [0, 1, AVERAGED_SEGMENT]
    assert summary["n_generations"].tolist() == [2, 3, 5]
    # segment 0: PIPP 1/2 = 50 %; ELP mean(2/3, 0) = 33.33 %; partial 2/2 = 100 %.
    # segment 1: PIPP 1/3 = 33.33 %; ELP mean(0, 1/2) = 25 % (generation 4 has no values); partial 1/3.
    assert summary["pipp"].tolist() == pytest.approx([50.0, 100 / 3, (50.0 + 100 / 3) / 2])
    assert summary["elp"].tolist() == pytest.approx([100 / 3, 25.0, (100 / 3 + 25.0) / 2])
    assert summary["partial_leak"].tolist() == pytest.approx([100.0, 100 / 3, (100.0 + 100 / 3) / 2])
    segment_rows = summary[summary["segment"] != AVERAGED_SEGMENT]
    assert summary["rouge2"].iloc[-1] == pytest.approx(segment_rows["rouge2"].mean())
    assert summary["rougeL"].iloc[-1] == pytest.approx(segment_rows["rougeL"].mean())


def test_summary_has_rows_per_method_and_seed(docs, spans):
    corpus = pd.concat([icl_corpus(), icl_corpus().assign(seed=2), icl_corpus().assign(method="icl_pe")])
    summary = summarise(icl_privacy_metrics(corpus, measured(docs, spans, "direct")), "in_context")
    assert list(zip(summary["method"], summary["seed"], summary["segment"])) == [
        ("icl", 1, 0),
        ("icl", 1, 1),
        ("icl", 1, -1),
        ("icl", 2, 0),
        ("icl", 2, 1),
        ("icl", 2, -1),
        ("icl_pe", 1, 0),
        ("icl_pe", 1, 1),
        ("icl_pe", 1, -1),
    ]
    with pytest.raises(ValueError, match="family"):
        summarise(summary, "known")


# --- fine-tuning -------------------------------------------------------------------------------

TRAIN_KEYS = [("A", 0), ("B", 0), ("C", 1), ("D", 1)]


def ft_corpus() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # segment-0 private set {Mr Henrik Hasslund, 40593/04, Ms Nina Holst}; leaks Ms Nina Holst.
            # Its code has PERSON only, so ROUGE is against B (PERSON) and not A (PERSON, CODE),
            # although the text copies A.
            generation(
                1,
                0,
                TEXTS[("A", 0)].replace("Mr Henrik Hasslund", "Ms Nina Holst").replace("40593", "12345"),
                types=["PERSON"],
                method="ft",
            ),
            # leaks 40593/04 and Ms Nina Holst; PERSON + CODE (+ MISC, ignored) -> compared with A only.
            generation(
                2, 0, "Case 40593/04 of Ms Nina Holst.", types=["PERSON", "CODE", "MISC"], method="ft"
            ),
            # no leak; DATETIME matches no segment's types -> best over A and B.
            generation(3, 0, "Nothing private here, born on 1 May 1990.", types=["DATETIME"], method="ft"),
            # segment-1 private set {Mr Ole Berg, the court}: 1 leaked.
            generation(4, 1, "Mr Ole Berg complained.", types=["PERSON"], method="ft"),
        ]
    )


def test_ft_per_generation(docs, spans):
    """Every value of the whole fine-tuning set is private for every generation:
    {Mr Henrik Hasslund, 40593/04, Ms Nina Holst, Mr Ole Berg, the court}."""
    per_generation = ft_privacy_metrics(ft_corpus(), measured(docs, spans, "direct"), TRAIN_KEYS)
    assert per_generation["n_private_values"].tolist() == [5, 5, 5, 5]
    assert per_generation["leaked_values"].tolist() == [
        ["Ms Nina Holst"],
        ["40593/04", "Ms Nina Holst"],
        [],
        ["Mr Ole Berg"],
    ]
    assert per_generation["elp"].tolist() == pytest.approx([1 / 5, 2 / 5, 0, 1 / 5])
    assert per_generation["partial_leak"].tolist() == [True, True, False, True]
    assert per_generation["rouge2_last"].isna().all()  # a trained method has no contexts


def test_ft_leaks_count_the_other_paragraph_range_too(docs, spans):
    corpus = pd.DataFrame([generation(1, 1, "Ms Nina Holst appealed.", types=["PERSON"], method="ft")])
    per_generation = ft_privacy_metrics(corpus, measured(docs, spans, "direct"), TRAIN_KEYS)
    assert per_generation["leaked_values"][0] == ["Ms Nina Holst"]  # a value of paragraph range 0


def best_rouge(text: str, keys: list[tuple[str, int]]) -> list[float]:
    return [max(rouge(text, TEXTS[key])[i] for key in keys) for i in (0, 1)]


def test_ft_rouge_is_the_best_over_segments_with_the_same_types(docs, spans):
    """Fine-tuning segments by type set (direct identifiers, MISC left out): A {PERSON, CODE},
    B {PERSON}, C {PERSON}, D none."""
    corpus = ft_corpus()
    per_generation = ft_privacy_metrics(corpus, measured(docs, spans, "direct"), TRAIN_KEYS)
    first, second, third, fourth = corpus["text"]
    assert [per_generation["rouge2"][0], per_generation["rougeL"][0]] == pytest.approx(
        best_rouge(first, [("B", 0), ("C", 1)])
    )
    assert per_generation["rouge2"][0] < rouge(first, TEXTS[("A", 0)])[0]  # copies A, whose types differ
    assert (per_generation["rouge2"][1], per_generation["rougeL"][1]) == pytest.approx(
        rouge(second, TEXTS[("A", 0)])
    )
    assert [per_generation["rouge2"][2], per_generation["rougeL"][2]] == pytest.approx(
        best_rouge(third, TRAIN_KEYS)
    )
    assert [per_generation["rouge2"][3], per_generation["rougeL"][3]] == pytest.approx(
        best_rouge(fourth, [("B", 0), ("C", 1)])
    )


def test_ft_summary(docs, spans):
    summary = summarise(
        ft_privacy_metrics(ft_corpus(), measured(docs, spans, "direct"), TRAIN_KEYS), "trained"
    )
    # segment 0: PIPP 2/3; distinct leaked {Ms Nina Holst, 40593/04} of the set's 5 values = 40 %.
    # segment 1: PIPP 1/1 = 100 %; {Mr Ole Berg} of 5 = 20 %.
    # the run: PIPP the mean of the segment rows; ELP {Ms Nina Holst, 40593/04, Mr Ole Berg} of 5 = 60 %.
    assert summary["segment"].tolist() == [0, 1, AVERAGED_SEGMENT]
    assert summary["n_generations"].tolist() == [3, 1, 4]
    assert summary["pipp"].tolist() == pytest.approx([200 / 3, 100.0, (200 / 3 + 100.0) / 2])
    assert summary["elp"].tolist() == pytest.approx([40.0, 20.0, 60.0])


def test_a_run_is_measured_by_its_method_familys_definitions(docs, spans):
    from plainsight.evaluation.privacy import run_privacy_metrics

    metrics = {
        "partial_leak_min_letters": 4,
        "verbatim_ngram": 5,
        "linkage_quasi_min": 2,
        "code_runs": {"entity_types": ["CODE"], "min_digits": 4},
        "document": {"min_words": 40, "max_code_copy_share": 0.5, "max_repeated_4gram_share": 0.5},
    }
    criteria = DocumentCriteria.from_config(metrics["document"])
    paper_columns = list(GENERATION_COLUMNS)
    codes = pd.DataFrame(
        {
            "doc_id": [d for d, _ in TRAIN_KEYS] + ["D"],
            "segment": [s for _, s in TRAIN_KEYS] + [1],
            "split": ["train"] * len(TRAIN_KEYS) + ["test"],
        }
    )
    per_generation, summary, record = run_privacy_metrics(
        "ft_mask", ft_corpus(), docs, spans, codes, "direct", metrics, seed=1
    )
    pd.testing.assert_frame_equal(
        per_generation[paper_columns],
        ft_privacy_metrics(ft_corpus(), measured(docs, spans, "direct"), sorted(TRAIN_KEYS), criteria),
    )
    pd.testing.assert_frame_equal(summary, summarise(per_generation[paper_columns], "trained"))
    assert record["design"] == "unpaired" and per_generation["control_exact"].isna().all()
    assert record["measures"]["verbatim"]["members"] == len(TRAIN_KEYS)
    per_generation, _, record = run_privacy_metrics(
        "icl_pe", icl_corpus(), docs, spans, codes, "direct", metrics, seed=1
    )
    pd.testing.assert_frame_equal(
        per_generation[paper_columns],
        icl_privacy_metrics(icl_corpus(), measured(docs, spans, "direct"), criteria),
    )
    assert record["design"] == "paired"
    assert record["measures"]["exact"]["member_hits"] == int(per_generation["leaked"].sum())


def test_ft_needs_fine_tuning_segments(docs, spans):
    with pytest.raises(ValueError, match="no fine-tuning segments"):
        ft_privacy_metrics(ft_corpus(), measured(docs, spans, "direct"), [])


def test_summaries_carry_the_document_rate(docs, spans):
    per_generation = icl_privacy_metrics(
        icl_corpus(), measured(docs, spans, "direct"), criteria=DocumentCriteria(min_words=5)
    )
    # words: 7, 6, 3, 5, 4 -> documents: generations 1, 2 (segment 0) and 4 (segment 1)
    assert per_generation["words"].tolist() == [7, 6, 3, 5, 4]
    assert per_generation["is_document"].tolist() == [True, True, False, True, False]
    summary = summarise(per_generation, "in_context")
    assert summary["documents"].tolist() == pytest.approx([100.0, 100 / 3, (100.0 + 100 / 3) / 2])
    assert summary["mean_words"].tolist() == pytest.approx([6.5, 4.0, 5.25])


def test_pooled_intervals_over_the_generations_of_every_seed(docs, spans):
    corpus = pd.concat([icl_corpus(), icl_corpus().assign(seed=2)], ignore_index=True)
    per_generation = icl_privacy_metrics(corpus, measured(docs, spans, "direct"))
    # 4 leaks in 10 generations
    low, high = pooled_interval(per_generation, "pipp", "in_context")
    assert (low, high) == pytest.approx(tuple(100 * v for v in wilson_interval(4, 10)))
    # every seed has the same generations: the ELP bootstrap brackets the pooled mean (2/3, 0, 0, 1/2)
    low, high = pooled_interval(per_generation, "elp", "in_context")
    pooled = pooled_elp(per_generation, "in_context")
    assert pooled == pytest.approx(100 * (2 / 3 + 1 / 2) / 4) and low <= pooled <= high
    with pytest.raises(ValueError, match="no pooled interval"):
        pooled_interval(per_generation, "n_leaked", "in_context")


def test_pooled_elp_of_trained_runs_is_the_mean_of_each_run(docs, spans):
    corpus = pd.concat([ft_corpus(), ft_corpus().assign(seed=2).iloc[:1]], ignore_index=True)
    per_generation = ft_privacy_metrics(corpus, measured(docs, spans, "direct"), TRAIN_KEYS)
    # seed 1 leaks 3 of the 5 values, seed 2 (only its first generation) 1 of 5
    assert pooled_elp(per_generation, "trained") == pytest.approx((60.0 + 20.0) / 2)


def test_per_generation_adherence_to_the_fictional_code(docs, spans):
    shown = {
        **generation(1, 0, "Ms Ada Moss lodged application no. 12345/99 in Oslo.", [("A", 0)]),
        "fictional_code": "PERSON: Ms Ada Moss\nCODE: 12345/99\nLOC: Bergen",
        "fictional_entities": [
            {"type": "PERSON", "value": "Ms Ada Moss"},
            {"type": "CODE", "value": "12345/99"},
            {"type": "LOC", "value": "Bergen"},
        ],
    }
    hidden = generation(2, 0, "Nothing here.", [("A", 0)])  # no code shown: no adherence
    per_generation = icl_privacy_metrics(pd.DataFrame([shown, hidden]), measured(docs, spans, "direct"))
    assert per_generation.loc[
        0, ["adherence_exact", "adherence_near", "adherence_types"]
    ].tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3])
    assert per_generation.loc[1, ["adherence_exact", "adherence_near", "adherence_types"]].isna().all()
