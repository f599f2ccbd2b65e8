"""Shared helpers: paths into the repository and tiny TAB documents built in code."""

from __future__ import annotations

import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESOURCES = REPO_ROOT / "resources"
PLACEHOLDER_TYPES = RESOURCES / "mimic_placeholder_types.yaml"
FICTIONAL_POOLS = RESOURCES / "fictional_pools.yaml"
PRESIDIO_ENTITY_MAP = RESOURCES / "presidio_entity_map.yaml"
TAB_SAMPLE = Path(__file__).resolve().parents[2] / "shared/data/tab/echr_dev_sample.json"

SEGMENTS = [(1, 6), (6, 12)]


def paragraphs_text(paragraphs: list[str]) -> str:
    return "\n\n".join(paragraphs)


def make_mention(doc_id: str, text: str, span_text: str, entity_type: str = "PERSON",
                 identifier_type: str = "DIRECT", number: int = 1, occurrence: int = 0,
                 tag: str = "a1") -> dict:
    """A TAB entity mention for the `occurrence`-th appearance of `span_text` in `text`."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(span_text, start + 1)
    return {
        "entity_type": entity_type,
        "entity_mention_id": f"{doc_id}_{tag}_em{number}",
        "start_offset": start,
        "end_offset": start + len(span_text),
        "span_text": span_text,
        "edit_type": "check",
        "identifier_type": identifier_type,
        "entity_id": f"{doc_id}_{tag}_e{number}",
        "confidential_status": "NOT_CONFIDENTIAL",
    }


def make_tab_document(doc_id: str, paragraphs: list[str], mentions: list[tuple], split: str = "train",
                      annotators: tuple[str, ...] = ("annotator1",), quality_checked: list[str] | None = None) -> dict:
    """A TAB-format document; `mentions` are (span_text, entity_type, identifier_type) triples.

    Every annotator gets the same mentions; use `annotations` directly for different ones.
    """
    text = paragraphs_text(paragraphs)
    entity_mentions = [make_mention(doc_id, text, span, etype, itype, number)
                       for number, (span, etype, itype) in enumerate(mentions, start=1)]
    return {
        "doc_id": doc_id,
        "dataset_type": split,
        "text": text,
        "meta": {"year": 2007, "applicant": "Test Person"},
        "task": "Task: Annotate the document to anonymise the following person: Test Person",
        "quality_checked": list(quality_checked) if quality_checked is not None else [annotators[0]],
        "annotations": {name: {"entity_mentions": [dict(m) for m in entity_mentions]} for name in annotators},
    }


def numbered_paragraphs(doc_id: str, count: int) -> list[str]:
    return [f"Paragraph {n} of {doc_id}." for n in range(1, count + 1)]


def write_json(obj, path: Path) -> Path:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    return path
