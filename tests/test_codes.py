"""Control codes: entity lists grouped by type, their text form, and the per-segment table."""

from __future__ import annotations

import pandas as pd
import pytest

from plainsight.codes.control_code import (
    build_entities,
    codes_table,
    entities_to_records,
    format_code,
    normalise_value,
    records_to_entities,
    select_spans,
    type_counts,
)

POLAT_PAIRS = [
    ("DATETIME", "15 October 2004"),
    ("PERSON", "Mr Henrik Hasslund"),
    ("CODE", "40593/04"),
    ("PERSON", "Ms Nina\nHolst-Christensen"),
    ("MISC", "applicant's brother"),
    ("PERSON", "Mr Henrik Hasslund"),
    ("DATETIME", "6 November 2006"),
    ("LOC", "Istanbul"),
    ("QUANTITY", "EUR 1,500"),
    ("ORG", "Istanbul State Security Court"),
    ("DEM", "Turkish"),
    ("DATETIME", "15  October 2004"),
]

POLAT_CODE = (
    "PERSON: Mr Henrik Hasslund, Ms Nina Holst-Christensen\n"
    "CODE: 40593/04\n"
    "LOC: Istanbul\n"
    "ORG: Istanbul State Security Court\n"
    "DEM: Turkish\n"
    "DATETIME: 15 October 2004, 6 November 2006\n"
    "QUANTITY: EUR 1,500\n"
    "MISC: applicant's brother"
)


def test_normalise_value_collapses_whitespace():
    assert normalise_value("  Ms Nina\n  Holst-Christensen \t") == "Ms Nina Holst-Christensen"
    assert normalise_value(" \n ") == ""


def test_build_entities_groups_in_fixed_type_order_and_dedupes():
    assert build_entities(POLAT_PAIRS) == [
        ("PERSON", "Mr Henrik Hasslund"),
        ("PERSON", "Ms Nina Holst-Christensen"),
        ("CODE", "40593/04"),
        ("LOC", "Istanbul"),
        ("ORG", "Istanbul State Security Court"),
        ("DEM", "Turkish"),
        ("DATETIME", "15 October 2004"),
        ("DATETIME", "6 November 2006"),
        ("QUANTITY", "EUR 1,500"),
        ("MISC", "applicant's brother"),
    ]


def test_build_entities_dedupes_after_whitespace_collapse_and_drops_blank_values():
    pairs = [("PERSON", "Mr A\nB"), ("PERSON", "Mr A B"), ("PERSON", "  "), ("PERSON", "Mr C")]
    assert build_entities(pairs) == [("PERSON", "Mr A B"), ("PERSON", "Mr C")]


def test_same_value_under_two_types_is_kept_under_both():
    assert build_entities([("ORG", "Istanbul"), ("LOC", "Istanbul")]) == [
        ("LOC", "Istanbul"),
        ("ORG", "Istanbul"),
    ]


def test_build_entities_of_nothing_is_empty():
    assert build_entities([]) == []


def test_format_code_exact_text():
    assert format_code(build_entities(POLAT_PAIRS)) == POLAT_CODE


def test_format_code_two_types():
    entities = [
        ("PERSON", "Mr Henrik Hasslund"),
        ("PERSON", "Ms Nina Holst-Christensen"),
        ("DATETIME", "15 October 2004"),
    ]
    assert (
        format_code(entities)
        == "PERSON: Mr Henrik Hasslund, Ms Nina Holst-Christensen\nDATETIME: 15 October 2004"
    )


def test_format_code_of_nothing_is_empty_string():
    assert format_code([]) == ""


def test_type_counts():
    assert type_counts(build_entities(POLAT_PAIRS)) == {
        "PERSON": 2,
        "CODE": 1,
        "LOC": 1,
        "ORG": 1,
        "DEM": 1,
        "DATETIME": 2,
        "QUANTITY": 1,
        "MISC": 1,
    }


@pytest.fixture
def gold_spans() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d1", "d2"],
            "segment": [0, 0, 1, 0],
            "start": [10, 0, 5, 3],
            "text": ["15 October 2004", "Mr Cengiz Polat", "Turkish", "n/a"],
            "entity_type": ["DATETIME", "PERSON", "DEM", "MISC"],
            "identifier_type": ["QUASI", "DIRECT", "QUASI", "NO_MASK"],
        }
    )


@pytest.mark.parametrize(
    ("identifier_set", "texts"),
    [
        ("direct", ["Mr Cengiz Polat"]),
        ("quasi", ["15 October 2004", "Turkish"]),
        ("both", ["15 October 2004", "Mr Cengiz Polat", "Turkish"]),
    ],
)
def test_select_spans(gold_spans, identifier_set, texts):
    assert select_spans(gold_spans, identifier_set)["text"].tolist() == texts


def test_select_spans_rejects_an_unknown_set(gold_spans):
    with pytest.raises(KeyError):
        select_spans(gold_spans, "all")


@pytest.fixture
def segment_docs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["d1", "d1", "d2", "d2"],
            "split": ["train", "train", "dev", "dev"],
            "segment": [0, 1, 0, 1],
            "text": ["...", "...", "...", "..."],
            "annotator": ["a", "a", "b", "b"],
        }
    )


def test_codes_table_has_one_row_per_segment_in_docs_order(segment_docs, gold_spans):
    table = codes_table(segment_docs, select_spans(gold_spans, "both"))
    assert list(table.columns) == ["doc_id", "segment", "split", "code", "entities"]
    assert table[["doc_id", "segment", "split"]].values.tolist() == [
        ["d1", 0, "train"],
        ["d1", 1, "train"],
        ["d2", 0, "dev"],
        ["d2", 1, "dev"],
    ]


def test_codes_table_orders_values_by_position_within_a_type(segment_docs, gold_spans):
    table = codes_table(segment_docs, select_spans(gold_spans, "both"))
    assert table["code"].tolist() == [
        "PERSON: Mr Cengiz Polat\nDATETIME: 15 October 2004",
        "DEM: Turkish",
        "",  # d2 has only a NO_MASK span
        "",  # no span at all
    ]


def test_codes_table_entities_are_type_value_records(segment_docs, gold_spans):
    table = codes_table(segment_docs, select_spans(gold_spans, "both"))
    assert table["entities"].tolist() == [
        [{"type": "PERSON", "value": "Mr Cengiz Polat"}, {"type": "DATETIME", "value": "15 October 2004"}],
        [{"type": "DEM", "value": "Turkish"}],
        [],
        [],
    ]


def test_codes_table_uses_start_not_row_order():
    docs = pd.DataFrame({"doc_id": ["d"], "split": ["test"], "segment": [0]})
    detected = pd.DataFrame(
        {
            "doc_id": ["d", "d", "d"],
            "segment": [0, 0, 0],
            "start": [40, 2, 20],
            "text": ["Ms C", "Mr A", "Mr B"],
            "entity_type": ["PERSON"] * 3,
        }
    )
    assert codes_table(docs, detected)["code"].item() == "PERSON: Mr A, Mr B, Ms C"


def test_codes_table_with_no_detected_values():
    docs = pd.DataFrame({"doc_id": ["d"], "split": ["test"], "segment": [0]})
    detected = pd.DataFrame(columns=["doc_id", "segment", "start", "text", "entity_type"])
    table = codes_table(docs, detected)
    assert table["code"].tolist() == [""]
    assert table["entities"].tolist() == [[]]


def test_records_round_trip():
    entities = build_entities(POLAT_PAIRS)
    records = entities_to_records(entities)
    assert records[0] == {"type": "PERSON", "value": "Mr Henrik Hasslund"}
    assert records_to_entities(records) == entities


def test_records_round_trip_through_parquet(segment_docs, gold_spans, tmp_path):
    table = codes_table(segment_docs, select_spans(gold_spans, "both"))
    table.to_parquet(tmp_path / "codes.parquet", index=False)
    back = pd.read_parquet(tmp_path / "codes.parquet")
    assert [records_to_entities(r) for r in back["entities"]] == [
        records_to_entities(r) for r in table["entities"]
    ]
    assert back["code"].tolist() == table["code"].tolist()
