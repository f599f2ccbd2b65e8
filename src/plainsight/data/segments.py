"""Paragraph segmentation: each document yields segments of whole paragraphs.

The paper cuts every document into paragraphs 1-6 and 6-12. Segment text is the
original slice of the document (separators kept), so spans are re-based by a
plain subtraction and `segment_text[start:end] == span_text` keeps holding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import pandas as pd

from plainsight.entities import SegmentKey, Span
from plainsight.rng import stable_rng

_BLANK_LINE = re.compile(r"[ \t\r\f\v]*\n[ \t\r\f\v]*\n\s*")
_LINE_BREAK = re.compile(r"[ \t\r\f\v]*\n\s*")
# What separates two paragraphs: a blank line (TAB, MIMIC) or, for corpora written one paragraph a
# line, a single line break.
PARAGRAPH_BREAKS: dict[str, re.Pattern] = {"blank_line": _BLANK_LINE, "line_break": _LINE_BREAK}


@dataclass(frozen=True)
class Segment:
    index: int  # 0-based position in the configured segment list
    start: int
    end: int
    text: str
    spans: tuple[Span, ...]
    crossing_spans: int  # spans cut by the segment boundary, dropped


def paragraph_bounds(text: str, paragraph_break: str = "blank_line") -> list[tuple[int, int]]:
    """(start, end) offsets of the non-empty paragraphs, split on blank lines (or single line breaks)."""
    bounds = []
    position = 0
    for separator in PARAGRAPH_BREAKS[paragraph_break].finditer(text):
        bounds.append((position, separator.start()))
        position = separator.end()
    bounds.append((position, len(text)))
    return [(start, end) for start, end in bounds if text[start:end].strip()]


def min_paragraphs(ranges: list[tuple[int, int]]) -> int:
    """Paragraphs a document needs so that every configured segment is non-empty."""
    return max(first for first, _ in ranges)


def segment_document(
    text: str, spans: list[Span], ranges: list[tuple[int, int]], paragraph_break: str = "blank_line"
) -> list[Segment]:
    """Cut `text` into the configured 1-based inclusive paragraph ranges.

    A range that runs past the last paragraph is shortened to it. The caller
    checks `min_paragraphs` first; a range starting past the end raises.
    """
    paragraphs = paragraph_bounds(text, paragraph_break)
    segments = []
    for index, (first, last) in enumerate(ranges):
        if first > len(paragraphs):
            raise ValueError(f"document has {len(paragraphs)} paragraphs, segment {index} starts at {first}")
        start = paragraphs[first - 1][0]
        end = paragraphs[min(last, len(paragraphs)) - 1][1]
        inside, crossing = [], 0
        for span in spans:
            if span.start >= start and span.end <= end:
                inside.append(replace(span, start=span.start - start, end=span.end - start))
            elif span.start < end and span.end > start:
                crossing += 1
        segments.append(Segment(index, start, end, text[start:end], tuple(inside), crossing))
    return segments


def segment_texts(docs: pd.DataFrame) -> dict[SegmentKey, str]:
    """(doc_id, segment) -> text of every segment row of a docs table."""
    return {(str(d), int(s)): t for d, s, t in zip(docs["doc_id"], docs["segment"], docs["text"])}


def test_segments(docs: pd.DataFrame) -> list[SegmentKey]:
    test = docs[docs["split"] == "test"]
    return sorted(zip(test["doc_id"].astype(str), test["segment"].astype(int)))


def mauve_targets(docs: pd.DataFrame, samples: int | None) -> list[SegmentKey]:
    """The real test segments MAUVE compares with: all, or `samples` drawn once (the same for every run)."""
    keys = test_segments(docs)
    if not keys:
        raise ValueError("the corpus has no test split to measure utility on")
    if samples is not None and samples < len(keys):
        keys = sorted(stable_rng("mauve targets").sample(keys, samples))
    return keys
