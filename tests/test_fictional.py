"""Fictional control codes: real code's types and counts, fake values from the shipped pools."""

from __future__ import annotations

import re
from datetime import datetime

import pandas as pd
import pytest
import yaml

from conftest import FICTIONAL_POOLS, TAB_SAMPLE
from plainsight.codes.control_code import build_entities, codes_table, records_to_entities, type_counts
from plainsight.codes.fictional import (
    FictionalPools,
    RealCodeValues,
    fictional_codes_table,
    fictional_entities,
    pool_drawer,
)
from plainsight.rng import stable_rng

POOL_DATA = yaml.safe_load(FICTIONAL_POOLS.read_text(encoding="utf-8"))
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
FIRST_NAMES = "|".join(POOL_DATA["PERSON"]["first_names"])
LAST_NAMES = "|".join(POOL_DATA["PERSON"]["last_names"])
PERSON_RE = re.compile(rf"^(Mr|Ms|Dr|Prof) ({FIRST_NAMES}) ({LAST_NAMES})$")
FORMATS = {
    "CODE": re.compile(r"^[A-Z0-9]{5}/[A-Z0-9]{2}$"),
    "PERSON": PERSON_RE,
    "DATETIME": re.compile(rf"^\d{{2}} ({MONTHS}) (199\d|20[01]\d|202[0-4])$"),
    "QUANTITY": re.compile(r"^(\d+%|\$\d{1,3}(,\d{3})*)$"),
}
LOC_POOL = {
    v for key in ("cities", "countries", "addresses", "infrastructure") for v in POOL_DATA["LOC"][key]
}
ORG_POOL = set(POOL_DATA["ORG"])

# Real values per segment: (doc_id, segment, split, [(type, value), ...]).
REAL_SEGMENTS = [
    (
        "d1",
        0,
        "train",
        [
            ("PERSON", "Mr Cengiz Polat"),
            ("PERSON", "Mr E. Kanar"),
            ("CODE", "40593/04"),
            ("LOC", "Istanbul"),
            ("DATETIME", "15 October 2004"),
            ("DATETIME", "6 November 2006"),
            ("MISC", "his brother"),
        ],
    ),
    (
        "d1",
        1,
        "train",
        [
            ("ORG", "Istanbul State Security Court"),
            ("ORG", "Court of Cassation"),
            ("DEM", "Turkish"),
            ("QUANTITY", "EUR 3,000"),
            ("QUANTITY", "10%"),
        ],
    ),
    ("d2", 0, "dev", []),
    ("d2", 1, "dev", [("MISC", "the incident")]),
    (
        "d3",
        0,
        "test",
        [
            (t, f"{t} value {n}")
            for t in ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY")
            for n in range(4)
        ],
    ),
]


@pytest.fixture(scope="module")
def pools() -> FictionalPools:
    return FictionalPools.from_yaml(FICTIONAL_POOLS)


def real_codes(segments=REAL_SEGMENTS) -> pd.DataFrame:
    docs = pd.DataFrame([{"doc_id": d, "segment": s, "split": split} for d, s, split, _ in segments])
    detected = pd.DataFrame(
        [
            {"doc_id": d, "segment": s, "start": n, "text": v, "entity_type": t}
            for d, s, _, pairs in segments
            for n, (t, v) in enumerate(pairs)
        ],
        columns=["doc_id", "segment", "start", "text", "entity_type"],
    )
    return codes_table(docs, detected)


def counts_of(records) -> dict[str, int]:
    return type_counts(records_to_entities(records))


def test_table_columns_and_rows(pools):
    real = real_codes()
    fake = fictional_codes_table(real, pool_drawer(pools), seed=7)
    assert list(fake.columns) == ["doc_id", "segment", "split", "seed", "code", "entities"]
    assert (
        fake[["doc_id", "segment", "split"]].values.tolist()
        == real[["doc_id", "segment", "split"]].values.tolist()
    )
    assert set(fake["seed"]) == {7}


def test_same_types_and_counts_without_misc(pools):
    real = real_codes()
    fake = fictional_codes_table(real, pool_drawer(pools), seed=7)
    expected = [
        {"PERSON": 2, "CODE": 1, "LOC": 1, "DATETIME": 2},
        {"ORG": 2, "DEM": 1, "QUANTITY": 2},
        {},
        {},
        {"PERSON": 4, "CODE": 4, "LOC": 4, "ORG": 4, "DEM": 4, "DATETIME": 4, "QUANTITY": 4},
    ]
    assert [counts_of(r) for r in fake["entities"]] == expected
    for real_records, fake_records in zip(real["entities"], fake["entities"]):
        real_counts = counts_of(real_records)
        real_counts.pop("MISC", None)
        assert counts_of(fake_records) == real_counts


def test_segment_with_only_misc_gets_an_empty_code(pools):
    fake = fictional_codes_table(real_codes(), pool_drawer(pools), seed=7)
    assert fake["code"].tolist()[2:4] == ["", ""]


def test_code_text_lists_types_in_fixed_order(pools):
    fake = fictional_codes_table(real_codes(), pool_drawer(pools), seed=7)
    lines = fake["code"].tolist()[4].split("\n")
    assert [line.split(": ")[0] for line in lines] == [
        "PERSON",
        "CODE",
        "LOC",
        "ORG",
        "DEM",
        "DATETIME",
        "QUANTITY",
    ]
    assert fake["code"].tolist()[1].startswith("ORG: ")


def test_no_real_value_reappears(pools):
    fake = fictional_codes_table(real_codes(), pool_drawer(pools), seed=7)
    real_values = {v for _, _, _, pairs in REAL_SEGMENTS for _, v in pairs}
    fake_values = {v for records in fake["entities"] for _, v in records_to_entities(records)}
    assert not real_values & fake_values


def test_values_are_distinct_within_a_code(pools):
    fake = fictional_codes_table(real_codes(), pool_drawer(pools), seed=3)
    for records in fake["entities"]:
        values = [v for _, v in records_to_entities(records)]
        assert len(values) == len(set(values))


def test_same_seed_gives_equal_tables(pools):
    real = real_codes()
    pd.testing.assert_frame_equal(
        fictional_codes_table(real, pool_drawer(pools), seed=11),
        fictional_codes_table(real, pool_drawer(pools), seed=11),
    )


def test_different_seeds_give_different_codes(pools):
    real = real_codes()
    first = fictional_codes_table(real, pool_drawer(pools), seed=11)["code"].tolist()
    second = fictional_codes_table(real, pool_drawer(pools), seed=12)["code"].tolist()
    assert first[0] != second[0]
    assert first[4] != second[4]


def test_segment_code_does_not_depend_on_other_rows(pools):
    whole = fictional_codes_table(real_codes(), pool_drawer(pools), seed=5)
    alone = fictional_codes_table(real_codes([REAL_SEGMENTS[4]]), pool_drawer(pools), seed=5)
    reordered = fictional_codes_table(real_codes(REAL_SEGMENTS[::-1]), pool_drawer(pools), seed=5)
    assert alone["code"].item() == whole["code"].tolist()[4]
    assert reordered["code"].tolist()[::-1] == whole["code"].tolist()


def test_stable_rng_depends_only_on_its_key():
    assert stable_rng(1, "d1", 0).random() == stable_rng(1, "d1", 0).random()
    assert stable_rng(1, "d1", 0).random() != stable_rng(1, "d1", 1).random()


# --- value formats ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def many_values(pools) -> dict[str, list[str]]:
    """Values of every type drawn for 60 segments of 5 values each."""
    counts = dict.fromkeys(("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC"), 5)
    values: dict[str, list[str]] = {}
    for n in range(60):
        for entity_type, value in fictional_entities(counts, pools, stable_rng(0, "doc", n)):
            values.setdefault(entity_type, []).append(value)
    return values


def test_misc_is_never_generated(many_values):
    assert "MISC" not in many_values
    types = ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY")
    assert {t: len(v) for t, v in many_values.items()} == dict.fromkeys(types, 300)


@pytest.mark.parametrize("entity_type", sorted(FORMATS))
def test_value_format(many_values, entity_type):
    for value in many_values[entity_type]:
        assert FORMATS[entity_type].match(value), value


def test_dates_are_real_calendar_dates(many_values):
    for value in many_values["DATETIME"]:
        assert 1990 <= datetime.strptime(value, "%d %B %Y").year <= 2024


def test_quantities_stay_in_their_ranges(many_values):
    percents = [int(v[:-1]) for v in many_values["QUANTITY"] if v.endswith("%")]
    dollars = [int(v[1:].replace(",", "")) for v in many_values["QUANTITY"] if v.startswith("$")]
    assert percents and dollars
    assert all(1 <= p <= 99 for p in percents)
    assert all(1000 <= d <= 250000 and d % 500 == 0 for d in dollars)


def test_dem_values_take_one_of_four_forms(many_values):
    ages = "|".join(str(a) for a in range(18, 91))
    jobs = POOL_DATA["DEM"]["jobs"]
    forms = [
        re.compile(rf"^({ages})-year-old ({'|'.join(jobs)})$"),
        re.compile(rf"^({'|'.join(POOL_DATA['DEM']['heritages'])}) descent$"),
        re.compile(rf"^({'|'.join(j.capitalize() for j in jobs)})$"),
        re.compile(rf"^({ages})-year-old$"),
    ]
    seen = set()
    for value in many_values["DEM"]:
        matching = [n for n, form in enumerate(forms) if form.match(value)]
        assert len(matching) == 1, value
        seen.add(matching[0])
    assert seen == {0, 1, 2, 3}


def test_loc_and_org_values_come_from_the_pools(many_values):
    assert set(many_values["LOC"]) <= LOC_POOL
    assert set(many_values["ORG"]) <= ORG_POOL


def test_fictional_entities_keep_type_order_and_counts(pools):
    entities = fictional_entities({"DATETIME": 1, "PERSON": 2, "MISC": 3}, pools, stable_rng("x"))
    assert [t for t, _ in entities] == ["PERSON", "PERSON", "DATETIME"]


def test_real_code_from_build_entities_feeds_fictional_counts(pools):
    entities = build_entities([("PERSON", "Mr A"), ("PERSON", "Mr A"), ("ORG", "X Ltd")])
    assert type_counts(entities) == {"PERSON": 1, "ORG": 1}
    fake = fictional_entities(type_counts(entities), pools, stable_rng(1))
    assert type_counts(fake) == {"PERSON": 1, "ORG": 1}


# --- fictional values never look like real ones -----------------------------------------------


def drawn_values(pools: FictionalPools, entity_type: str, draws: int = 400) -> list[str]:
    return [
        v for n in range(draws // 5) for _, v in fictional_entities({entity_type: 5}, pools, stable_rng(9, n))
    ]


def test_pool_entries_that_look_like_real_values_are_left_out(pools):
    real = RealCodeValues(
        ["Germany", "the Kennedy Foundation", "Mr Aldo Hayek", "Stanford"], person_values=["Mr Aldo Hayek"]
    )
    filtered = pools.excluding(real)
    assert "Germany" not in filtered.pools["LOC"]["countries"]  # a real value
    assert "Hayes" not in filtered.pools["PERSON"]["last_names"]  # a near variant of a real name word
    assert "Stanford University" not in filtered.pools["ORG"]  # holds a real value
    assert "Kennedy" in filtered.pools["PERSON"]["last_names"]  # an ORG's word is no name word
    assert filtered.pools["LOC"]["cities"] == pools.pools["LOC"]["cities"]  # untouched lists keep their order
    assert not {"Germany"} & set(drawn_values(filtered, "LOC"))


def test_drawn_values_that_hold_a_real_value_are_drawn_again(pools):
    plain = drawn_values(pools, "DATETIME")
    real_date = plain[0]
    filtered = pools.excluding(RealCodeValues([real_date, "2004", "$5,000"]))
    dates = drawn_values(filtered, "DATETIME")
    assert real_date not in dates and not any(d.endswith(" 2004") for d in dates)
    assert any(d.endswith(" 2004") for d in plain)
    assert "$5,000" not in drawn_values(filtered, "QUANTITY", 2000)
    assert "$5,000" in drawn_values(pools, "QUANTITY", 2000)


def test_pools_that_lose_nothing_draw_what_they_drew_before(pools):
    real = real_codes()
    filtered = pools.excluding(RealCodeValues(["Mr Zebulon Quaxley"], ["Mr Zebulon Quaxley"]))
    pd.testing.assert_frame_equal(
        fictional_codes_table(real, pool_drawer(filtered), seed=4),
        fictional_codes_table(real, pool_drawer(pools), seed=4),
    )


@pytest.mark.parametrize(
    "real_names, titled",
    [
        (["Mr Cengiz Polat", "Mrs Satike Dikici", "Ercan Dikici"], True),  # TAB's style: most names titled
        (["Dean Smith", "Garry Porter", "Mr. Barnett"], False),  # one in three titled
    ],
)
def test_fictional_names_carry_a_title_when_most_real_names_do(pools, real_names, titled):
    from plainsight.codes.fictional import titled_share

    filtered = pools.excluding(RealCodeValues(real_names, real_names))
    names = drawn_values(filtered, "PERSON", 200)
    titles = set(pools.pools["PERSON"]["titles"])
    assert all((name.split()[0] in titles) == titled for name in names)
    assert all(len(name.split()) == (3 if titled else 2) for name in names)
    assert titled_share(real_names, ["Mr", "Ms", "Mrs"]) == pytest.approx(2 / 3 if titled else 1 / 3)


def test_a_pool_emptied_by_real_values_is_an_error_naming_it(pools, tmp_path):
    from plainsight.errors import InputError

    with pytest.raises(InputError, match=r"pools.yaml: PERSON.titles: every entry"):
        pools.excluding(RealCodeValues(["Mr", "Ms", "Dr", "Prof"]), tmp_path / "pools.yaml")


def test_no_fictional_value_of_the_real_tab_sample_is_a_real_value(pools):
    if not TAB_SAMPLE.exists():
        pytest.skip(f"TAB sample not found at {TAB_SAMPLE}")
    from plainsight.codes.control_code import select_spans
    from plainsight.codes.fictional import corpus_real_values
    from plainsight.matching import NearMatcher, name_words
    from test_tab import ingest

    docs, spans = ingest([TAB_SAMPLE])
    private = select_spans(spans, "both")
    codes = codes_table(docs, private)
    filtered = FictionalPools.for_corpus(FICTIONAL_POOLS, spans, codes)
    assert isinstance(corpus_real_values(spans, codes), RealCodeValues)
    persons = private.loc[private["entity_type"] == "PERSON", "text"]
    detector = NearMatcher([*private["text"], *name_words(persons)])
    leaks_before = leaks_after = 0
    for seed in range(1, 30):
        before = fictional_codes_table(codes, pool_drawer(pools), seed)
        after = fictional_codes_table(codes, pool_drawer(filtered), seed)
        leaks_before += sum(
            bool(detector.found(v)) for r in before["entities"] for _, v in records_to_entities(r)
        )
        leaks_after += sum(
            bool(detector.found(v)) for r in after["entities"] for _, v in records_to_entities(r)
        )
    assert leaks_before > 0  # real TAB dates do coincide with unfiltered fictional ones
    assert leaks_after == 0
