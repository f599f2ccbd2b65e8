"""The generic format: your own corpus as JSONL, CSV or Parquet, with or without annotations.

One record per document. `text` is required; `doc_id`, `split`, `unit_id`, `label`, `group` and
`spans` are optional. Spans are `{start, end, label}` character offsets as annotation tools export
them (Prodigy, Label Studio); the dataset's `label_map` says which of the eight entity types and
which identifier type each of the corpus's labels is. Without `split` a document's split is drawn
from a hash of its privacy unit and `split_seed`, so one unit's documents share a split and adding
documents never moves another one.

A record with a problem (no text, a span outside the text, an unknown label, overlapping spans of
different types) is an error, or with `on_invalid_record: drop` it is dropped whole and counted:
keeping it without its broken span could leave a private value unannotated.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plainsight.data.builder import CorpusBuilder, SourceDocument
from plainsight.data.problems import ProblemPolicy
from plainsight.data.records import check_has_records, iter_records, record_fields
from plainsight.entities import Span
from plainsight.errors import InputError

SPLITS = ("train", "dev", "test")
IDENTIFIERS = {"direct": "DIRECT", "quasi": "QUASI", "no_mask": "NO_MASK"}
ANNOTATOR = "generic"


@dataclass(frozen=True)
class LabelType:
    entity_type: str
    identifier_type: str  # DIRECT, QUASI or NO_MASK


@dataclass(frozen=True)
class GenericSettings:
    label_map: dict[str, LabelType]
    split_fractions: dict[str, float]
    split_seed: int

    @classmethod
    def from_config(cls, dataset: dict[str, Any]) -> GenericSettings:
        label_map = {
            str(label): LabelType(kind["type"], IDENTIFIERS[kind["identifier"]])
            for label, kind in (dataset.get("label_map") or {}).items()
        }
        fractions = dataset.get("split_fractions") or {"train": 0.8, "dev": 0.1, "test": 0.1}
        return cls(label_map, dict(fractions), int(dataset.get("split_seed", 0)))


def has_spans(path: str | Path) -> bool:
    """Whether a generic corpus carries span annotations (a `spans` field in its first record or header)."""
    return "spans" in record_fields(path)


def seeded_split(unit_id: str, fractions: dict[str, float], seed: int) -> str:
    """A unit's split: a hash of (seed, unit) against the cumulative fractions."""
    digest = hashlib.sha256(f"{seed}\0{unit_id}".encode()).hexdigest()
    bucket = int(digest[:12], 16) / float(16**12)
    cumulative = 0.0
    for split in SPLITS:
        cumulative += fractions.get(split, 0.0)
        if bucket < cumulative:
            return split
    return SPLITS[-1]


def ingest_generic(
    path: str | Path, builder: CorpusBuilder, policy: ProblemPolicy, settings: GenericSettings
) -> None:
    """Add every record of one generic file to `builder`; every split must end up with a document."""
    check_has_records(path)
    for number, (where, record) in enumerate(iter_records(path), start=1):
        doc_id = _text_field(path, where, record, "doc_id") or f"record-{number}"
        where = f"{where} (doc_id {doc_id})"
        try:
            document = _document(path, where, record, doc_id, settings)
        except InputError as error:
            policy.report(error, "invalid record")
            continue
        text, spans, unit_id, split, labels, group = document
        spans = [_with_ids(span, doc_id, n) for n, span in enumerate(spans, start=1)]
        builder.add(path, SourceDocument(doc_id, split, text, ANNOTATOR, spans, unit_id, labels, group))
    empty = [split for split in SPLITS if not builder.split_documents[split]]
    if empty:
        raise InputError(
            path,
            None,
            f"split(s) {', '.join(empty)} hold no document; give every split at least "
            "one (the `split` field, or `split_fractions`)",
        )


def _document(path: Path | str, where: str, record: dict, doc_id: str, settings: GenericSettings) -> tuple:
    text = record.get("text")
    if not isinstance(text, str):
        raise InputError(path, where, "field 'text' missing or not a string")
    unit_id = _text_field(path, where, record, "unit_id") or doc_id
    split = _text_field(path, where, record, "split") or seeded_split(
        unit_id, settings.split_fractions, settings.split_seed
    )
    if split not in SPLITS:
        raise InputError(path, where, f"split {split!r} is not one of {SPLITS}")
    spans = record_spans(path, where, text, record.get("spans") or [], settings.label_map)
    return (
        text,
        spans,
        unit_id,
        split,
        _labels(path, where, record.get("label")),
        _text_field(path, where, record, "group"),
    )


def _text_field(path: Path | str, where: str, record: dict, name: str) -> str | None:
    value = record.get(name)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(path, where, f"field {name!r} is a {type(value).__name__}, not a string")


def _labels(path: Path | str, where: str, label: Any) -> list[str]:
    if label is None:
        return []
    labels = label if isinstance(label, list) else [label]
    if not all(isinstance(item, (str, int)) and not isinstance(item, bool) for item in labels):
        raise InputError(path, where, "field 'label' is a string or a list of strings")
    return [str(item) for item in labels]


def record_spans(
    path: Path | str, where: str, text: str, raw_spans: Any, label_map: dict[str, LabelType]
) -> list[Span]:
    """The record's spans, checked against its text and the label map, in text order."""
    if not isinstance(raw_spans, list):
        raise InputError(path, where, "field 'spans' is a list of {start, end, label}")
    spans = sorted(
        (_span(path, where, text, raw, label_map) for raw in raw_spans), key=lambda s: (s.start, s.end)
    )
    for before, after in itertools.pairwise(spans):
        if after.start < before.end and after.entity_type != before.entity_type:
            raise InputError(
                path,
                where,
                f"spans {before.start}-{before.end} ({before.raw_label}) and "
                f"{after.start}-{after.end} ({after.raw_label}) overlap with different types",
            )
    return spans


def _span(path: Path | str, where: str, text: str, raw: Any, label_map: dict[str, LabelType]) -> Span:
    if not isinstance(raw, dict):
        raise InputError(path, where, "a span is an object {start, end, label}")
    start, end, label = raw.get("start"), raw.get("end"), raw.get("label")
    if label is None and isinstance(raw.get("labels"), list) and len(raw["labels"]) == 1:
        label = raw["labels"][0]  # Label Studio writes `labels: [NAME]`
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise InputError(path, where, f"span {start}-{end} lies outside the text (length {len(text)})")
    if label not in label_map:
        raise InputError(
            path,
            where,
            f"span {start}-{end} has label {label!r}, which label_map does not map "
            f"(known: {', '.join(sorted(label_map)) or 'none'})",
        )
    if "text" in raw and raw["text"] != text[start:end]:
        raise InputError(
            path, where, f"span {start}-{end} gives {text[start:end]!r} but its text is {raw['text']!r}"
        )
    kind = label_map[label]
    return Span(start, end, text[start:end], kind.entity_type, kind.identifier_type, "", "", str(label))


def _with_ids(span: Span, doc_id: str, number: int) -> Span:
    # Mentions of the same value under the same label are one entity of the document.
    entity_id = f"{doc_id}_{span.raw_label}_{span.text.casefold()}"
    return Span(
        span.start,
        span.end,
        span.text,
        span.entity_type,
        span.identifier_type,
        entity_id,
        f"{doc_id}_m{number}",
        span.raw_label,
    )


def check_known_setting(datasets: dict[str, dict], settings: list[str]) -> None:
    """Stop before any job when the `known` setting is asked of a generic corpus without spans.

    A file that is not there yet (a cost plan made before the data arrives) is not checked.
    """
    if "known" not in settings:
        return
    for name, dataset in datasets.items():
        path = dataset.get("path")
        if dataset["format"] != "generic" or not path or not Path(path).exists():
            continue
        check_has_records(path)
        if not has_spans(path):
            raise ValueError(
                f"config: settings: dataset {name} ({path}) has no `spans`, so its private values are "
                "not known; only the unknown setting (Presidio) runs on it: set `settings: [unknown]`"
            )
