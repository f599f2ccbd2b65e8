"""Whether a text contains a private value: the one matcher that blocking, the masked objective
and the leak metrics share.

A value matches case-insensitively as a whole word, whitespace inside it matching any run of
whitespace; a partial match is one identifying word of a person name (a surname alone).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

# Titles are not names: "Mr" or "Judge" alone says nothing about who a person is.
HONORIFICS: frozenset[str] = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "judge"})


def normalise_value(value: str) -> str:
    """Collapse internal whitespace (line breaks inside a mention) for display in a code."""
    return " ".join(value.split())


def unique_values(values: Iterable[str]) -> list[str]:
    """Whitespace-normalised, non-empty values without repeats, in first-seen order.

    Normalising first makes a value split over two lines in the source count once.
    """
    return list(dict.fromkeys(v for v in map(normalise_value, values) if v))


@lru_cache(maxsize=None)
def value_pattern(value: str) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern for `value`; whitespace in it matches any run.

    Lookarounds rather than `\\b` so that values with non-word edges ("[**Hospital 18**]",
    "$87,500") still match, while "40593/04" does not match inside "140593/04".
    """
    parts = value.split()
    if not parts:
        raise ValueError("cannot match an empty value")
    body = r"\s+".join(re.escape(part) for part in parts)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


@lru_cache(maxsize=None)
def _needle(value: str) -> str:
    """The longest word of `value`, case-folded: it occurs in any text that the pattern matches."""
    return max(value.split(), key=len).casefold()


def _occurs(value: str, text: str, folded_text: str) -> bool:
    """Whether `value` matches in `text`; a substring test first skips most regex searches.

    Fine-tuning checks every generation against thousands of private values.
    """
    return _needle(value) in folded_text and value_pattern(value).search(text) is not None


def leaked_values(text: str, values: Iterable[str]) -> list[str]:
    """The distinct private values that occur in `text`."""
    folded = text.casefold()
    return [value for value in unique_values(values) if _occurs(value, text, folded)]


def name_words(person_values: Iterable[str], min_letters: int = 4) -> list[str]:
    """The distinct words of person names that identify on their own.

    Honorifics and words shorter than `min_letters` letters are left out: they occur in
    ordinary text too often to show that a name was copied.
    """
    words = (word for value in person_values for word in re.findall(r"\w+", value))
    return list(dict.fromkeys(
        word for word in words
        if word.casefold() not in HONORIFICS and sum(c.isalpha() for c in word) >= min_letters
    ))


def partial_leak(text: str, person_values: Iterable[str], min_letters: int = 4) -> bool:
    """Whether any identifying word of a person name (a surname alone, say) occurs in `text`."""
    folded = text.casefold()
    return any(_occurs(word, text, folded) for word in name_words(person_values, min_letters))
