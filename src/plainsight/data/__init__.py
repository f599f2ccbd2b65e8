"""Stage 1, data: source files (TAB JSON, MIMIC-III NOTEEVENTS, your own corpus) -> segment and span tables.

- readers: `tab` (TAB's standoff JSON), `mimic` (NOTEEVENTS placeholders), `generic` (your own corpus:
  records with optional spans, labels, group and unit) over `records` (JSONL, CSV and Parquet records,
  streamed; an empty file is one error);
- `segments` (paragraph segments and their texts), `builder` (segment and span rows, streamed into
  Parquet), `ingest` (picks the reader: rule `ingest`'s job), `problems` (`on_invalid_record`).
"""
