"""Checks on the shipped fictional demo corpora in ``resources/demo``.

The files are read directly (json / csv / pandas), independently of the
``plainsight`` package, so these tests describe the on-disk formats.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo"
TAB_DIR = DEMO / "tab"
NOTEEVENTS = DEMO / "mimic" / "NOTEEVENTS.csv"
CASENOTES = DEMO / "casenotes.jsonl"
GENERATOR_DIR = ROOT / "tools" / "demo_corpora"
GENERATOR = GENERATOR_DIR / "make_demo_corpora.py"

SPLITS = {"train": 60, "dev": 10, "test": 10}
ENTITY_TYPES = {"PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC"}
IDENTIFIER_TYPES = {"DIRECT", "QUASI", "NO_MASK"}
MIMIC_HEADER = (
    "ROW_ID,SUBJECT_ID,HADM_ID,CHARTDATE,CHARTTIME,STORETIME,CATEGORY,DESCRIPTION,CGID,ISERROR,TEXT"
)
PLACEHOLDER = re.compile(r"\[\*\*(.*?)\*\*\]")
MIN_PARAGRAPHS = 14


def load_fictional_pool_terms() -> tuple[str, ...]:
    """The pool values of resources/fictional_pools.yaml, as the generator reads them."""
    spec = importlib.util.spec_from_file_location("fictional_pools", GENERATOR_DIR / "fictional_pools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fictional_pool_terms()


# Fictional pools used elsewhere in the project: the demo corpora must not contain them.
FICTIONAL_POOLS = load_fictional_pool_terms()


def paragraphs(text: str) -> list[str]:
    return text.split("\n\n")


def load_split(split: str) -> list[dict]:
    return json.loads((TAB_DIR / f"echr_{split}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tab() -> dict[str, list[dict]]:
    return {split: load_split(split) for split in SPLITS}


@pytest.fixture(scope="module")
def tab_docs(tab) -> list[dict]:
    return [doc for docs in tab.values() for doc in docs]


@pytest.fixture(scope="module")
def notes() -> pd.DataFrame:
    return pd.read_csv(NOTEEVENTS, dtype={"TEXT": str}, keep_default_na=False)


def all_mentions(doc: dict):
    for annotator, annotation in doc["annotations"].items():
        for mention in annotation["entity_mentions"]:
            yield annotator, mention


# ---------------------------------------------------------------------------
# TAB (ECHR) format
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("split", SPLITS)
def test_split_sizes_and_dataset_type(tab, split):
    docs = tab[split]
    assert len(docs) >= SPLITS[split]
    assert {doc["dataset_type"] for doc in docs} == {split}


def test_document_schema(tab_docs):
    for doc in tab_docs:
        assert set(doc) >= {
            "doc_id",
            "dataset_type",
            "text",
            "meta",
            "task",
            "quality_checked",
            "annotations",
        }
        assert re.fullmatch(r"001-9\d{4}", doc["doc_id"])
        assert set(doc["meta"]) >= {"year", "legal_branch", "articles", "countries", "applicant"}
        assert (
            doc["task"]
            == f"Task: Annotate the document to anonymise the following person: {doc['meta']['applicant']}"
        )
        assert set(doc["quality_checked"]) <= set(doc["annotations"])
        assert 2000 <= len(doc["text"]) <= 5000


def test_doc_ids_unique_across_splits(tab_docs):
    ids = [doc["doc_id"] for doc in tab_docs]
    assert len(ids) == len(set(ids))


def test_mention_offsets_match_span_text(tab_docs):
    for doc in tab_docs:
        for annotator, m in all_mentions(doc):
            assert doc["text"][m["start_offset"] : m["end_offset"]] == m["span_text"], (
                doc["doc_id"],
                annotator,
                m,
            )


def test_mentions_are_well_formed(tab_docs):
    for doc in tab_docs:
        for annotation in doc["annotations"].values():
            mentions = annotation["entity_mentions"]
            assert [m["start_offset"] for m in mentions] == sorted(m["start_offset"] for m in mentions)
            ids = {m["entity_mention_id"] for m in mentions}
            assert len(ids) == len(mentions)
            for m in mentions:
                assert m["entity_type"] in ENTITY_TYPES
                assert m["identifier_type"] in IDENTIFIER_TYPES
                assert m["edit_type"] in {"check", "insert", "correct"}
                assert m["entity_mention_id"].startswith(doc["doc_id"] + "_a")
                assert m["entity_id"].startswith(doc["doc_id"] + "_a")
                assert set(m.get("related_mentions", [])) <= ids


def test_same_entity_has_one_type(tab_docs):
    for doc in tab_docs:
        for annotation in doc["annotations"].values():
            types: dict[str, set] = {}
            for m in annotation["entity_mentions"]:
                types.setdefault(m["entity_id"], set()).add(m["entity_type"])
            assert all(len(t) == 1 for t in types.values())


def test_all_entity_and_identifier_types_present(tab_docs):
    mentions = [m for doc in tab_docs for _, m in all_mentions(doc)]
    assert {m["entity_type"] for m in mentions} == ENTITY_TYPES
    assert {m["identifier_type"] for m in mentions} == IDENTIFIER_TYPES
    docs_per_type = Counter(t for doc in tab_docs for t in {m["entity_type"] for _, m in all_mentions(doc)})
    assert all(docs_per_type[t] >= 20 for t in ENTITY_TYPES), docs_per_type
    assert any("related_mentions" in m for m in mentions)
    assert {m["confidential_status"] for m in mentions} > {"NOT_CONFIDENTIAL"}


def test_tab_documents_have_enough_paragraphs(tab_docs):
    for doc in tab_docs:
        assert len(paragraphs(doc["text"])) >= MIN_PARAGRAPHS, doc["doc_id"]


def test_direct_identifiers_in_both_paragraph_ranges(tab_docs):
    for doc in tab_docs:
        starts, pos = [], 0
        for para in paragraphs(doc["text"]):
            starts.append(pos)
            pos += len(para) + 2
        direct = {
            sum(s <= m["start_offset"] for s in starts) - 1
            for _, m in all_mentions(doc)
            if m["identifier_type"] == "DIRECT"
        }
        assert direct & set(range(1, 6)), doc["doc_id"]
        assert direct & set(range(6, 12)), doc["doc_id"]


def test_dev_and_test_have_several_annotators(tab):
    for split in ("dev", "test"):
        for doc in tab[split]:
            assert len(doc["annotations"]) >= 2, doc["doc_id"]
        assert any(doc["quality_checked"] for doc in tab[split])
        assert not all(doc["quality_checked"] for doc in tab[split])


def test_annotators_disagree_a_little(tab):
    disagreements = 0
    for split in ("dev", "test"):
        for doc in tab[split]:
            labels = [
                {(m["start_offset"], m["end_offset"], m["identifier_type"]) for m in a["entity_mentions"]}
                for a in doc["annotations"].values()
            ]
            spans = [{(start, end) for start, end, _ in version} for version in labels]
            assert len(set.intersection(*spans)) >= 0.9 * len(set.union(*spans)), doc["doc_id"]
            disagreements += set.union(*labels) != set.intersection(*labels)
    assert disagreements > 0


def test_tab_has_unicode():
    raw = "".join((TAB_DIR / f"echr_{split}.json").read_text(encoding="utf-8") for split in SPLITS)
    for char in "“”ışğ":
        assert char in raw


# ---------------------------------------------------------------------------
# MIMIC-III NOTEEVENTS format
# ---------------------------------------------------------------------------


def test_mimic_header_is_exact():
    with open(NOTEEVENTS, encoding="utf-8", newline="") as fh:
        assert next(csv.reader(fh)) == MIMIC_HEADER.split(",")


def test_mimic_rows(notes):
    assert len(notes) >= 60
    assert notes["ROW_ID"].is_unique
    assert (notes["CATEGORY"] == "Discharge summary").mean() > 0.5
    assert set(notes.loc[notes["CATEGORY"] == "Discharge summary", "DESCRIPTION"]) == {"Report"}
    assert notes["CHARTDATE"].str.fullmatch(r"2\d{3}-\d{2}-\d{2}").all()
    assert (notes["ISERROR"] == "").all()
    for column in ("ROW_ID", "SUBJECT_ID", "HADM_ID"):
        assert pd.api.types.is_integer_dtype(notes[column])


def test_mimic_texts_have_placeholders_and_paragraphs(notes):
    for row_id, text in zip(notes["ROW_ID"], notes["TEXT"]):
        assert PLACEHOLDER.search(text), row_id
        paras = paragraphs(text.strip())
        assert len(paras) >= MIN_PARAGRAPHS, row_id
        assert sum(bool(PLACEHOLDER.search(p)) for p in paras[1:13]) >= 6, row_id


def test_mimic_placeholders_are_varied(notes):
    raw = [label for text in notes["TEXT"] for label in PLACEHOLDER.findall(text)]
    assert any(re.fullmatch(r"2\d{3}-\d{1,2}-\d{1,2}", label) for label in raw)  # [**2151-7-16**]
    assert any(re.fullmatch(r"\d{1,2}-\d{1,2}", label) for label in raw)  # [**7-16**]
    assert any(re.fullmatch(r"2\d{3}", label) for label in raw)  # [**2148**]
    labels = {re.sub(r"\s*\d*$", "", label) for label in raw if re.search(r"[A-Za-z]", label)}
    assert len(labels) >= 30, sorted(labels)


# ---------------------------------------------------------------------------
# Social-services case notes (generic JSONL)
# ---------------------------------------------------------------------------

CASENOTE_LABELS = {
    "CLIENT",
    "WORKER",
    "CASE_NUMBER",
    "DATE",
    "DATE_OF_BIRTH",
    "ADDRESS",
    "TOWN",
    "AGENCY",
    "AGE",
    "AMOUNT",
}


@pytest.fixture(scope="module")
def casenotes() -> list[dict]:
    return [json.loads(line) for line in CASENOTES.read_text(encoding="utf-8").splitlines()]


def test_casenotes_records(casenotes):
    assert len(casenotes) == 80
    assert len({note["doc_id"] for note in casenotes}) == 80
    for note in casenotes:
        assert set(note) == {"doc_id", "unit_id", "split", "label", "group", "text", "spans"}
        assert len(paragraphs(note["text"])) == 9
        for span in note["spans"]:
            assert span["label"] in CASENOTE_LABELS and 0 <= span["start"] < span["end"] <= len(note["text"])
    assert Counter(note["split"] for note in casenotes).keys() == {"train", "dev", "test"}
    assert {note["group"] for note in casenotes} == {"north", "south", "east", "west"}
    assert len({note["label"] for note in casenotes}) == 5
    assert {span["label"] for note in casenotes for span in note["spans"]} == CASENOTE_LABELS


def test_casenotes_clients_are_units_within_one_split(casenotes):
    notes_per_client = Counter(note["unit_id"] for note in casenotes)
    assert len(notes_per_client) == 30 and set(notes_per_client.values()) == {2, 3}
    splits = {(note["unit_id"], note["split"]) for note in casenotes}
    assert len(splits) == 30
    for note in casenotes:  # the client's name is annotated in the first paragraph of each of their notes
        first = paragraphs(note["text"])[0]
        assert any(s["label"] == "CLIENT" and s["end"] <= len(first) for s in note["spans"]), note["doc_id"]


# ---------------------------------------------------------------------------
# All corpora
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", [*(TAB_DIR / f"echr_{s}.json" for s in SPLITS), NOTEEVENTS, CASENOTES], ids=lambda p: p.name
)
def test_no_values_from_the_fictional_pools(path):
    raw = path.read_text(encoding="utf-8")
    for term in FICTIONAL_POOLS:
        assert not re.search(rf"\b{re.escape(term)}\b", raw), (path.name, term)


def test_fictional_pool_terms_cover_names_places_and_organisations():
    assert {"Alex", "Lewis", "Seattle", "Brazil", "Baker St", "Pier 39", "UNICEF"} <= set(FICTIONAL_POOLS)
    assert not {"Mr", "nurse"} & set(FICTIONAL_POOLS)


def test_generator_regenerates_the_shipped_files_byte_for_byte(tmp_path):
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    shipped = sorted(p.relative_to(DEMO) for p in DEMO.rglob("*") if p.suffix in {".json", ".csv", ".jsonl"})
    regenerated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert shipped == regenerated
    for rel in shipped:
        assert (tmp_path / rel).read_bytes() == (DEMO / rel).read_bytes(), rel
