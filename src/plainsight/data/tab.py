"""Text Anonymization Benchmark (TAB) ingestion from its standoff JSON.

Each document carries one or more annotators; one is used per document,
deterministically: the first quality-checked annotator, else the first listed.
"""

from __future__ import annotations

import logging
import urllib.request
from pathlib import Path
from typing import Any

from plainsight.data.builder import CorpusBuilder, SourceDocument
from plainsight.data.problems import ProblemPolicy
from plainsight.entities import ENTITY_TYPES, IDENTIFIER_TYPES, Span
from plainsight.errors import InputError
from plainsight.io import atomic_path, read_json

SPLITS = ("train", "dev", "test")
_REQUIRED_DOC_FIELDS = {"doc_id": str, "dataset_type": str, "text": str, "annotations": dict}
_REQUIRED_MENTION_FIELDS = (
    "entity_type",
    "entity_mention_id",
    "start_offset",
    "end_offset",
    "span_text",
    "identifier_type",
    "entity_id",
)


def choose_annotator(document: dict[str, Any]) -> str:
    annotators = list(document["annotations"])
    for name in document.get("quality_checked") or []:
        if name in document["annotations"]:
            return name
    return annotators[0]


def read_tab_file(path: str | Path) -> list[dict[str, Any]]:
    """Parse one TAB JSON file and check the structure every later step relies on."""
    documents = read_json(path)
    if not isinstance(documents, list):
        raise InputError(path, None, f"expected a JSON list of documents, found {type(documents).__name__}")
    for position, document in enumerate(documents):
        record = f"document #{position}"
        if not isinstance(document, dict):
            raise InputError(path, record, "document is not a JSON object")
        record = f"document {document.get('doc_id', f'#{position}')}"
        for name, kind in _REQUIRED_DOC_FIELDS.items():
            if not isinstance(document.get(name), kind):
                raise InputError(path, record, f"field {name!r} missing or not a {kind.__name__}")
        if document["dataset_type"] not in SPLITS:
            raise InputError(
                path, record, f"dataset_type {document['dataset_type']!r} is not one of {SPLITS}"
            )
        if not document["annotations"]:
            raise InputError(path, record, "document has no annotations")
        for annotator, annotation in document["annotations"].items():
            if not isinstance(annotation, dict) or not isinstance(annotation.get("entity_mentions"), list):
                raise InputError(path, record, f"annotator {annotator} has no entity_mentions list")
    return documents


def mention_to_span(path: str | Path, doc_id: str, text: str, mention: Any) -> Span:
    """Validate one entity mention against its document text."""
    if not isinstance(mention, dict) or any(name not in mention for name in _REQUIRED_MENTION_FIELDS):
        missing = [n for n in _REQUIRED_MENTION_FIELDS if not isinstance(mention, dict) or n not in mention]
        raise InputError(path, f"document {doc_id}", f"entity mention lacks fields {missing}")
    record = f"document {doc_id} mention {mention['entity_mention_id']}"
    if mention["entity_type"] not in ENTITY_TYPES:
        raise InputError(
            path, record, f"unknown entity_type {mention['entity_type']!r}; expected one of {ENTITY_TYPES}"
        )
    if mention["identifier_type"] not in IDENTIFIER_TYPES:
        raise InputError(path, record, f"unknown identifier_type {mention['identifier_type']!r}")
    start, end = mention["start_offset"], mention["end_offset"]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise InputError(path, record, f"offsets {start}-{end} outside the text (length {len(text)})")
    if text[start:end] != mention["span_text"]:
        raise InputError(
            path,
            record,
            f"offsets {start}-{end} give {text[start:end]!r} but span_text is {mention['span_text']!r}",
        )
    return Span(
        start,
        end,
        mention["span_text"],
        mention["entity_type"],
        mention["identifier_type"],
        mention["entity_id"],
        mention["entity_mention_id"],
    )


def case_labels(path: str | Path, document: dict[str, Any]) -> tuple[list[str], str | None]:
    """The case's ECHR articles (`meta.articles`, as strings) and its respondent state
    (`meta.countries`); no labels and no group where the document has no `meta`."""
    meta = document.get("meta") or {}
    record = f"document {document['doc_id']}"
    articles = meta.get("articles") or []
    if not isinstance(articles, list) or not all(
        isinstance(a, (int, str)) and not isinstance(a, bool) for a in articles
    ):
        raise InputError(path, record, f"meta.articles {articles!r} is not a list of article numbers")
    country = meta.get("countries")
    if country is not None and not isinstance(country, str):
        raise InputError(path, record, f"meta.countries {country!r} is not a country code")
    return list(dict.fromkeys(str(a).strip() for a in articles)), (country or None)


def ingest_tab(paths: list[str | Path], builder: CorpusBuilder, policy: ProblemPolicy) -> None:
    """Add every document of the given TAB files to `builder`."""
    for path in paths:
        for document in read_tab_file(path):
            doc_id, text = document["doc_id"], document["text"]
            annotator = choose_annotator(document)
            labels, group = case_labels(path, document)
            spans = []
            for mention in document["annotations"][annotator]["entity_mentions"]:
                try:
                    spans.append(mention_to_span(path, doc_id, text, mention))
                except InputError as error:
                    policy.report(error, "invalid mention")
            # One court case per document: the document is the privacy unit.
            split = document["dataset_type"]
            builder.add(path, SourceDocument(doc_id, split, text, annotator, spans, doc_id, labels, group))


def download_tab(url: str, target: str | Path) -> None:
    """Rule `download_tab`: fetch one official TAB file to `target`, kept only if it parses."""
    log = logging.getLogger(__name__)
    with atomic_path(target) as tmp:
        log.info("downloading %s", url)
        urllib.request.urlretrieve(url, tmp)
        log.info("%s: %d documents", target, len(read_tab_file(tmp)))
