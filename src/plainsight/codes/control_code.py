"""Control codes: the private values of a segment, one line per entity type.

    PERSON: Mr Henrik Hasslund, Ms Nina Holst-Christensen
    DATETIME: 15 October 2004

An entity list is a list of (type, value) pairs; the text form is derived from it.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from plainsight.entities import ENTITY_TYPES, IDENTIFIER_SETS
from plainsight.matching import normalise_value

Entities = list[tuple[str, str]]


def build_entities(pairs: Iterable[tuple[str, str]]) -> Entities:
    """Group by type in the fixed type order; deduplicate values keeping first appearance."""
    by_type: dict[str, list[str]] = {t: [] for t in ENTITY_TYPES}
    for entity_type, value in pairs:
        value = normalise_value(value)
        if value and value not in by_type[entity_type]:
            by_type[entity_type].append(value)
    return [(t, v) for t in ENTITY_TYPES for v in by_type[t]]


def format_code(entities: Entities) -> str:
    lines = []
    for entity_type in ENTITY_TYPES:
        values = [v for t, v in entities if t == entity_type]
        if values:
            lines.append(f"{entity_type}: {', '.join(values)}")
    return "\n".join(lines)


def type_counts(entities: Entities) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entity_type, _ in entities:
        counts[entity_type] = counts.get(entity_type, 0) + 1
    return counts


def select_spans(spans: pd.DataFrame, identifier_set: str) -> pd.DataFrame:
    """Gold spans of the identifier set (`direct`, `quasi` or `both`)."""
    return spans[spans["identifier_type"].isin(IDENTIFIER_SETS[identifier_set])]


def codes_table(docs: pd.DataFrame, detected: pd.DataFrame) -> pd.DataFrame:
    """One row per segment with its entity list and code text.

    `detected` has one row per found value (doc_id, segment, start, entity_type, text),
    from gold spans or from a detector; segments without any value get an empty code.
    """
    ordered = detected.sort_values(["doc_id", "segment", "start"], kind="stable")
    grouped = {
        key: build_entities(zip(g["entity_type"], g["text"]))
        for key, g in ordered.groupby(["doc_id", "segment"], sort=False)
    }
    rows = []
    for doc in docs.itertuples(index=False):
        entities = grouped.get((doc.doc_id, doc.segment), [])
        rows.append(
            {
                "doc_id": doc.doc_id,
                "segment": doc.segment,
                "split": doc.split,
                "code": format_code(entities),
                "entities": entities_to_records(entities),
            }
        )
    return pd.DataFrame(rows, columns=["doc_id", "segment", "split", "code", "entities"])


def entities_to_records(entities: Entities) -> list[dict[str, str]]:
    """The Parquet form: a list of {type, value} structs."""
    return [{"type": t, "value": v} for t, v in entities]


def records_to_entities(records: Iterable[dict[str, str]]) -> Entities:
    return [(r["type"], r["value"]) for r in records]


def setting_codes(docs: pd.DataFrame, values: pd.DataFrame, identifier_set: str) -> pd.DataFrame:
    """Rule `control_codes`: one real control code per segment, from the setting's values (gold spans or
    Presidio's findings) of one identifier set."""
    return codes_table(docs, select_spans(values, identifier_set))
