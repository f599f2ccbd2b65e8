"""MIMIC-III NOTEEVENTS ingestion: de-identification placeholders become gold spans.

A placeholder such as `[**Hospital 18**]` is one span whose text is the whole
placeholder; its label ("Hospital") decides the TAB category through the
shipped rule table. Notes are split by patient (SUBJECT_ID), so one patient's
notes never sit in two splits.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from plainsight.data.builder import CorpusBuilder, SourceDocument
from plainsight.data.problems import ProblemPolicy
from plainsight.entities import Span
from plainsight.errors import InputError, empty_file
from plainsight.io import read_text_utf8

REQUIRED_COLUMNS = ("ROW_ID", "SUBJECT_ID", "TEXT")
PLACEHOLDER = re.compile(r"\[\*\*(.*?)\*\*\]", re.DOTALL)
_BARE_DATE = re.compile(r"^\s*\d{1,4}(-\d{1,2}){0,2}\s*$")
_TRAILING_NUMBER = re.compile(r"[\s\d]+$")


@dataclass(frozen=True)
class PlaceholderRule:
    pattern: re.Pattern
    entity_type: str
    identifier_type: str


@dataclass(frozen=True)
class PlaceholderTypes:
    rules: tuple[PlaceholderRule, ...]
    fallback: tuple[str, str]

    @classmethod
    def from_yaml(cls, path: str | Path) -> PlaceholderTypes:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        rules = tuple(
            PlaceholderRule(re.compile(r["pattern"], re.IGNORECASE), r["entity_type"], r["identifier_type"])
            for r in data["rules"]
        )
        fallback = data["fallback"]
        return cls(rules, (fallback["entity_type"], fallback["identifier_type"]))

    def classify(self, inner: str) -> tuple[str, str, str]:
        """(label, entity_type, identifier_type) of a placeholder's inner text."""
        if _BARE_DATE.match(inner):
            return "date", "DATETIME", "QUASI"
        label = _TRAILING_NUMBER.sub("", inner).strip()
        for rule in self.rules:
            if rule.pattern.search(label):
                return label, rule.entity_type, rule.identifier_type
        return (label, *self.fallback)


def split_of(subject_id: str, fractions: dict[str, float]) -> str:
    """Stable split by patient: a hash of SUBJECT_ID against cumulative fractions."""
    bucket = int(hashlib.sha256(subject_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    cumulative = 0.0
    for split, fraction in fractions.items():
        cumulative += fraction
        if bucket <= cumulative:
            return split
    return list(fractions)[-1]


def placeholder_spans(path: str | Path, row_id: str, text: str, types: PlaceholderTypes) -> list[Span]:
    spans = []
    for number, match in enumerate(PLACEHOLDER.finditer(text), start=1):
        label, entity_type, identifier_type = types.classify(match.group(1))
        spans.append(
            Span(
                match.start(),
                match.end(),
                match.group(0),
                entity_type,
                identifier_type,
                entity_id=f"{row_id}_{match.group(0)}",
                mention_id=f"{row_id}_m{number}",
                raw_label=label,
            )
        )
    unclosed = text.count("[**") - len(spans)
    if unclosed:
        raise InputError(
            path, f"ROW_ID {row_id}", f"{unclosed} placeholder(s) opened with '[**' but never closed"
        )
    return spans


def ingest_mimic(
    path: str | Path,
    builder: CorpusBuilder,
    policy: ProblemPolicy,
    types: PlaceholderTypes,
    fractions: dict[str, float],
) -> None:
    text = read_text_utf8(path)
    if not text.strip():
        raise empty_file(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(path, "header", f"missing columns {missing}")
    for row in reader:
        row_id = (row["ROW_ID"] or "").strip()
        if not row_id or row["TEXT"] is None:
            raise InputError(path, f"record ending on line {reader.line_num}", "row has no ROW_ID or TEXT")
        try:
            spans = placeholder_spans(path, row_id, row["TEXT"], types)
        except InputError as error:
            policy.report(error, "invalid note")
            continue
        subject_id = row["SUBJECT_ID"].strip()
        # The patient is the privacy unit: one patient's notes share identifiers, so protecting one
        # note (ROW_ID) at a time would let the others reveal them.
        # NOTEEVENTS holds no gender (MIMIC keeps it in PATIENTS.csv), so the note has no group.
        category = (row.get("CATEGORY") or "").strip()
        split = split_of(subject_id, fractions)
        labels = [category] if category else []
        builder.add(
            path, SourceDocument(row_id, split, row["TEXT"], "deid-placeholders", spans, subject_id, labels)
        )
    if reader.line_num <= 1:  # the header alone
        raise empty_file(path)
