"""Shared corpus assembly: validated documents -> segment rows and span rows."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Sequence

import pandas as pd
import pyarrow as pa

from plainsight.data.problems import ProblemPolicy
from plainsight.data.segments import min_paragraphs, paragraph_bounds, segment_document
from plainsight.entities import DOC_COLUMNS, SPAN_COLUMNS, Span
from plainsight.errors import InputError

log = logging.getLogger(__name__)

# The Parquet types of docs columns whose values may not show them: every document without a label
# (an empty list each) or without a group (all null). `plainsight.io.write_parquet(docs, path, DOC_TYPES)`.
DOC_TYPES = {"labels": pa.list_(pa.string()), "group": pa.string()}


class CorpusBuilder:
    """Collects documents, segments them, and yields the docs and spans tables."""

    def __init__(self, ranges: list[tuple[int, int]], policy: ProblemPolicy):
        self.ranges = [tuple(r) for r in ranges]
        self.policy = policy
        self.doc_rows: list[dict] = []
        self.span_rows: list[dict] = []
        self.counts: Counter = Counter()
        self._seen: set[str] = set()

    def add(self, path: str | Path, doc_id: str, split: str, text: str, annotator: str, spans: list[Span],
            unit_id: str, labels: Sequence[str] = (), group: str | None = None) -> None:
        """Segment one document; `unit_id` is its privacy unit (its own id, or its patient's); every
        segment carries the document's `labels` and `group`."""
        record = f"document {doc_id}"
        if doc_id in self._seen:
            raise InputError(path, record, "duplicate document id")
        self._seen.add(doc_id)
        if not text.strip():
            self.policy.report(InputError(path, record, "document text is empty"), "empty document")
            return
        needed = min_paragraphs(self.ranges)
        found = len(paragraph_bounds(text))
        if found < needed:
            problem = f"document has {found} paragraphs, segmentation needs at least {needed}"
            self.policy.report(InputError(path, record, problem), "short document")
            return
        for segment in segment_document(text, spans, self.ranges):
            self.counts["crossing spans dropped"] += segment.crossing_spans
            self.doc_rows.append({"doc_id": doc_id, "split": split, "segment": segment.index,
                                  "text": segment.text, "annotator": annotator, "unit_id": unit_id,
                                  "labels": list(labels), "group": group})
            for span in segment.spans:
                self.span_rows.append({"doc_id": doc_id, "segment": segment.index, "start": span.start,
                                       "end": span.end, "text": span.text, "entity_type": span.entity_type,
                                       "identifier_type": span.identifier_type, "entity_id": span.entity_id,
                                       "mention_id": span.mention_id, "raw_label": span.raw_label})
        self.counts["documents"] += 1

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        if not self.doc_rows:
            raise InputError("corpus", None, "no valid document left after ingestion")
        docs = pd.DataFrame(self.doc_rows, columns=list(DOC_COLUMNS))
        spans = pd.DataFrame(self.span_rows, columns=list(SPAN_COLUMNS))
        spans = spans.astype({"start": "int64", "end": "int64", "segment": "int64", "raw_label": "string"})
        docs = docs.astype({"segment": "int64"})
        summary = dict(self.counts) | {f"dropped {k}": v for k, v in self.policy.dropped.items()}
        log.info("corpus: %d segments, %d spans; %s", len(docs), len(spans), summary)
        return docs, spans
