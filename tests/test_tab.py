"""TAB ingestion: annotator choice, segment and span tables, and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import (
    PLACEHOLDER_TYPES,
    SEGMENTS,
    TAB_SAMPLE,
    make_mention,
    make_tab_document,
    numbered_paragraphs,
    write_json,
)
from plainsight.data.ingest import ingest_dataset
from plainsight.data.problems import ProblemPolicy
from plainsight.data.tab import choose_annotator, mention_to_span, read_tab_file
from plainsight.entities import Span
from plainsight.errors import InputError

TAB_CONFIG = {"format": "tab", "segments": [list(r) for r in SEGMENTS]}


def ingest(paths, on_invalid="error"):
    return ingest_dataset([str(p) for p in paths], TAB_CONFIG, on_invalid, str(PLACEHOLDER_TYPES))


def with_paragraphs(doc_id: str, count: int, **sentences: str) -> list[str]:
    """Numbered filler paragraphs, with paragraph `pN` replaced by the given sentence."""
    paragraphs = numbered_paragraphs(doc_id, count)
    for key, sentence in sentences.items():
        paragraphs[int(key[1:]) - 1] = sentence
    return paragraphs


def train_document() -> dict:
    paragraphs = with_paragraphs(
        "T1",
        14,
        p1="PROCEDURE",
        p2="The case originated in an application (no. 12345/06) lodged by Mr Ali Veli.",
        p6="The hearing took place on 3 March 2005.",
        p10="The applicant lives in Ankara.",
        p14="Ms Ayşe Kaya wrote a letter.",
    )
    mentions = [
        ("12345/06", "CODE", "DIRECT"),
        ("Mr Ali Veli", "PERSON", "DIRECT"),
        ("3 March 2005", "DATETIME", "QUASI"),
        ("Ankara", "LOC", "QUASI"),
        ("Ms Ayşe Kaya", "PERSON", "DIRECT"),
    ]
    return make_tab_document("T1", paragraphs, mentions, split="train")


def dev_document() -> dict:
    """Two annotators; the second one is quality-checked and has one more mention."""
    paragraphs = with_paragraphs(
        "D1", 8, p2="Mr Can Demir complained.", p7="The decision was served on 12 May 2001."
    )
    document = make_tab_document(
        "D1",
        paragraphs,
        [("Mr Can Demir", "PERSON", "DIRECT")],
        split="dev",
        annotators=("annotator1", "annotator2"),
        quality_checked=["annotator2"],
    )
    text = document["text"]
    document["annotations"]["annotator2"]["entity_mentions"] = [
        make_mention("D1", text, "Mr Can Demir", "PERSON", "DIRECT", 1, tag="a2"),
        make_mention("D1", text, "12 May 2001", "DATETIME", "QUASI", 2, tag="a2"),
    ]
    return document


def split_test_documents() -> list[dict]:
    s1 = make_tab_document(
        "S1",
        with_paragraphs("S1", 12, p12="It went to the Istanbul State Security Court."),
        [("Istanbul State Security Court", "ORG", "QUASI")],
        split="test",
        annotators=("annotator5", "annotator3"),
        quality_checked=[],
    )
    s2 = make_tab_document(
        "S2",
        numbered_paragraphs("S2", 12),
        [],
        split="test",
        annotators=("annotator4", "annotator1"),
        quality_checked=["annotator9"],
    )
    return [s1, s2]


@pytest.fixture
def tab_files(tmp_path: Path) -> list[Path]:
    return [
        write_json([train_document()], tmp_path / "echr_train.json"),
        write_json([dev_document()], tmp_path / "echr_dev.json"),
        write_json(split_test_documents(), tmp_path / "echr_test.json"),
    ]


def spans_of(spans: pd.DataFrame, doc_id: str, segment: int) -> list[str]:
    rows = spans[(spans["doc_id"] == doc_id) & (spans["segment"] == segment)]
    return rows.sort_values("start")["text"].tolist()


def assert_offsets_match(docs: pd.DataFrame, spans: pd.DataFrame) -> None:
    texts = {(d.doc_id, d.segment): d.text for d in docs.itertuples(index=False)}
    for span in spans.itertuples(index=False):
        assert texts[(span.doc_id, span.segment)][span.start : span.end] == span.text


# --- good input -------------------------------------------------------------------------------


def test_row_counts(tab_files):
    docs, spans = ingest(tab_files)
    assert len(docs) == 8  # four documents, two segments each
    assert len(spans) == 8  # T1: 3 + 2, D1: 1 + 1, S1: 0 + 1, S2: none
    assert docs.groupby("doc_id").size().to_dict() == {"T1": 2, "D1": 2, "S1": 2, "S2": 2}
    assert spans.groupby("doc_id").size().to_dict() == {"T1": 5, "D1": 2, "S1": 1}


def test_splits_come_from_dataset_type(tab_files):
    docs, _ = ingest(tab_files)
    assert docs.drop_duplicates("doc_id").set_index("doc_id")["split"].to_dict() == {
        "T1": "train",
        "D1": "dev",
        "S1": "test",
        "S2": "test",
    }


def test_spans_land_in_the_right_segments(tab_files):
    _docs, spans = ingest(tab_files)
    assert spans_of(spans, "T1", 0) == ["12345/06", "Mr Ali Veli", "3 March 2005"]
    assert spans_of(spans, "T1", 1) == ["3 March 2005", "Ankara"]  # paragraph 6 is in both
    assert "Ms Ayşe Kaya" not in spans["text"].tolist()  # paragraph 14 is in no segment
    assert spans_of(spans, "S1", 0) == []
    assert spans_of(spans, "S1", 1) == ["Istanbul State Security Court"]


def test_span_offsets_index_their_segment_text(tab_files):
    docs, spans = ingest(tab_files)
    assert_offsets_match(docs, spans)
    t1_second = docs[(docs["doc_id"] == "T1") & (docs["segment"] == 1)]["text"].item()
    assert t1_second.startswith("The hearing took place on 3 March 2005.")
    row = spans[(spans["doc_id"] == "T1") & (spans["segment"] == 1) & (spans["text"] == "3 March 2005")]
    assert (row["start"].item(), row["end"].item()) == (26, 38)


def test_span_fields_are_copied_from_the_mention(tab_files):
    _, spans = ingest(tab_files)
    row = spans[spans["text"] == "12345/06"].iloc[0]
    assert (row["entity_type"], row["identifier_type"], row["entity_id"], row["mention_id"]) == (
        "CODE",
        "DIRECT",
        "T1_a1_e1",
        "T1_a1_em1",
    )
    assert pd.isna(row["raw_label"])


def test_quality_checked_annotator_is_used(tab_files):
    docs, spans = ingest(tab_files)
    assert set(docs[docs["doc_id"] == "D1"]["annotator"]) == {"annotator2"}
    assert spans[spans["doc_id"] == "D1"]["mention_id"].tolist() == ["D1_a2_em1", "D1_a2_em2"]


def test_first_listed_annotator_is_used_without_a_present_quality_checked_one(tab_files):
    docs, _ = ingest(tab_files)
    annotators = docs.drop_duplicates("doc_id").set_index("doc_id")["annotator"].to_dict()
    assert annotators["S1"] == "annotator5"  # quality_checked empty
    assert annotators["S2"] == "annotator4"  # quality_checked names an absent annotator
    assert annotators["T1"] == "annotator1"


def test_choose_annotator_directly():
    doc = {"annotations": {"annotator1": {}, "annotator7": {}, "annotator3": {}}}
    assert choose_annotator(doc) == "annotator1"
    assert choose_annotator(doc | {"quality_checked": None}) == "annotator1"
    assert choose_annotator(doc | {"quality_checked": ["annotator3", "annotator7"]}) == "annotator3"
    assert choose_annotator(doc | {"quality_checked": ["annotator9", "annotator7"]}) == "annotator7"


def test_table_schemas(tab_files):
    docs, spans = ingest(tab_files)
    assert list(docs.columns) == [
        "doc_id",
        "split",
        "segment",
        "text",
        "annotator",
        "unit_id",
        "labels",
        "group",
    ]
    assert (docs["unit_id"] == docs["doc_id"]).all()  # the document is TAB's privacy unit
    assert list(spans.columns) == [
        "doc_id",
        "segment",
        "start",
        "end",
        "text",
        "entity_type",
        "identifier_type",
        "entity_id",
        "mention_id",
        "raw_label",
    ]
    assert docs["segment"].dtype == "int64"
    for column in ("start", "end", "segment"):
        assert spans[column].dtype == "int64"
    for column in ("doc_id", "split", "text", "annotator", "unit_id"):
        assert pd.api.types.is_string_dtype(docs[column]), column
    for column in (
        "doc_id",
        "text",
        "entity_type",
        "identifier_type",
        "entity_id",
        "mention_id",
        "raw_label",
    ):
        assert pd.api.types.is_string_dtype(spans[column]), column
    assert isinstance(spans["raw_label"].dtype, pd.StringDtype)


def test_tables_survive_a_parquet_round_trip(tab_files, tmp_path):
    _docs, spans = ingest(tab_files)
    spans.to_parquet(tmp_path / "spans.parquet", index=False)
    back = pd.read_parquet(tmp_path / "spans.parquet")
    assert back["start"].tolist() == spans["start"].tolist()
    assert back["text"].tolist() == spans["text"].tolist()


def test_read_tab_file_returns_the_documents(tab_files):
    documents = read_tab_file(tab_files[2])
    assert [d["doc_id"] for d in documents] == ["S1", "S2"]


def test_mention_to_span_builds_a_span():
    text = "Lodged by Mr Ali Veli."
    mention = make_mention("X", text, "Mr Ali Veli")
    assert mention_to_span("f.json", "X", text, mention) == Span(
        10, 21, "Mr Ali Veli", "PERSON", "DIRECT", "X_a1_e1", "X_a1_em1"
    )


# --- bad input --------------------------------------------------------------------------------


def assert_one_line(error: pytest.ExceptionInfo, path: Path, *parts: str) -> str:
    message = str(error.value)
    assert "\n" not in message and "\r" not in message, message
    assert str(path) in message, message
    for part in parts:
        assert part in message, message
    return message


def good_document(doc_id: str = "A1", split: str = "train", paragraphs: int = 12) -> dict:
    return make_tab_document(
        doc_id,
        with_paragraphs(doc_id, paragraphs, p2="Mr Ali Veli complained."),
        [("Mr Ali Veli", "PERSON", "DIRECT")],
        split=split,
    )


def test_malformed_json_names_line_and_column(tmp_path):
    path = tmp_path / "echr_train.json"
    path.write_text('[{"doc_id": "A1",\n "text": }]', encoding="utf-8")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "line 2 column 10", "malformed JSON")


def test_non_utf8_file_names_the_byte(tmp_path):
    path = tmp_path / "echr_train.json"
    data = b'[{"doc_id": "A1", "text": "caf\xe9"}]'
    path.write_bytes(data)
    bad_byte = data.index(b"\xe9")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, f"byte {bad_byte}", "UTF-8")


def test_top_level_object_is_rejected(tmp_path):
    path = write_json(good_document(), tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "list", "dict")


def test_document_that_is_not_an_object_is_rejected(tmp_path):
    path = write_json([good_document(), "oops"], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document #1")


def test_missing_text_field(tmp_path):
    document = good_document()
    del document["text"]
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1", "'text'")


def test_unknown_dataset_type(tmp_path):
    path = write_json([good_document(split="validation")], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1", "'validation'")


def test_span_offsets_not_matching_span_text(tmp_path):
    document = good_document()
    mention = document["annotations"]["annotator1"]["entity_mentions"][0]
    mention["start_offset"] += 1
    mention["end_offset"] += 1
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1 mention A1_a1_em1", "'Mr Ali Veli'", "'r Ali Veli '")


def test_span_text_with_line_break_still_gives_one_line(tmp_path):
    document = make_tab_document(
        "A1", with_paragraphs("A1", 12, p2="Mr Ali\nVeli complained."), [("Mr Ali\nVeli", "PERSON", "DIRECT")]
    )
    document["annotations"]["annotator1"]["entity_mentions"][0]["span_text"] = "Mr Ali\nVelii"
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1 mention A1_a1_em1")


def test_offsets_outside_the_text(tmp_path):
    document = good_document()
    mention = document["annotations"]["annotator1"]["entity_mentions"][0]
    mention["end_offset"] = len(document["text"]) + 5
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1 mention A1_a1_em1", "outside the text")


def test_unknown_entity_type(tmp_path):
    document = good_document()
    document["annotations"]["annotator1"]["entity_mentions"][0]["entity_type"] = "NAME"
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1 mention A1_a1_em1", "'NAME'")


def test_unknown_identifier_type(tmp_path):
    document = good_document()
    document["annotations"]["annotator1"]["entity_mentions"][0]["identifier_type"] = "SEMI"
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1 mention A1_a1_em1", "'SEMI'")


def test_mention_missing_fields(tmp_path):
    document = good_document()
    del document["annotations"]["annotator1"]["entity_mentions"][0]["span_text"]
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1", "span_text")


def test_annotator_entry_that_is_not_an_object(tmp_path):
    document = good_document()
    document["annotations"]["annotator1"] = []
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1")


def test_empty_document_text(tmp_path):
    document = make_tab_document("A1", [""], [])
    assert document["text"] == ""
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1", "empty")


def test_document_with_fewer_than_six_paragraphs(tmp_path):
    path = write_json([good_document(paragraphs=5)], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1", "5 paragraphs", "at least 6")


def test_duplicate_doc_id_within_a_file(tmp_path):
    path = write_json([good_document("A1"), good_document("A1")], tmp_path / "echr_train.json")
    with pytest.raises(InputError) as error:
        ingest([path])
    assert_one_line(error, path, "document A1", "duplicate")


def test_duplicate_doc_id_across_files_names_the_second_file(tmp_path):
    train = write_json([good_document("A1")], tmp_path / "echr_train.json")
    dev = write_json([good_document("A1", split="dev")], tmp_path / "echr_dev.json")
    with pytest.raises(InputError) as error:
        ingest([train, dev])
    assert_one_line(error, dev, "document A1", "duplicate")


# --- on_invalid="drop" ------------------------------------------------------------------------


def test_drop_keeps_the_good_mentions_of_a_document(tmp_path):
    document = make_tab_document(
        "A1",
        with_paragraphs("A1", 12, p2="Mr Ali Veli met Ms Ece Ak."),
        [("Mr Ali Veli", "PERSON", "DIRECT"), ("Ms Ece Ak", "PERSON", "DIRECT"), ("A1.", "MISC", "NO_MASK")],
    )
    mentions = document["annotations"]["annotator1"]["entity_mentions"]
    mentions[0]["start_offset"] += 1  # offsets no longer match
    mentions[2]["entity_type"] = "THING"  # unknown type
    path = write_json([document], tmp_path / "echr_train.json")
    docs, spans = ingest([path], on_invalid="drop")
    assert len(docs) == 2
    assert spans["mention_id"].tolist() == ["A1_a1_em2"]


def test_drop_removes_empty_and_short_documents_only(tmp_path):
    empty = make_tab_document("E1", ["   "], [])
    short = good_document("S1", paragraphs=5)
    path = write_json([good_document("A1"), empty, short, good_document("A2")], tmp_path / "echr_train.json")
    docs, spans = ingest([path], on_invalid="drop")
    assert docs["doc_id"].tolist() == ["A1", "A1", "A2", "A2"]
    assert spans["doc_id"].tolist() == ["A1", "A2"]


def test_drop_with_nothing_left_is_an_error(tmp_path):
    path = write_json([good_document("S1", paragraphs=3)], tmp_path / "echr_train.json")
    with pytest.raises(InputError, match="no valid document"):
        ingest([path], on_invalid="drop")


def test_drop_still_rejects_duplicate_doc_ids(tmp_path):
    path = write_json([good_document("A1"), good_document("A1")], tmp_path / "echr_train.json")
    with pytest.raises(InputError, match="duplicate"):
        ingest([path], on_invalid="drop")


def test_unknown_on_invalid_policy_is_refused():
    with pytest.raises(ValueError, match="on_invalid"):
        ProblemPolicy("ignore")


# --- the real TAB sample ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tab_sample():
    if not TAB_SAMPLE.exists():
        pytest.skip(f"TAB sample not found at {TAB_SAMPLE}")
    originals = {d["doc_id"]: d for d in json.loads(TAB_SAMPLE.read_text(encoding="utf-8"))}
    docs, spans = ingest([TAB_SAMPLE])
    return originals, docs, spans


def test_sample_ingests_seven_documents_in_fourteen_segments(tab_sample):
    originals, docs, _ = tab_sample
    assert len(originals) == 7
    assert docs["doc_id"].nunique() == 7
    assert len(docs) == 14
    assert set(docs["split"]) == {"dev"}


def test_sample_span_offsets_index_their_segment_text(tab_sample):
    _, docs, spans = tab_sample
    assert len(spans) > 0
    assert_offsets_match(docs, spans)


def test_sample_spans_map_back_to_the_original_mentions(tab_sample):
    originals, docs, spans = tab_sample
    segment_start = {}
    for doc in docs.itertuples(index=False):
        start = originals[doc.doc_id]["text"].find(doc.text)
        assert start >= 0
        segment_start[(doc.doc_id, doc.segment)] = start
    for span in spans.itertuples(index=False):
        original = originals[span.doc_id]
        mentions = {
            m["entity_mention_id"]: m for a in original["annotations"].values() for m in a["entity_mentions"]
        }
        mention = mentions[span.mention_id]
        assert mention["start_offset"] == segment_start[(span.doc_id, span.segment)] + span.start
        assert mention["span_text"] == span.text


def test_sample_document_with_nine_annotators_uses_the_quality_checked_one(tab_sample):
    originals, docs, spans = tab_sample
    original = originals["001-61815"]
    assert len(original["annotations"]) == 9
    assert next(iter(original["annotations"])) == "annotator1"
    assert set(docs[docs["doc_id"] == "001-61815"]["annotator"]) == {"annotator3"}
    mention_ids = spans[spans["doc_id"] == "001-61815"]["mention_id"]
    assert len(mention_ids) > 0
    assert mention_ids.str.startswith("001-61815_a3_").all()


def test_sample_segments_are_unchanged_slices_of_the_unicode_text(tab_sample):
    originals, docs, spans = tab_sample
    # The sample separates paragraphs by exactly one blank line, so plain splitting gives them.
    for doc in docs.itertuples(index=False):
        paragraphs = originals[doc.doc_id]["text"].split("\n\n")
        first, last = SEGMENTS[doc.segment]
        assert doc.text == "\n\n".join(paragraphs[first - 1 : last])
    guler = docs[docs["doc_id"] == "001-126979"]["text"]
    assert guler.str.contains("İbrahim Güler").any()
    assert "Mr İbrahim Güler" in spans[spans["doc_id"] == "001-126979"]["text"].tolist()


def test_sample_labels_are_the_case_articles_and_group_the_respondent_state(tab_sample):
    _, docs, _ = tab_sample
    row = docs[docs["doc_id"] == "001-83927"].iloc[0]
    assert list(row["labels"]) == ["6", "5"]  # meta.articles [6, 5], in order, as strings
    assert row["group"] == "TUR"


# --- labels and group ---------------------------------------------------------------------------


def test_documents_without_meta_articles_have_no_labels_and_no_group(tab_files):
    docs, _ = ingest(tab_files)
    assert all(len(labels) == 0 for labels in docs["labels"])
    assert docs["group"].isna().all()


def test_labels_and_group_are_written_as_list_of_string_and_string(tab_files, tmp_path):
    import pyarrow.parquet as pq

    from plainsight.data.ingest import write_dataset

    # no document has a label or a group
    write_dataset(
        [str(p) for p in tab_files],
        TAB_CONFIG,
        "error",
        str(PLACEHOLDER_TYPES),
        tmp_path / "docs.parquet",
        tmp_path / "spans.parquet",
    )
    schema = pq.read_schema(tmp_path / "docs.parquet")
    assert str(schema.field("labels").type) in ("list<element: string>", "list<item: string>")
    assert str(schema.field("group").type) == "string"
    back = pd.read_parquet(tmp_path / "docs.parquet")
    assert back["group"].isna().all() and all(len(labels) == 0 for labels in back["labels"])


def test_every_segment_carries_its_case_articles(tmp_path):
    document = make_tab_document("A1", numbered_paragraphs("A1", 12), [], split="train")
    document["meta"] |= {"articles": [3, 13, 3], "countries": "POL"}
    docs, _ = ingest([write_json([document], tmp_path / "echr_train.json")])
    assert [list(labels) for labels in docs["labels"]] == [["3", "13"], ["3", "13"]]
    assert docs["group"].tolist() == ["POL", "POL"]


def test_articles_that_are_not_a_list_name_the_document(tmp_path):
    document = make_tab_document("A2", numbered_paragraphs("A2", 12), [], split="train")
    document["meta"]["articles"] = "6"
    path = write_json([document], tmp_path / "echr_train.json")
    with pytest.raises(InputError, match=r"echr_train\.json.*document A2.*meta\.articles"):
        ingest([path])
