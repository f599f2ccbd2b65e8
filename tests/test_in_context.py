"""Planning the in-context generations: contexts, fictional targets, blocked values."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from conftest import FICTIONAL_POOLS, RESOURCES
from plainsight.code_runs import CodeRuns
from plainsight.codes.control_code import (
    build_entities,
    entities_to_records,
    format_code,
    records_to_entities,
)
from plainsight.codes.fictional import Drawer, FictionalPools, pool_drawer
from plainsight.methods.in_context import Blocking, context_pool, fictional_target, plan, target_template

# (doc_id, segment, split, entities); doc "d4" has no identifiers, "x1" is a test document.
SEGMENTS = [
    ("d1", 0, "train", [("PERSON", "Cengiz Polat"), ("LOC", "Ankara"), ("MISC", "Kurdish")]),
    (
        "d2",
        0,
        "train",
        [("PERSON", "Henrik Hasslund"), ("PERSON", "Nina Holst"), ("ORG", "Ministry of Justice")],
    ),
    ("d3", 0, "train", [("PERSON", "Maria Novak"), ("DATETIME", "3 May 2001")]),
    ("d4", 0, "train", []),
    ("x1", 0, "test", [("PERSON", "Olga Petrov")]),
    ("d1", 1, "train", [("CODE", "12345/01")]),
    ("d2", 1, "train", [("LOC", "Prague")]),
    ("d3", 1, "train", [("QUANTITY", "EUR 5,000")]),
]


@pytest.fixture(scope="module")
def draw() -> Drawer:
    return pool_drawer(FictionalPools.from_yaml(FICTIONAL_POOLS))


@pytest.fixture(scope="module")
def spans_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "doc_id": doc_id,
                "segment": segment,
                "text": value,
                "entity_type": entity_type,
                "identifier_type": "DIRECT",
            }
            for doc_id, segment, _, pairs in SEGMENTS
            for entity_type, value in pairs
        ]
    )


@pytest.fixture(scope="module")
def codes() -> pd.DataFrame:
    rows = []
    for doc_id, segment, split, pairs in SEGMENTS:
        entities = build_entities(pairs)
        rows.append((doc_id, segment, split, format_code(entities), entities_to_records(entities)))
    return pd.DataFrame(rows, columns=["doc_id", "segment", "split", "code", "entities"])


@pytest.fixture(scope="module")
def texts() -> dict[tuple[str, int], str]:
    return {(doc_id, segment): f"Text of {doc_id} part {segment}." for doc_id, segment, *_ in SEGMENTS}


def entities_of(codes: pd.DataFrame) -> dict[tuple[str, int], list]:
    return {(r.doc_id, r.segment): records_to_entities(r.entities) for r in codes.itertuples(index=False)}


def test_context_pool_prefers_training_segments_with_codes(codes):
    assert context_pool(codes, 0) == [("d1", 0), ("d2", 0), ("d3", 0)]  # not d4 (empty), not x1 (test)
    without_codes = codes.assign(code="")
    assert context_pool(without_codes, 0) == [("d1", 0), ("d2", 0), ("d3", 0), ("d4", 0)]
    assert context_pool(codes, 0, needed=4) == [("d1", 0), ("d2", 0), ("d3", 0), ("d4", 0)]


def test_methods_share_contexts_generation_by_generation(codes, texts, draw):
    plans = {
        method: plan(method, codes, texts, draw, seed=1, generations_per_segment=4)
        for method in ("baseline", "icl", "icl_pe")
    }
    keys = {method: [p.context_keys for p in planned] for method, planned in plans.items()}
    assert keys["baseline"] == keys["icl"] == keys["icl_pe"]
    assert [p.generation_id for p in plans["icl"]] == list(range(8))
    assert [p.segment for p in plans["icl"]] == [0] * 4 + [1] * 4
    for planned in plans["icl"]:
        assert len(set(planned.context_keys)) == 3
        assert all(segment == planned.segment for _, segment in planned.context_keys)
    # icl and icl_pe show the same prompt; only icl_pe blocks
    assert [p.target_code for p in plans["icl"]] == [p.target_code for p in plans["icl_pe"]]


def test_baseline_shows_documents_without_codes(codes, texts, draw):
    for planned in plan("baseline", codes, texts, draw, seed=1, generations_per_segment=2):
        assert planned.target_code is None and planned.target_entities == [] and planned.blocked_values == ()
        assert [e.code for e in planned.examples] == [None, None, None]
        assert [e.text for e in planned.examples] == [texts[key] for key in planned.context_keys]
        # the real codes are still recorded: the privacy metrics need them
        assert planned.context_codes == tuple(
            format_code(entities_of(codes)[k]) for k in planned.context_keys
        )


def test_icl_shows_real_codes_and_a_fictional_code_of_the_same_types(codes, texts, draw):
    real = entities_of(codes)
    for planned in plan("icl", codes, texts, draw, seed=2, generations_per_segment=3):
        assert [e.code for e in planned.examples] == [format_code(real[k]) for k in planned.context_keys]
        context_types = {t for key in planned.context_keys for t, _ in real[key]} - {"MISC"}
        assert {t for t, _ in planned.target_entities} == context_types
        assert planned.target_code == format_code(planned.target_entities)
        real_values = {v for key in planned.context_keys for _, v in real[key]}
        assert not real_values & {v for _, v in planned.target_entities}
        assert planned.blocked_values == ()


def test_icl_pe_blocks_every_context_value(codes, texts, draw):
    real = entities_of(codes)
    for planned in plan("icl_pe", codes, texts, draw, seed=3, generations_per_segment=3):
        expected = [v for key in planned.context_keys for _, v in real[key]]
        assert list(planned.blocked_values) == expected
    planned = plan("icl_pe", codes, texts, draw, seed=3, generations_per_segment=1)[0]
    assert set(planned.blocked_values) == {
        "Cengiz Polat",
        "Ankara",
        "Kurdish",
        "Henrik Hasslund",
        "Nina Holst",
        "Ministry of Justice",
        "Maria Novak",
        "3 May 2001",
    }


def test_icl_pe_blocks_name_words_and_distinctive_place_and_organisation_words(codes, texts, draw):
    blocking = Blocking("values_and_parts", common_words=frozenset({"ministry", "of", "justice"}))
    planned = plan("icl_pe", codes, texts, draw, seed=3, generations_per_segment=1, blocking=blocking)[0]
    assert set(planned.blocked_values) == {
        "Cengiz Polat",
        "Ankara",
        "Kurdish",
        "Henrik Hasslund",
        "Nina Holst",
        "Ministry of Justice",
        "Maria Novak",
        "3 May 2001",
        # a person's name words; a place's word; no word of the ministry: the corpus uses them all
        "Cengiz",
        "Polat",
        "Henrik",
        "Hasslund",
        "Nina",
        "Holst",
        "Maria",
        "Novak",
    }
    assert "Ankara" in planned.blocked_values and planned.blocked_values.count("Ankara") == 1
    assert (
        plan("icl", codes, texts, draw, seed=3, generations_per_segment=1, blocking=blocking)[
            0
        ].blocked_values
        == ()
    )


def test_blocking_for_a_corpus_learns_its_ordinary_words(codes):
    texts = {
        ("d1", 0): "The Ministry ruled in Ankara. Cengiz Polat appealed.",
        ("d2", 0): "The Ministry of Justice, the Ministry and Henrik Hasslund.",
        ("d3", 0): "The court heard Maria Novak on 3 May 2001.",
    }
    phones = CodeRuns(frozenset({"CODE", "MISC"}), 6)
    blocking = Blocking.for_corpus("values_and_parts", codes, texts, phones)
    assert blocking.code_runs == phones
    assert {"the", "ministry"} <= blocking.common_words  # outside private values in d1 and d2
    assert "ankara" not in blocking.common_words and "polat" not in blocking.common_words
    entities = [[("ORG", "Ministry of Justice"), ("LOC", "Ankara")]]
    assert blocking.blocked(entities) == ("Ministry of Justice", "Ankara", "Justice")
    assert Blocking("values").blocked(entities) == ("Ministry of Justice", "Ankara")
    # the digit runs of the configured code types, of the configured length
    numbers = [[("MISC", "tel. +90 312 555 01 02"), ("CODE", "no. 4059"), ("QUANTITY", "1234567")]]
    assert blocking.digit_runs(numbers) == ("3125550102",)
    assert Blocking("values").digit_runs(numbers) == ()
    with pytest.raises(ValueError, match="blocking"):
        Blocking("everything")


def test_fictional_target_counts_are_rounded_means_per_type(draw):
    contexts = [
        build_entities([("PERSON", "A B"), ("PERSON", "C D"), ("LOC", "Oslo")]),
        build_entities([("PERSON", "E F"), ("MISC", "x")]),
        build_entities([("PERSON", "G H"), ("PERSON", "I J"), ("PERSON", "K L")]),
    ]
    target = fictional_target(contexts, draw, seed=("t", 1))
    counts = {t: sum(1 for e, _ in target if e == t) for t in {e for e, _ in target}}
    assert counts == {"PERSON": 2, "LOC": 1}  # mean(2, 1, 3) = 2; LOC mean over the one code with it; no MISC


def test_target_template_takes_values_in_turn_from_the_contexts():
    contexts = [
        build_entities([("PERSON", "A B"), ("PERSON", "C D"), ("LOC", "Oslo")]),
        build_entities([("PERSON", "E F"), ("MISC", "x")]),
        build_entities([("PERSON", "G H"), ("PERSON", "I J"), ("PERSON", "K L")]),
    ]
    # PERSON: 2 values, the first of each context in turn; LOC: the one; MISC left out
    assert target_template(contexts) == [("PERSON", "A B"), ("PERSON", "E F"), ("LOC", "Oslo")]


def test_format_preserving_targets_take_the_shape_of_the_context_values(codes, texts, spans_frame):
    from plainsight.codes.fictional import RealCodeValues
    from plainsight.codes.surrogates import fictional_drawer

    lists = RESOURCES / "surrogate_lists.yaml"
    draw = fictional_drawer(codes, spans_frame, FICTIONAL_POOLS, "format_preserving", lists)
    real = RealCodeValues(
        spans_frame["text"], spans_frame.loc[spans_frame["entity_type"] == "PERSON", "text"]
    )
    drawn = [
        pair
        for planned in plan("icl", codes, texts, draw, seed=4, generations_per_segment=6)
        for pair in planned.target_entities
    ]
    assert {"CODE", "DATETIME", "PERSON"} <= {entity_type for entity_type, _ in drawn}
    for entity_type, value in drawn:
        assert not real.looks_real(value)
        if entity_type == "CODE":  # the one real code is 12345/01
            assert re.fullmatch(r"\d{5}/\d{2}", value)
        if entity_type == "DATETIME":  # the one real date is 3 May 2001
            assert re.fullmatch(r"\d{1,2} [A-Z][a-z]+ \d{4}", value)


def test_plan_is_deterministic_and_seed_dependent(codes, texts, draw):
    first = plan("icl", codes, texts, draw, seed=5, generations_per_segment=6)
    assert first == plan("icl", codes, texts, draw, seed=5, generations_per_segment=6)
    other = plan("icl", codes, texts, draw, seed=6, generations_per_segment=6)
    assert [p.target_code for p in first] != [p.target_code for p in other]


def test_plan_rejects_an_unknown_method(codes, texts, draw):
    with pytest.raises(ValueError, match="'ft' is not an in-context method"):
        plan("ft", codes, texts, draw, seed=1, generations_per_segment=1)


def test_plan_needs_enough_training_segments(codes, texts, draw):
    with pytest.raises(ValueError, match="segment range 1 has 3 training segments, 4 are needed"):
        plan("icl", codes, texts, draw, seed=1, generations_per_segment=1, context_documents=4)
