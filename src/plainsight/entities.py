"""Entity categories, identifier sets and the span record shared by every dataset."""

from __future__ import annotations

from dataclasses import dataclass

# The TAB categories, in the fixed order in which control codes list them.
ENTITY_TYPES: tuple[str, ...] = ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC")
IDENTIFIER_TYPES: tuple[str, ...] = ("DIRECT", "QUASI", "NO_MASK")

# A segment of a document: (doc_id, 0-based index in the configured paragraph ranges).
SegmentKey = tuple[str, int]

# Which annotated identifier types each identifier set keeps.
IDENTIFIER_SETS: dict[str, frozenset[str]] = {
    "direct": frozenset({"DIRECT"}),
    "quasi": frozenset({"QUASI"}),
    "both": frozenset({"DIRECT", "QUASI"}),
}


@dataclass(frozen=True)
class Span:
    """A gold mention, with offsets into the text it belongs to."""

    start: int
    end: int
    text: str
    entity_type: str
    identifier_type: str
    entity_id: str
    mention_id: str
    raw_label: str | None = None


SPAN_COLUMNS: tuple[str, ...] = (
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
)
# `unit_id` is the privacy unit DP-SGD protects (plainsight.training.dp): all rows that share it
# are added or removed together. A document (TAB) yields one row per paragraph range, and one
# patient (MIMIC) may have many notes, so neither a row nor, for MIMIC, a document is the unit.
# `labels` are the document's classes for a downstream task (TAB: its ECHR articles; MIMIC: the note's
# CATEGORY; a generic record's `label`; empty when none) and `group` a subgroup of documents for fairness
# measures (TAB: the respondent state; MIMIC: none); both are the same on every segment of a document.
DOC_COLUMNS: tuple[str, ...] = (
    "doc_id",
    "split",
    "segment",
    "text",
    "annotator",
    "unit_id",
    "labels",
    "group",
)
