"""The held-out control of the leak measures, on hand-made corpora with known answers."""

from __future__ import annotations

import random

import pandas as pd

from plainsight.evaluation.held_out import (
    COMMON,
    SOURCE_SPECIFIC,
    control_keys,
    in_context_control,
    measure_hits,
    paired_value_counts,
    trained_control,
    trained_value_counts,
    value_classes,
)
from plainsight.evaluation.real_segments import RealValues, Source, word_ngrams

A, B, C, D, H = ("a", 1), ("b", 1), ("c", 1), ("d", 1), ("h", 1)
TEXTS = {
    A: "Mr Henrik Hasslund lodged the application with the European Court in Strasbourg.",
    B: "Ms Ida Olsson appeared before the European Court on 3 May 2001.",
    C: "The applicant Jonas Berg was born in Aarhus and lives in Odense today.",
    D: "The court in Aalborg heard Mr Karl Dam about the flat in Odense.",
    H: "Mrs Lene Holm complained to the European Court about Odense police.",
}


def real(verbatim_ngram: int = 5) -> RealValues:
    values = {
        A: ["Mr Henrik Hasslund", "European Court"],
        B: ["Ms Ida Olsson", "European Court", "3 May 2001"],
        C: ["Jonas Berg", "Aarhus", "Odense"],
        D: ["Mr Karl Dam", "Aalborg", "Odense"],
        H: ["Mrs Lene Holm", "European Court", "Odense"],
    }
    persons = {
        key: [v for v in vs if v.split()[-1] in {"Hasslund", "Olsson", "Berg", "Dam", "Holm"}]
        for key, vs in values.items()
    }
    types = {
        A: frozenset({"PERSON", "ORG"}),
        B: frozenset({"PERSON", "ORG", "DATETIME"}),
        C: frozenset({"PERSON", "LOC"}),
        D: frozenset({"PERSON", "LOC"}),
        H: frozenset({"PERSON", "ORG", "LOC"}),
    }
    return RealValues(values, persons, values, types, TEXTS, verbatim_ngram, 4)


def test_a_value_in_every_document_is_common_and_a_copied_unique_one_is_source_specific():
    values = ["European Court", "Mr Henrik Hasslund"]
    assert value_classes(values, [A], real()) == [COMMON, SOURCE_SPECIFIC]


def test_the_control_draws_unshown_segments_with_the_context_types():
    drawn = control_keys([C], [A, B, C, D], real(), random.Random(1))
    assert drawn == [D]  # the only other segment with C's types; C itself was shown
    assert control_keys([A, B], [A, B], real(), random.Random(1)) == []  # the pool ran out


def test_the_control_draw_is_seeded():
    first = [control_keys([A], [A, B, C, D], real(), random.Random(seed)) for seed in range(20)]
    again = [control_keys([A], [A, B, C, D], real(), random.Random(seed)) for seed in range(20)]
    assert first == again and all(drawn and drawn[0] != A for drawn in first)


def test_hits_per_measure():
    text = (
        "Mr Hasslund wrote from Strasbourg; Henrik Hasslund lodged the application with the European Court."
    )
    hits = measure_hits(text, Source.of([A], real()), real())
    assert hits == {
        "exact": True,  # "European Court"
        "partial": True,  # "Hasslund"
        "near": True,
        "any_identifier": True,
        "verbatim": True,  # "lodged the application with the" (5 words) is A's
        "unit_linkage": False,  # no value that singles out one case: "European Court" is three cases'
        "code_part": False,  # no code value
    }
    assert measure_hits(text, Source.of([C], real()), real()) == dict.fromkeys(hits, False)


def test_in_context_control_pairs_each_generation_with_unshown_segments():
    corpus = pd.DataFrame(
        {
            "generation_id": [0, 1],
            "text": ["Jonas Berg moved from Aarhus.", "Nothing of anyone here, only the European Court."],
        }
    )
    table = in_context_control(corpus, [[C], [A]], [A, B, C, D], real(), seed=3)
    assert table.loc[0, "control_doc_ids"] == ["d"]  # C's types: only D
    assert table.loc[0, "any_identifier_leak"] and not table.loc[0, "control_any_identifier"]
    assert table.loc[0, "leaked_identifier_values"] == ["Jonas Berg", "Aarhus"]
    assert table.loc[0, "leaked_value_classes"] == [SOURCE_SPECIFIC, SOURCE_SPECIFIC]
    # "European Court" is in A's values and in every control candidate's text: a phantom
    assert table.loc[1, "leaked_value_classes"] == [COMMON] and not table.loc[1, "source_specific_leak"]
    counts = paired_value_counts(
        pd.concat(
            [
                table,
                pd.DataFrame(
                    {"leaked": [True, True], "partial_leak": [True, False], "near_leak": [True, True]}
                ),
            ],
            axis=1,
        )
    )
    assert counts["any_identifier"]["member_hits"] == 2 and counts["any_identifier"]["members"] == 2
    assert counts["any_identifier"]["member_only"] + counts["any_identifier"]["control_only"] <= 2


def test_trained_value_counts_compare_fine_tuning_only_values_with_held_out_only_values():
    generations = ["Henrik Hasslund met Ida Olsson in Odense.", "Mrs Lene Holm was not there."]
    counts = trained_value_counts(generations, [A, B, C], [H], real())
    # only in the fine-tuning segments: Mr Henrik Hasslund, Ms Ida Olsson, 3 May 2001, Jonas Berg, Aarhus
    # ("European Court" and "Odense" are in the held-out H too); the corpus writes none of them exactly
    assert counts["any_identifier"]["members"] == 5 and counts["any_identifier"]["member_hits"] == 0
    # held-out only: "Mrs Lene Holm": found
    assert (counts["any_identifier"]["control_hits"], counts["any_identifier"]["controls"]) == (1, 1)
    # partial: name words only in training (Henrik, Hasslund, Olsson, Jonas, Berg) of which 3 appear
    assert (counts["partial"]["member_hits"], counts["partial"]["members"]) == (3, 5)
    assert counts["verbatim"]["members"] == 3 and counts["verbatim"]["member_hits"] == 0


def test_trained_value_counts_keep_each_sides_counts_per_document():
    generations = ["Henrik Hasslund met Ida Olsson in Odense.", "Mrs Lene Holm was not there."]
    counts = trained_value_counts(generations, [A, B, C], [H], real())
    # [held, total] per document in doc_id order: a holds Mr Henrik Hasslund, b Ms Ida Olsson and
    # 3 May 2001, c Jonas Berg and Aarhus; the held-out h its Mrs Lene Holm, which the corpus writes
    assert counts["any_identifier"]["member_documents"] == [[0, 1], [0, 2], [0, 2]]
    assert counts["any_identifier"]["control_documents"] == [[1, 1]]
    # name words: a's Henrik and Hasslund, b's Olsson (Ida is too short), c's Jonas and Berg
    assert counts["partial"]["member_documents"] == [[2, 2], [1, 1], [0, 2]]
    # verbatim counts segments, each in its own document
    assert counts["verbatim"]["member_documents"] == [[0, 1]] * 3
    for measure in counts.values():  # the documents partition the items the totals count
        for side, held, total in (
            ("member", "member_hits", "members"),
            ("control", "control_hits", "controls"),
        ):
            documents = measure[f"{side}_documents"]
            assert [sum(d[0] for d in documents), sum(d[1] for d in documents)] == [
                measure[held],
                measure[total],
            ]


def test_a_value_two_documents_hold_counts_for_the_first_in_sorted_order():
    shared = real()
    values = {**shared.values, D: [*shared.values[D], "Aarhus"]}
    shared = RealValues(values, shared.persons, values, shared.types, TEXTS, 5, 4)
    counts = trained_value_counts(["They met in Aarhus."], [D, C], [H], shared)
    # Aarhus is c's and d's: it counts, held, for c; d keeps Mr Karl Dam and Aalborg; Jonas Berg is c's
    assert counts["any_identifier"]["member_documents"] == [[1, 2], [0, 2]]
    assert (counts["any_identifier"]["member_hits"], counts["any_identifier"]["members"]) == (1, 4)


def test_trained_control_classes_against_held_out_segments():
    corpus = pd.DataFrame({"text": ["Ms Ida Olsson at the European Court in Odense."]})
    table = trained_control(corpus, [A, B, C], real())
    classes = dict(zip(table.loc[0, "leaked_identifier_values"], table.loc[0, "leaked_value_classes"]))
    assert classes == {"Ms Ida Olsson": SOURCE_SPECIFIC, "European Court": COMMON, "Odense": COMMON}
    assert table.loc[0, "control_exact"] is None


def test_word_ngrams_fold_case_and_punctuation():
    assert word_ngrams("The Court, the court.", 2) == {("the", "court"), ("court", "the")}


def test_another_segment_of_a_shown_document_is_the_same_case():
    second = ("a", 2)  # the same case as A: its names are A's, not independent text
    texts = {**TEXTS, second: "Mr Henrik Hasslund appealed to the High Court."}
    shared = real()
    shared = RealValues(
        {**shared.values, second: ["Mr Henrik Hasslund"]},
        shared.persons,
        {**shared.any_values, second: ["Mr Henrik Hasslund"]},
        {**shared.types, second: shared.types[A]},
        texts,
        5,
        4,
    )
    assert value_classes(["Mr Henrik Hasslund"], [A], shared) == [SOURCE_SPECIFIC]
    assert all(key[0] != "a" for key in control_keys([A], [A, second, B, C, D], shared, random.Random(2)))


def test_another_note_of_a_shown_patient_is_never_a_control():
    # A and B are one patient's two notes: a control drawn from B would be the shown person again
    shared = real()
    shared = RealValues(
        shared.values, shared.persons, shared.any_values, shared.types, TEXTS, 5, 4, units={A: "p1", B: "p1"}
    )
    drawn = [control_keys([A], [A, B, C, D, H], shared, random.Random(seed)) for seed in range(20)]
    assert all(keys and keys[0] not in (A, B) for keys in drawn)
