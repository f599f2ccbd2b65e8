"""Whether a generation is a document at all: a privacy number over an empty text, or over a text
that only repeats its control code, measures nothing.

Per generation: its length in words, distinct-2 (distinct word bigrams over all bigrams), the
share of its word 4-grams that repeat an earlier one, and the share of its characters on lines
written like a control code ("PERSON: ..."). It is a document when it is long enough, mostly not
code lines, and not stuck in a loop (`DocumentCriteria`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plainsight.entities import ENTITY_TYPES

_WORD = re.compile(r"\w+")
_CODE_LINE = re.compile(rf"^[ \t]*(?:{'|'.join(ENTITY_TYPES)})[ \t]*:.*$", re.MULTILINE)

QUALITY_COLUMNS: tuple[str, ...] = (
    "words",
    "distinct2",
    "repeated_4gram_share",
    "code_copy_share",
    "is_document",
)


@dataclass(frozen=True)
class DocumentCriteria:
    min_words: int = 40  # whitespace-separated words of the final text
    max_code_copy_share: float = 0.5
    max_repeated_4gram_share: float = 0.5

    @classmethod
    def from_config(cls, document: Mapping[str, Any]) -> DocumentCriteria:
        """The `metrics.document` config block."""
        return cls(
            document["min_words"], document["max_code_copy_share"], document["max_repeated_4gram_share"]
        )


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(text: str, n: int = 2) -> float:
    """Distinct word n-grams over all word n-grams (case-insensitive); NaN for a text without one."""
    grams = _ngrams(_WORD.findall(text.casefold()), n)
    return len(set(grams)) / len(grams) if grams else math.nan


def repeated_ngram_share(text: str, n: int = 4) -> float:
    """The share of word n-grams that repeat an earlier one: 0 for varied text, near 1 for a loop."""
    grams = _ngrams(_WORD.findall(text.casefold()), n)
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def code_copy_share(text: str) -> float:
    """The share of the text's non-space characters on lines written like a control code line."""
    total = sum(not c.isspace() for c in text)
    if not total:
        return 0.0
    on_code_lines = sum(not c.isspace() for line in _CODE_LINE.findall(text) for c in line)
    return on_code_lines / total


def document_quality(text: str, criteria: DocumentCriteria) -> dict[str, Any]:
    """The quality columns of one generation."""
    words = len(text.split())
    repeated = repeated_ngram_share(text, 4)
    copied = code_copy_share(text)
    return {
        "words": words,
        "distinct2": distinct_n(text, 2),
        "repeated_4gram_share": repeated,
        "code_copy_share": copied,
        "is_document": bool(
            words >= criteria.min_words
            and copied <= criteria.max_code_copy_share
            and repeated <= criteria.max_repeated_4gram_share
        ),
    }
