"""Format-preserving surrogates: the real value's shape kept, seeded, never a real value."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pandas as pd
import pytest

from plainsight.codes.control_code import entities_to_records, format_code
from plainsight.codes.fictional import FictionalPools, RealCodeValues
from plainsight.codes.surrogates import SurrogateLists, fictional_codes, shaped_entities, shaped_value

REPO = Path(__file__).resolve().parents[1]
LISTS = REPO / "resources/surrogate_lists.yaml"
POOLS = REPO / "resources/fictional_pools.yaml"


@pytest.fixture(scope="module")
def lists() -> SurrogateLists:
    return SurrogateLists.from_yaml(LISTS)


SHAPES = [
    ("CODE", "40593/02", r"[1-9]\d{4}/\d{2}"),
    ("CODE", "AB-1234-x", r"AB-[1-9]\d{3}-[a-z]"),
    ("CODE", "7AB-1234", r"[1-9][A-Z]{2}-[1-9]\d{3}"),
    ("CODE", "no. 12345/06", r"no\. [1-9]\d{4}/\d{2}"),
    (
        "DATETIME",
        "3 May 2001",
        r"\d{1,2} (January|February|March|April|May|June|July|August|September|October|November|December)"
        r" \d{4}",
    ),
    ("DATETIME", "03 May 2001", r"\d{2} [A-Z][a-z]+ \d{4}"),
    ("DATETIME", "May 3, 2001", r"[A-Z][a-z]+ \d{1,2}, \d{4}"),
    ("DATETIME", "2001-05-03", r"\d{4}-\d{2}-\d{2}"),
    ("DATETIME", "03.05.2001", r"\d{2}\.\d{2}\.\d{4}"),
    ("DATETIME", "May 2001", r"[A-Z][a-z]+ \d{4}"),
    ("DATETIME", "2001", r"\d{4}"),
    ("PERSON", "Mr Cengiz Polat", r"Mr [A-Z][a-z]+ [A-Z][a-z]+"),
    ("PERSON", "Anna Maria Berg", r"[A-Z][a-z]+ [A-Z][a-z]+ [A-Z][a-z]+"),
    ("PERSON", "Dr J. Holst-Christensen", r"Dr [A-Z]\. [A-Z][a-z]+-[A-Z][a-z]+"),
    ("PERSON", "Polat", r"[A-Z][a-z]+"),
    ("DEM", "45-year-old", r"[1-9]\d-year-old"),
    ("QUANTITY", "EUR 12,500", r"EUR [1-9]\d,\d{3}"),
    ("LOC", "12 Hill Road", r"[1-9]\d [A-Z][a-z]+ [A-Z][a-z]+"),
    ("ORG", "Leeds City Council", r"[A-Z][a-z]+ City Council"),
]


@pytest.mark.parametrize("entity_type, real, shape", SHAPES)
def test_shape_is_kept(lists, entity_type, real, shape):
    for seed in range(20):
        value = shaped_value(entity_type, real, lists, random.Random(seed))
        assert re.fullmatch(shape, value), (real, value)


def test_a_gendered_title_keeps_given_names_of_its_gender(lists):
    names = lists.lists["PERSON"]["given_names"]
    for title, gender in (("Mr", "male"), ("Mrs", "female"), ("Ms", "female")):
        given = {
            shaped_value("PERSON", f"{title} Cengiz Polat", lists, random.Random(seed)).split()[1]
            for seed in range(40)
        }
        assert given <= set(names[gender]) and len(given) > 10
    untitled = {
        shaped_value("PERSON", "Cengiz Polat", lists, random.Random(seed)).split()[0] for seed in range(60)
    }
    assert untitled & set(names["female"]) and untitled & set(names["male"])


def test_a_country_stays_a_country_and_a_city_a_city(lists):
    countries = set(lists.lists["LOC"]["countries"])
    cities = set(lists.lists["LOC"]["cities"])
    for seed in range(20):
        assert shaped_value("LOC", "Turkey", lists, random.Random(seed)) in countries
        assert shaped_value("LOC", "Ankara", lists, random.Random(seed)) in cities


def test_dates_are_valid_days(lists):
    for seed in range(200):
        value = shaped_value("DATETIME", "2001-05-03", lists, random.Random(seed))
        pd.Timestamp(value)  # raises on 31 February


def test_unknown_shapes_fall_back_to_the_pools(lists):
    pools = FictionalPools.from_yaml(POOLS)
    assert shaped_value("DATETIME", "last winter", lists, random.Random(0)) is None
    entities = shaped_entities([("DATETIME", "last winter"), ("MISC", "x")], pools, lists, random.Random(0))
    assert [t for t, _ in entities] == ["DATETIME"] and re.fullmatch(
        r"\d{2} [A-Z][a-z]+ \d{4}", entities[0][1]
    )


def real_corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    entities = [
        ("PERSON", "Mr Teodor Lindqvist"),
        ("PERSON", "Anna Berg"),
        ("CODE", "40593/02"),
        ("LOC", "Norway"),
        ("DATETIME", "3 May 2001"),
        ("ORG", "Bramley City Council"),
    ]
    codes = pd.DataFrame(
        [
            {
                "doc_id": f"d{i}",
                "segment": 0,
                "split": "train",
                "code": format_code(entities),
                "entities": entities_to_records(entities),
            }
            for i in range(30)
        ]
    )
    spans = pd.DataFrame(
        [
            {"doc_id": "d0", "segment": 0, "text": v, "entity_type": t, "identifier_type": "DIRECT"}
            for t, v in entities
        ]
    )
    return codes, spans


def test_deterministic_and_never_a_real_value():
    codes, spans = real_corpus()
    first = fictional_codes(codes, spans, POOLS, 1, "format_preserving", LISTS)
    again = fictional_codes(codes, spans, POOLS, 1, "format_preserving", LISTS)
    other = fictional_codes(codes, spans, POOLS, 2, "format_preserving", LISTS)
    assert first["code"].tolist() == again["code"].tolist() != other["code"].tolist()
    real = RealCodeValues(spans["text"], spans.loc[spans["entity_type"] == "PERSON", "text"])
    values = [record["value"] for records in first["entities"] for record in records]
    assert len(values) == 30 * 6
    assert not [value for value in values if real.looks_real(value)]
    # the real values are in the lists: Teodor, Lindqvist, Norway and Bramley are never drawn
    assert not [v for v in values if re.search(r"Teodor|Lindqvist|Norway|Bramley|40593/0", v)]


def test_paper_default_is_unchanged():
    codes, spans = real_corpus()
    pools = FictionalPools.for_corpus(POOLS, spans, codes)
    from plainsight.codes.fictional import fictional_codes_table, pool_drawer

    expected = fictional_codes_table(codes, pool_drawer(pools), 1)
    pd.testing.assert_frame_equal(fictional_codes(codes, spans, POOLS, 1), expected)


def test_near_variants_as_the_leak_metrics_count_them():
    real = RealCodeValues(["40593/02", "14 square metres", "Hasslund"])
    assert real.looks_real("40593/03") and real.looks_real("14 square metres") and real.looks_real("Haslund")
    assert not real.looks_real("94 square metres") and not real.looks_real("71526/02")
    assert not real.looks_real("Hansen")
