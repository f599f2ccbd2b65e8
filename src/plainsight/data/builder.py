"""Shared corpus assembly: validated documents -> segment rows and span rows.

Every reader (TAB, MIMIC, generic) hands its documents to one `CorpusBuilder`, so all three write the
same Parquet schema. Rows are kept as Arrow record batches of `BATCH_ROWS` rows: in memory for
`tables()`, or streamed into Parquet files by `write()`, so that ingesting a large corpus holds
one batch of rows at a time, not the corpus.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from plainsight.data.problems import ProblemPolicy
from plainsight.data.segments import min_paragraphs, paragraph_bounds, segment_document
from plainsight.entities import DOC_COLUMNS, SPAN_COLUMNS, Span
from plainsight.errors import InputError
from plainsight.io import atomic_path

log = logging.getLogger(__name__)

BATCH_ROWS = 2048
_TYPED_COLUMNS = {
    "segment": pa.int64(),
    "start": pa.int64(),
    "end": pa.int64(),
    "labels": pa.list_(pa.string()),
}
DOCS_SCHEMA = pa.schema([(name, _TYPED_COLUMNS.get(name, pa.string())) for name in DOC_COLUMNS])
SPANS_SCHEMA = pa.schema([(name, _TYPED_COLUMNS.get(name, pa.string())) for name in SPAN_COLUMNS])


class _Rows:
    """Rows of one table, turned into Arrow batches as they fill; kept, or written to `writer`."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.pending: list[dict] = []
        self.batches: list[pa.RecordBatch] = []
        self.writer: pq.ParquetWriter | None = None
        self.count = 0

    def append(self, row: dict) -> None:
        self.pending.append(row)
        self.count += 1
        if len(self.pending) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        batch = pa.RecordBatch.from_pylist(self.pending, schema=self.schema)
        self.pending = []
        if self.writer is None:
            self.batches.append(batch)
        else:
            self.writer.write_batch(batch)

    def table(self) -> pa.Table:
        self.flush()
        return pa.Table.from_batches(self.batches, schema=self.schema)


@dataclass(frozen=True)
class SourceDocument:
    """One document as a loader reads it, before segmentation: its split as the source gives it, the
    annotator of its spans, its privacy unit (its own id, or its patient's), and the downstream task's
    `labels` and a subgroup `group` (a country, a gender), which every segment of it carries."""

    doc_id: str
    split: str
    text: str
    annotator: str
    spans: list[Span]
    unit_id: str
    labels: Sequence[str] = ()
    group: str | None = None


class CorpusBuilder:
    """Collects documents, segments them, and yields (or writes) the docs and spans tables."""

    def __init__(
        self,
        ranges: list[tuple[int, int]],
        policy: ProblemPolicy,
        paragraph_break: str = "blank_line",
        drawn_split: Callable[[str], str] | None = None,
    ):
        """`drawn_split`: a unit's split drawn at random (`split: coin`), in place of the source's."""
        self.ranges = [tuple(r) for r in ranges]
        self.drawn_split = drawn_split
        self.moved: Counter = Counter()  # (given split, drawn split) -> documents, with `drawn_split`
        self.policy = policy
        self.paragraph_break = paragraph_break
        self.docs = _Rows(DOCS_SCHEMA)
        self.spans = _Rows(SPANS_SCHEMA)
        self.counts: Counter = Counter()
        self.split_documents: Counter = Counter()
        self._seen: set[str] = set()
        # unit -> split -> its documents there, and the file each unit was read from
        self._unit_documents: dict[str, dict[str, list[str]]] = {}
        self._unit_files: dict[str, str] = {}

    def add(self, path: str | Path, document: SourceDocument) -> None:
        """Segment one document of the file `path` (errors name it)."""
        doc_id, split, text, unit_id = document.doc_id, document.split, document.text, document.unit_id
        record = f"document {doc_id}"
        if self.drawn_split is not None:
            given, split = split, self.drawn_split(unit_id)
            self.moved[given, split] += 1
        if doc_id in self._seen:
            self.policy.fatal(InputError(path, record, "duplicate document id"))
            return
        self._seen.add(doc_id)
        self._unit_documents.setdefault(unit_id, {}).setdefault(split, []).append(doc_id)
        self._unit_files.setdefault(unit_id, str(path))
        if not text.strip():
            self.policy.report(InputError(path, record, "document text is empty"), "empty document")
            return
        needed = min_paragraphs(self.ranges)
        found = len(paragraph_bounds(text, self.paragraph_break))
        if found < needed:
            problem = f"document has {found} paragraphs, segmentation needs at least {needed}"
            self.policy.report(InputError(path, record, problem), "short document")
            return
        for segment in segment_document(text, document.spans, self.ranges, self.paragraph_break):
            self.counts["crossing spans dropped"] += segment.crossing_spans
            self.docs.append(
                {
                    "doc_id": doc_id,
                    "split": split,
                    "segment": segment.index,
                    "text": segment.text,
                    "annotator": document.annotator,
                    "unit_id": unit_id,
                    "labels": list(document.labels),
                    "group": document.group,
                }
            )
            for span in segment.spans:
                self.spans.append(
                    {
                        "doc_id": doc_id,
                        "segment": segment.index,
                        "start": span.start,
                        "end": span.end,
                        "text": span.text,
                        "entity_type": span.entity_type,
                        "identifier_type": span.identifier_type,
                        "entity_id": span.entity_id,
                        "mention_id": span.mention_id,
                        "raw_label": span.raw_label,
                    }
                )
        self.counts["documents"] += 1
        self.split_documents[split] += 1

    @contextlib.contextmanager
    def writing(self, docs_path: str | Path, spans_path: str | Path):
        """Stream the rows added inside the block into the two Parquet files, written all-or-nothing."""
        with (
            atomic_path(docs_path) as docs_tmp,
            atomic_path(spans_path) as spans_tmp,
            pq.ParquetWriter(docs_tmp, DOCS_SCHEMA) as docs_writer,
            pq.ParquetWriter(spans_tmp, SPANS_SCHEMA) as spans_writer,
        ):
            self.docs.writer, self.spans.writer = docs_writer, spans_writer
            yield self
            self.docs.flush()
            self.spans.flush()
            self._check_units_in_one_split()
            self._check_not_empty()
            self._log_summary()

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        self._check_units_in_one_split()
        self._check_not_empty()
        docs = self.docs.table().to_pandas()
        spans = self.spans.table().to_pandas().astype({"raw_label": "string"})
        self._log_summary()
        return docs, spans

    def _check_units_in_one_split(self) -> None:
        """A privacy unit's documents share one split: a unit in the training and a held-out split would put
        its values on both sides of the held-out control."""
        for unit, splits in self._unit_documents.items():
            if len(splits) > 1:
                where = "; ".join(f"{split}: {', '.join(docs)}" for split, docs in sorted(splits.items()))
                problem = (
                    f"its documents are in {len(splits)} splits ({where}); a unit's documents share one split"
                )
                self.policy.fatal(InputError(self._unit_files[unit], f"unit {unit}", problem))

    def _check_not_empty(self) -> None:
        if not self.docs.count:
            raise InputError("corpus", None, "no valid document left after ingestion")

    def _log_summary(self) -> None:
        summary = dict(self.counts) | {f"dropped {k}": v for k, v in self.policy.dropped.items()}
        log.info("corpus: %d segments, %d spans; %s", self.docs.count, self.spans.count, summary)
        if self.drawn_split is not None:
            moved = sum(n for (given, drawn), n in self.moved.items() if given != drawn)
            counts = ", ".join(f"{given} -> {drawn}: {n}" for (given, drawn), n in sorted(self.moved.items()))
            total = sum(self.moved.values())
            log.info("split: coin: %d of %d documents moved from the given split (%s)", moved, total, counts)
