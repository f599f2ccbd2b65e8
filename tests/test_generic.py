"""The generic reader: JSONL, CSV and Parquet records, spans through a label map, bad input."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from plainsight.data.generic import check_known_setting, has_spans, seeded_split
from plainsight.data.ingest import ingest_dataset, write_dataset
from plainsight.errors import InputError

REPO = Path(__file__).resolve().parents[1]
PLACEHOLDER_TYPES = REPO / "resources/mimic_placeholder_types.yaml"
LABEL_MAP = {
    "NAME": {"type": "PERSON", "identifier": "direct"},
    "CITY": {"type": "LOC", "identifier": "quasi"},
    "WHEN": {"type": "DATETIME", "identifier": "quasi"},
}
TEXT = "Visit by Anna Berg in Tromso.\n\nAnna Berg moved on 3 May 2001."
SPANS = [
    {"start": 9, "end": 18, "label": "NAME"},
    {"start": 22, "end": 28, "label": "CITY"},
    {"start": 31, "end": 40, "label": "NAME"},
    {"start": 50, "end": 60, "label": "WHEN"},
]


def dataset(path: Path, **extra) -> dict:
    return {
        "format": "generic",
        "source": "path",
        "path": str(path),
        "segments": [[1, 1], [2, 2]],
        "label_map": LABEL_MAP,
        **extra,
    }


def records(n: int = 3, **fields) -> list[dict]:
    splits = ["train", "dev", "test"]
    return [
        {"doc_id": f"d{i}", "text": TEXT, "split": splits[i % 3], "spans": SPANS, **fields} for i in range(n)
    ]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def ingest(path: Path, on_invalid: str = "error", **extra) -> tuple[pd.DataFrame, pd.DataFrame]:
    return ingest_dataset([path], dataset(path, **extra), on_invalid, PLACEHOLDER_TYPES)


def test_jsonl_spans_become_typed_segment_spans(tmp_path):
    rows = [
        {**row, "unit_id": f"p{n}"} for n, row in enumerate(records(label=["housing", "debt"], group="north"))
    ]
    docs, spans = ingest(write_jsonl(tmp_path / "c.jsonl", rows))
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
    first = docs[docs["doc_id"] == "d0"].set_index("segment")
    assert (
        first.loc[0, "text"] == "Visit by Anna Berg in Tromso."
        and first.loc[1, "text"] == "Anna Berg moved on 3 May 2001."
    )
    assert list(first.loc[0, "labels"]) == ["housing", "debt"] and first.loc[0, "group"] == "north"
    assert set(docs["unit_id"]) == {"p0", "p1", "p2"}  # one person per record: a person keeps to one split
    mine = spans[spans["doc_id"] == "d0"]
    assert list(
        zip(mine["segment"], mine["text"], mine["entity_type"], mine["identifier_type"], mine["raw_label"])
    ) == [
        (0, "Anna Berg", "PERSON", "DIRECT", "NAME"),
        (0, "Tromso", "LOC", "QUASI", "CITY"),
        (1, "Anna Berg", "PERSON", "DIRECT", "NAME"),
        (1, "3 May 2001", "DATETIME", "QUASI", "WHEN"),
    ]
    assert mine["entity_id"].nunique() == 3  # the two mentions of Anna Berg are one entity
    for span in spans.itertuples():
        text = docs.set_index(["doc_id", "segment"]).loc[(span.doc_id, span.segment), "text"]
        assert text[span.start : span.end] == span.text


def test_single_label_and_defaults(tmp_path):
    rows = [{"text": TEXT, "split": s, "label": "housing"} for s in ("train", "dev", "test")]
    docs, spans = ingest(write_jsonl(tmp_path / "c.jsonl", rows))
    assert list(docs.drop_duplicates("doc_id")["doc_id"]) == ["record-1", "record-2", "record-3"]
    assert (docs["unit_id"] == docs["doc_id"]).all()
    assert docs["labels"].map(list).tolist() == [["housing"]] * 6 and docs["group"].isna().all()
    assert spans.empty


def test_csv_and_parquet_read_like_jsonl(tmp_path):
    rows = records(label="housing")
    expected = ingest(write_jsonl(tmp_path / "c.jsonl", rows))
    with open(tmp_path / "c.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, ["doc_id", "text", "split", "label", "spans"])
        writer.writeheader()
        writer.writerows({**row, "spans": json.dumps(row["spans"])} for row in rows)
    pd.DataFrame(rows).to_parquet(tmp_path / "c.parquet")
    for name in ("c.csv", "c.parquet"):
        docs, spans = ingest(tmp_path / name)
        pd.testing.assert_frame_equal(docs, expected[0])
        pd.testing.assert_frame_equal(spans, expected[1])


def test_seeded_split_by_unit_follows_the_fractions():
    fractions = {"train": 0.8, "dev": 0.1, "test": 0.1}
    counts = Counter(seeded_split(f"u{i}", fractions, 0) for i in range(5000))
    assert abs(counts["train"] / 5000 - 0.8) < 0.03 and abs(counts["test"] / 5000 - 0.1) < 0.02
    assert [seeded_split(f"u{i}", fractions, 0) for i in range(50)] == [
        seeded_split(f"u{i}", fractions, 0) for i in range(50)
    ]
    assert [seeded_split(f"u{i}", fractions, 0) for i in range(50)] != [
        seeded_split(f"u{i}", fractions, 1) for i in range(50)
    ]


def test_documents_of_one_unit_share_a_split(tmp_path):
    rows = [{"doc_id": f"d{i}", "unit_id": f"u{i % 40}", "text": TEXT} for i in range(400)]
    docs, _ = ingest(
        write_jsonl(tmp_path / "c.jsonl", rows), split_fractions={"train": 0.6, "dev": 0.2, "test": 0.2}
    )
    assert (docs.groupby("unit_id")["split"].nunique() == 1).all()
    assert set(docs["split"]) == {"train", "dev", "test"}


def test_a_coin_split_draws_every_unit_whatever_its_given_split(tmp_path, caplog):
    # every record says train; the coin draws each unit (two documents a unit) against the fractions
    rows = [
        {**records(1)[0], "doc_id": f"d{i}", "unit_id": f"u{i // 2}", "split": "train"} for i in range(200)
    ]
    fractions = {"train": 0.5, "dev": 0.25, "test": 0.25}
    with caplog.at_level("INFO"):
        docs, _ = ingest(write_jsonl(tmp_path / "c.jsonl", rows), split="coin", split_fractions=fractions)
    split_of = docs.groupby("unit_id")["split"].agg(set)
    assert (split_of.map(len) == 1).all()
    assert {unit: split.pop() for unit, split in split_of.items()} == {
        f"u{u}": seeded_split(f"u{u}", fractions, 0) for u in range(100)
    }
    moved = int((docs.drop_duplicates("doc_id")["split"] != "train").sum())
    assert 0 < moved < 200 and f"split: coin: {moved} of 200 documents moved" in caplog.text
    # without the key the given split is kept (here, all in train: refused, dev and test would be empty)
    with pytest.raises(InputError, match="split.s. dev, test hold no document"):
        ingest(tmp_path / "c.jsonl", split_fractions=fractions)
    # another seed draws another split
    other, _ = ingest(tmp_path / "c.jsonl", split="coin", split_fractions=fractions, split_seed=1)
    assert list(other["split"]) != list(docs["split"])


def test_streamed_files_equal_the_tables(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", records(n=9))
    docs, spans = ingest(path)
    write_dataset(
        [path],
        dataset(path),
        "error",
        PLACEHOLDER_TYPES,
        tmp_path / "docs.parquet",
        tmp_path / "spans.parquet",
    )
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "docs.parquet"), docs)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "spans.parquet"), spans, check_dtype=False)


def test_paragraph_break_line_break(tmp_path):
    rows = [{"text": "one\ntwo\nthree", "split": s} for s in ("train", "dev", "test")]
    docs, _ = ingest(write_jsonl(tmp_path / "c.jsonl", rows), paragraph_break="line_break")
    assert docs[docs["doc_id"] == "record-1"]["text"].tolist() == ["one", "two"]


def bad_span(**change) -> dict:
    return {**SPANS[0], **change}


BAD_RECORDS = {
    "missing text": ({"text": None}, "line 2 (doc_id d1): field 'text' missing or not a string"),
    "span outside": ({"spans": [bad_span(end=999)]}, "line 2 (doc_id d1): span 9-999 lies outside the text"),
    "negative span": ({"spans": [bad_span(start=-1)]}, "span -1-18 lies outside the text"),
    "unknown label": (
        {"spans": [bad_span(label="PET")]},
        "span 9-18 has label 'PET', which label_map does not map",
    ),
    "overlap": (
        {"spans": [SPANS[0], {"start": 14, "end": 28, "label": "CITY"}]},
        "spans 9-18 (NAME) and 14-28 (CITY) overlap with different types",
    ),
    "wrong span text": (
        {"spans": [bad_span(text="Anna")]},
        "span 9-18 gives 'Anna Berg' but its text is 'Anna'",
    ),
    "bad split": ({"split": "validation"}, "split 'validation' is not one of"),
    "bad label": ({"label": {"a": 1}}, "field 'label' is a string or a list of strings"),
}


@pytest.mark.parametrize("case", BAD_RECORDS)
def test_bad_record_is_one_line_naming_file_and_record_and_writes_nothing(tmp_path, case):
    change, message = BAD_RECORDS[case]
    rows = records(n=5)
    rows[1] = {key: value for key, value in {**rows[1], **change}.items() if value is not None}
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    with pytest.raises(InputError) as error:
        write_dataset(
            [path],
            dataset(path),
            "error",
            PLACEHOLDER_TYPES,
            tmp_path / "docs.parquet",
            tmp_path / "spans.parquet",
        )
    assert message in str(error.value) and str(path) in str(error.value)
    assert "\n" not in str(error.value)
    assert not list(tmp_path.glob("*.parquet*"))
    docs, _ = ingest(path, on_invalid="drop")  # dropped and counted instead
    assert set(docs["doc_id"]) == {"d0", "d2", "d3", "d4"}


def test_overlapping_spans_of_one_type_are_kept(tmp_path):
    rows = records()
    rows[0]["spans"] = [SPANS[0], {"start": 14, "end": 18, "label": "NAME"}]
    _, spans = ingest(write_jsonl(tmp_path / "c.jsonl", rows))
    assert spans[spans["doc_id"] == "d0"]["text"].tolist() == ["Anna Berg", "Berg"]


def test_duplicate_doc_id_and_empty_split_are_errors(tmp_path):
    rows = records()
    rows[2]["doc_id"] = "d0"
    with pytest.raises(InputError, match=r"c\.jsonl: document d0: duplicate document id"):
        ingest(write_jsonl(tmp_path / "c.jsonl", rows), on_invalid="drop")
    rows = [row for row in records(n=6) if row["split"] != "dev"]
    with pytest.raises(InputError, match=r"c\.jsonl: split\(s\) dev hold no document"):
        ingest(write_jsonl(tmp_path / "c.jsonl", rows))


def test_broken_csv_quote_names_the_record(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(
        'doc_id,text,split\nd0,"fine\n\ntext",train\nd1,"never closed,dev\nd2,more,test\n', encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"c\.csv: record on line \d+: broken CSV"):
        ingest(path)
    path.write_text('doc_id,text,split\nd0,"closed" then text,train\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.csv: record on line 2: broken CSV"):
        ingest(path)


def test_malformed_jsonl_line_and_unknown_extension(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(records()[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.jsonl: line 2: malformed JSON"):
        ingest(path)
    with pytest.raises(InputError, match=r"extension '\.txt' is not one of"):
        ingest(tmp_path / "c.txt")


def write_empty(path: Path, kind: str) -> Path:
    """An input file that holds no record, of each kind an empty file takes."""
    if kind == "header only":
        path.write_text("doc_id,text,split,spans\n", encoding="utf-8")
    elif kind == "no rows":
        pd.DataFrame({"doc_id": pd.Series([], dtype=str), "text": pd.Series([], dtype=str)}).to_parquet(path)
    else:
        path.write_bytes({"no bytes": b"", "blank lines": b"\n  \n\n"}[kind])
    return path


@pytest.mark.parametrize(
    "name, kind",
    [
        ("c.jsonl", "no bytes"),
        ("c.jsonl", "blank lines"),
        ("c.csv", "no bytes"),
        ("c.csv", "header only"),
        ("c.parquet", "no bytes"),
        ("c.parquet", "no rows"),
    ],
)
def test_an_empty_file_is_named_as_empty(tmp_path, name, kind):
    """Not `has no spans` (the known-setting check) or `split(s) hold no document` (ingestion)."""
    path = write_empty(tmp_path / name, kind)
    expected = f"{path}: the file is empty: it holds no record"
    with pytest.raises(InputError) as error:
        check_known_setting({"mine": dataset(path)}, ["known", "unknown"])
    assert str(error.value) == expected
    with pytest.raises(InputError) as error:
        ingest(path)
    assert str(error.value) == expected


def test_a_missing_file_or_a_folder_is_one_line(tmp_path):
    with pytest.raises(InputError) as error:
        ingest(tmp_path / "missing.jsonl")
    assert str(error.value) == f"{tmp_path / 'missing.jsonl'}: no such file"
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(InputError) as error:
        ingest(tmp_path / "folder.csv")
    assert str(error.value) == f"{tmp_path / 'folder.csv'}: not a file (a folder?)"


def test_a_file_that_is_not_parquet_is_named_before_spans_are_looked_for(tmp_path):
    path = tmp_path / "c.parquet"
    path.write_text("doc_id,text\nd0,hello\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.parquet: not a readable Parquet file"):
        check_known_setting({"mine": dataset(path)}, ["known"])


def test_known_setting_needs_spans(tmp_path):
    plain = write_jsonl(tmp_path / "plain.jsonl", [{"text": TEXT}])
    annotated = write_jsonl(tmp_path / "annotated.jsonl", records())
    assert not has_spans(plain) and has_spans(annotated)
    check_known_setting({"mine": dataset(plain)}, ["unknown"])
    check_known_setting({"mine": dataset(annotated)}, ["known", "unknown"])
    with pytest.raises(
        ValueError, match=r"dataset mine \(.*plain\.jsonl\) has no `spans`.*settings: \[unknown\]"
    ):
        check_known_setting({"mine": dataset(plain)}, ["known", "unknown"])
