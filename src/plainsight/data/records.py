"""Records of a JSONL, CSV or Parquet file, read one at a time in bounded memory.

Each reader yields (where, record): `where` names the record for an error message (the line of a
JSONL file, the line a CSV record ends on, the row of a Parquet file) and `record` is a dict of its
fields. Nested fields (`spans`, a `label` list) are JSON in a CSV cell.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from plainsight.errors import InputError, empty_file

PARQUET_BATCH_ROWS = 1024
_JSON_CELLS = ("spans", "label")
# A CSV record's text may be long (a whole document); the csv module's default limit is 128 KiB.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


def record_format(path: str | Path) -> str:
    """`jsonl`, `csv` or `parquet`, from the file's extension."""
    suffix = Path(path).suffix.lower()
    formats = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
    if suffix not in formats:
        raise InputError(path, None, f"extension {suffix or '(none)'!r} is not one of {sorted(formats)}")
    return formats[suffix]


def iter_records(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = {"jsonl": _jsonl_records, "csv": _csv_records, "parquet": _parquet_records}[record_format(path)]
    _check_is_file(Path(path))
    return reader(Path(path))


def _check_is_file(path: Path) -> None:
    if not path.exists():
        raise InputError(path, None, "no such file")
    if not path.is_file():
        raise InputError(path, None, "not a file (a folder?)")


def check_has_records(path: str | Path) -> None:
    """Stop, naming the file, when it holds no record: no bytes, blank lines only, a CSV header alone or
    a Parquet file of no rows."""
    records = iter_records(path)  # an unknown extension or a missing file is named first
    if Path(path).stat().st_size == 0 or next(records, None) is None:
        raise empty_file(path)


def record_fields(path: str | Path) -> set[str]:
    """The fields of a file's records, read cheaply: Parquet's schema, the CSV header, the first JSONL
    record."""
    kind = record_format(path)
    if kind == "parquet":
        return set(_parquet_file(Path(path)).schema_arrow.names)
    if kind == "csv":
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return set(next(csv.reader(handle), []))
    first = next(iter_records(path), None)
    return set(first[1]) if first else set()


def _jsonl_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"line {number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise InputError(path, where, f"not valid UTF-8 (byte {err.start} of the line)") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(path, where, f"malformed JSON: {err.msg} (column {err.colno})") from None
            if not isinstance(record, dict):
                raise InputError(path, where, f"a record is a JSON object, not {type(record).__name__}")
            yield where, record


def _csv_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(path, encoding="utf-8-sig", newline="", errors="strict") as handle:
        # strict: a quote that is never closed, or text after a closing quote, is an error, not a
        # merged record
        reader = csv.DictReader(handle, strict=True)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                raise InputError(
                    path, f"record on line {reader.line_num + 1}", f"broken CSV: {err}"
                ) from None
            except UnicodeDecodeError as err:
                raise InputError(
                    path, f"after line {reader.line_num}", f"not valid UTF-8: {err.reason}"
                ) from None
            where = f"record ending on line {reader.line_num}"
            if None in row:
                raise InputError(path, where, f"{len(row[None])} more cells than the header has")
            yield (
                where,
                {key: _csv_cell(path, where, key, value) for key, value in row.items() if value != ""},
            )


def _csv_cell(path: Path, where: str, key: str, value: str | None) -> Any:
    if key not in _JSON_CELLS or value is None or not value.lstrip().startswith(("[", "{")):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as err:
        raise InputError(path, where, f"column {key!r} is not valid JSON: {err.msg}") from None


def _parquet_file(path: Path) -> pq.ParquetFile:
    _check_is_file(path)
    try:
        return pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises several types for a file that is not Parquet
        raise InputError(path, None, f"not a readable Parquet file: {err}") from None


def _parquet_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    row = 0
    for batch in _parquet_file(path).iter_batches(batch_size=PARQUET_BATCH_ROWS):
        for record in batch.to_pylist():
            row += 1
            yield f"row {row}", {key: value for key, value in record.items() if value is not None}
