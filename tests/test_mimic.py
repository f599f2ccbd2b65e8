"""MIMIC-III NOTEEVENTS ingestion: placeholders become typed spans, notes split by patient."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from conftest import PLACEHOLDER_TYPES
from plainsight.data.ingest import ingest_dataset
from plainsight.data.mimic import PlaceholderTypes, placeholder_spans, split_of
from plainsight.errors import InputError

HEADER = [
    "ROW_ID",
    "SUBJECT_ID",
    "HADM_ID",
    "CHARTDATE",
    "CHARTTIME",
    "STORETIME",
    "CATEGORY",
    "DESCRIPTION",
    "CGID",
    "ISERROR",
    "TEXT",
]
FRACTIONS = {"train": 0.8, "dev": 0.1, "test": 0.1}
MIMIC_CONFIG = {"format": "mimic", "segments": [[1, 6], [6, 12]], "split_fractions": FRACTIONS}

# Subjects whose sha256 bucket is known: "7" -> 0.4727, "14" -> 0.5201, "15" -> 0.8991, "20" -> 0.9601.
SUBJECT_SPLITS = {"7": "train", "15": "dev", "20": "test"}


@pytest.fixture(scope="module")
def types() -> PlaceholderTypes:
    return PlaceholderTypes.from_yaml(PLACEHOLDER_TYPES)


def note_text(row_id: str) -> str:
    """A discharge summary of 13 paragraphs; paragraph 13 falls outside both segments."""
    paragraphs = [
        "Admission Date:  [**2151-7-16**]       Discharge Date:   [**2151-8-4**]",
        "Service: MEDICINE\nAllergies:\nPatient recorded as having No Known Allergies",
        "Attending:[**First Name8 (NamePattern2) 2917**]\nChief Complaint:\nshortness of breath",
        "Pt is a [**Age over 90 **] yo man, Mr. [**Known lastname 10632**], "
        "transferred from [**Hospital 18**].",
        "MRN [**Medical Record Number 4453**]. Call [**Telephone/Fax (1) 6432**] with questions.",
        "Lives at [**Street Address(2) 4381**] in [**Location (un) 620**].",
        "Seen in [**Month (only) 116**] by [**Something Weird 1**].",
        "Past Medical History:\n1. CHF\n2. AFib",
        "Social History:\nLives alone.",
        "Family History:\nNoncontributory.",
        "Physical Exam:\nVS: T 98.4 BP 120/80",
        "Discharge Condition:\nstable",
        "Followup Instructions:\nwith Dr. [**Last Name (STitle) 2**]",
    ]
    return "\n\n".join(paragraphs) + "\n"


def write_notes(path: Path, rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=HEADER, quoting=csv.QUOTE_MINIMAL)
        writer.writeheader()
        for row in rows:
            writer.writerow({name: row.get(name, "") for name in HEADER})
    return path


def note(row_id: str, subject_id: str, text: str | None = None) -> dict:
    return {
        "ROW_ID": row_id,
        "SUBJECT_ID": subject_id,
        "HADM_ID": "100001",
        "CHARTDATE": "2151-08-04",
        "CATEGORY": "Discharge summary",
        "DESCRIPTION": "Report",
        "ISERROR": "",
        "TEXT": note_text(row_id) if text is None else text,
    }


def ingest(path: Path, on_invalid: str = "error"):
    return ingest_dataset([str(path)], MIMIC_CONFIG, on_invalid, str(PLACEHOLDER_TYPES))


@pytest.fixture
def notes_csv(tmp_path: Path) -> Path:
    rows = [note("101", "7"), note("102", "15"), note("103", "7"), note("104", "20")]
    return write_notes(tmp_path / "NOTEEVENTS.csv", rows)


# --- placeholder classification ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("2151-7-16", ("date", "DATETIME", "QUASI")),
        ("7-16", ("date", "DATETIME", "QUASI")),
        ("2151", ("date", "DATETIME", "QUASI")),
        ("Hospital 18", ("Hospital", "ORG", "QUASI")),
        ("First Name8 (NamePattern2) 2917", ("First Name8 (NamePattern2)", "PERSON", "DIRECT")),
        ("Known lastname 10632", ("Known lastname", "PERSON", "DIRECT")),
        ("Last Name (STitle) 2", ("Last Name (STitle)", "PERSON", "DIRECT")),
        ("Telephone/Fax (1) 6432", ("Telephone/Fax (1)", "CODE", "DIRECT")),
        ("Medical Record Number 4453", ("Medical Record Number", "CODE", "DIRECT")),
        ("E-mail address 55", ("E-mail address", "CODE", "DIRECT")),
        ("Age over 90 ", ("Age over", "DEM", "QUASI")),
        ("Location (un) 620", ("Location (un)", "LOC", "QUASI")),
        ("Street Address(2) 4381", ("Street Address(2)", "LOC", "DIRECT")),
        ("Month (only) 116", ("Month (only)", "DATETIME", "QUASI")),
        ("Something Weird 1", ("Something Weird", "MISC", "QUASI")),
    ],
)
def test_classify_placeholder(types, inner, expected):
    assert types.classify(inner) == expected


@pytest.mark.parametrize("inner", ["Hospital Ward Name 23", "Hospital Unit Name 7", "Wardname 12"])
def test_ward_and_unit_names_are_organisations_not_people(types, inner):
    # The ORG rule lists "ward|wardname"; these labels name a place in a hospital, not a person.
    assert types.classify(inner)[1:] == ("ORG", "QUASI")


def test_rule_matching_ignores_case(types):
    assert types.classify("HOSPITAL 3")[1:] == ("ORG", "QUASI")


def test_placeholder_spans_cover_whole_placeholders(types):
    text = "Seen at [**Hospital 18**] on [**2151-7-16**]."
    spans = placeholder_spans("notes.csv", "9", text, types)
    assert [(s.start, s.end, s.text) for s in spans] == [
        (8, 25, "[**Hospital 18**]"),
        (29, 44, "[**2151-7-16**]"),
    ]
    assert [s.mention_id for s in spans] == ["9_m1", "9_m2"]
    assert [s.raw_label for s in spans] == ["Hospital", "date"]
    assert spans[0].entity_id == "9_[**Hospital 18**]"


# --- ingestion ---------------------------------------------------------------------------------


def test_notes_become_two_segments_each(notes_csv):
    docs, _spans = ingest(notes_csv)
    assert len(docs) == 8
    assert docs["doc_id"].tolist() == ["101", "101", "102", "102", "103", "103", "104", "104"]
    assert set(docs["annotator"]) == {"deid-placeholders"}


def test_multiline_text_survives_csv_quoting(notes_csv):
    docs, _ = ingest(notes_csv)
    paragraphs = note_text("101").split("\n\n")
    first = docs[(docs["doc_id"] == "101") & (docs["segment"] == 0)]["text"].item()
    second = docs[(docs["doc_id"] == "101") & (docs["segment"] == 1)]["text"].item()
    assert first == "\n\n".join(paragraphs[0:6])
    assert second == "\n\n".join(paragraphs[5:12])


def test_placeholder_spans_per_segment(notes_csv):
    _docs, spans = ingest(notes_csv)
    note_spans = spans[spans["doc_id"] == "101"]
    # Paragraphs 1-5 hold 8 placeholders, paragraph 6 two (in both segments), paragraph 7 two.
    assert (note_spans["segment"] == 0).sum() == 10
    assert (note_spans["segment"] == 1).sum() == 4
    assert len(spans) == 4 * 14
    assert "[**Last Name (STitle) 2**]" not in spans["text"].tolist()  # paragraph 13


def test_span_types_and_raw_labels(notes_csv):
    _, spans = ingest(notes_csv)
    first = spans[(spans["doc_id"] == "101") & (spans["segment"] == 0)].set_index("text")
    expected = {
        "[**2151-7-16**]": ("DATETIME", "QUASI", "date"),
        "[**First Name8 (NamePattern2) 2917**]": ("PERSON", "DIRECT", "First Name8 (NamePattern2)"),
        "[**Age over 90 **]": ("DEM", "QUASI", "Age over"),
        "[**Known lastname 10632**]": ("PERSON", "DIRECT", "Known lastname"),
        "[**Hospital 18**]": ("ORG", "QUASI", "Hospital"),
        "[**Medical Record Number 4453**]": ("CODE", "DIRECT", "Medical Record Number"),
        "[**Telephone/Fax (1) 6432**]": ("CODE", "DIRECT", "Telephone/Fax (1)"),
        "[**Street Address(2) 4381**]": ("LOC", "DIRECT", "Street Address(2)"),
        "[**Location (un) 620**]": ("LOC", "QUASI", "Location (un)"),
    }
    for text, (entity_type, identifier_type, raw_label) in expected.items():
        row = first.loc[text]
        assert (row["entity_type"], row["identifier_type"], row["raw_label"]) == (
            entity_type,
            identifier_type,
            raw_label,
        ), text
    second = spans[(spans["doc_id"] == "101") & (spans["segment"] == 1)].set_index("text")
    assert tuple(second.loc["[**Something Weird 1**]", ["entity_type", "raw_label"]]) == (
        "MISC",
        "Something Weird",
    )
    assert tuple(second.loc["[**Month (only) 116**]", ["entity_type", "raw_label"]]) == (
        "DATETIME",
        "Month (only)",
    )


def test_span_offsets_index_their_segment_text(notes_csv):
    docs, spans = ingest(notes_csv)
    texts = {(d.doc_id, d.segment): d.text for d in docs.itertuples(index=False)}
    for span in spans.itertuples(index=False):
        assert texts[(span.doc_id, span.segment)][span.start : span.end] == span.text
        assert span.text.startswith("[**") and span.text.endswith("**]")
    assert isinstance(spans["raw_label"].dtype, pd.StringDtype)
    assert spans["raw_label"].notna().all()


def test_notes_of_one_patient_share_a_split(notes_csv):
    docs, _ = ingest(notes_csv)
    splits = docs.drop_duplicates("doc_id").set_index("doc_id")["split"].to_dict()
    assert splits == {"101": "train", "103": "train", "102": "dev", "104": "test"}


def test_the_patient_is_the_privacy_unit(notes_csv):
    docs, _ = ingest(notes_csv)
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
    assert pd.api.types.is_string_dtype(docs["unit_id"])
    units = docs.drop_duplicates("doc_id").set_index("doc_id")["unit_id"].to_dict()
    assert units == {"101": "7", "102": "15", "103": "7", "104": "20"}  # SUBJECT_ID, not ROW_ID


# --- split_of ---------------------------------------------------------------------------------


def test_split_of_known_buckets():
    for subject, split in SUBJECT_SPLITS.items():
        assert split_of(subject, FRACTIONS) == split


def test_split_of_uses_cumulative_fractions():
    halves = {"a": 0.5, "b": 0.5}
    assert split_of("7", halves) == "a"  # bucket 0.4727
    assert split_of("14", halves) == "b"  # bucket 0.5201
    assert split_of("7", {"only": 1.0}) == "only"


def test_split_of_is_deterministic_and_roughly_proportional():
    subjects = [str(n) for n in range(2000)]
    first = [split_of(s, FRACTIONS) for s in subjects]
    assert first == [split_of(s, FRACTIONS) for s in subjects]
    share = first.count("train") / len(first)
    assert 0.76 < share < 0.84
    assert set(first) == {"train", "dev", "test"}


# --- bad input --------------------------------------------------------------------------------


def assert_one_line(error: pytest.ExceptionInfo, path: Path, *parts: str) -> None:
    message = str(error.value)
    assert "\n" not in message, message
    assert str(path) in message, message
    for part in parts:
        assert part in message, message


def test_missing_text_column(tmp_path):
    path = tmp_path / "NOTEEVENTS.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER[:-1])
        writer.writerow(["101", "7", "100001", "2151-08-04", "", "", "Discharge summary", "Report", "", ""])
    with pytest.raises(InputError) as error:
        ingest(path)
    assert_one_line(error, path, "header", "TEXT")


def test_unclosed_placeholder_names_the_row(tmp_path):
    text = note_text("105").replace("[**Hospital 18**]", "[**Hospital 18")
    path = write_notes(tmp_path / "NOTEEVENTS.csv", [note("101", "7"), note("105", "15", text)])
    with pytest.raises(InputError) as error:
        ingest(path)
    assert_one_line(error, path, "ROW_ID 105", "[**")


def test_unclosed_placeholder_is_dropped_with_drop_policy(tmp_path):
    text = note_text("105").replace("[**Hospital 18**]", "[**Hospital 18")
    path = write_notes(tmp_path / "NOTEEVENTS.csv", [note("101", "7"), note("105", "15", text)])
    docs, spans = ingest(path, on_invalid="drop")
    assert set(docs["doc_id"]) == {"101"}
    assert set(spans["doc_id"]) == {"101"}


def test_non_utf8_file(tmp_path):
    path = write_notes(tmp_path / "NOTEEVENTS.csv", [note("101", "7")])
    data = path.read_bytes().replace(b"Discharge summary", b"Discharge r\xe9sum\xe9", 1)
    path.write_bytes(data)
    bad_byte = data.index(bytes([0xE9]))
    with pytest.raises(InputError) as error:
        ingest(path)
    assert_one_line(error, path, f"byte {bad_byte}", "UTF-8")


def test_short_note_is_an_error(tmp_path):
    path = write_notes(tmp_path / "NOTEEVENTS.csv", [note("106", "7", "One.\n\nTwo [**Hospital 1**].")])
    with pytest.raises(InputError) as error:
        ingest(path)
    assert_one_line(error, path, "document 106", "2 paragraphs")


def test_label_is_the_category_and_there_is_no_group(tmp_path):
    rows = [
        note("101", "7"),
        note("102", "15") | {"CATEGORY": "Physician "},
        note("103", "7") | {"CATEGORY": ""},
    ]
    docs, _ = ingest(write_notes(tmp_path / "NOTEEVENTS.csv", rows))
    labels = {row.doc_id: list(row.labels) for row in docs.itertuples(index=False)}
    assert labels == {"101": ["Discharge summary"], "102": ["Physician"], "103": []}
    assert docs["group"].isna().all()  # NOTEEVENTS holds no gender


@pytest.mark.parametrize(
    "text", ["", "\n\n", "ROW_ID,SUBJECT_ID,CATEGORY,TEXT\n"], ids=["no bytes", "blank", "header"]
)
def test_an_empty_noteevents_file_is_named_as_empty(tmp_path, text):
    """Not `missing columns` (no header to read) or `no valid document left` (none was there)."""
    path = tmp_path / "NOTEEVENTS.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        ingest(path)
    assert str(error.value) == f"{path}: the file is empty: it holds no record"
