"""The real segments as the leak measures match them: their values, name words and texts, with the
indexes built once (`RealValues`), and what a set of them could leak, prepared once (`Source`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from plainsight.entities import SegmentKey
from plainsight.matching import NearMatcher, name_words, public_words, unique_values, value_pattern

_WORD = re.compile(r"\w+")


def word_ngrams(text: str, size: int) -> set[tuple[str, ...]]:
    """The distinct runs of `size` case-folded words of a text: the index verbatim look-ups share."""
    words = [word.casefold() for word in _WORD.findall(text)]
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


@dataclass
class RealValues:
    """The real corpus as the control sees it: values per segment, texts, and indexes built once."""

    values: Mapping[SegmentKey, list[str]]  # the run's identifier set
    persons: Mapping[SegmentKey, list[str]]
    any_values: Mapping[SegmentKey, list[str]]  # every direct and quasi identifier
    types: Mapping[SegmentKey, frozenset[str]]
    texts: Mapping[SegmentKey, str]
    verbatim_ngram: int
    min_letters: int
    _ngrams: dict[SegmentKey, set] = field(default_factory=dict, repr=False)
    _holders: dict[str, frozenset[SegmentKey]] = field(default_factory=dict, repr=False)
    _common_words: frozenset[str] | None = field(default=None, repr=False)

    @property
    def common_words(self) -> frozenset[str]:
        if self._common_words is None:
            self._common_words = public_words(self.texts, self.values)
        return self._common_words

    def ngrams(self, key: SegmentKey) -> set[tuple[str, ...]]:
        if key not in self._ngrams:
            self._ngrams[key] = word_ngrams(self.texts[key], self.verbatim_ngram)
        return self._ngrams[key]

    def holders(self, value: str) -> frozenset[SegmentKey]:
        """The real segments whose text holds `value` (the exact matcher), found once per value."""
        if value not in self._holders:
            needle, pattern = max(value.split(), key=len).casefold(), value_pattern(value)
            self._holders[value] = frozenset(
                key for key, text in self.texts.items() if needle in text.casefold() and pattern.search(text)
            )
        return self._holders[value]

    def union(self, table: Mapping[SegmentKey, list[str]], keys: Iterable[SegmentKey]) -> list[str]:
        return unique_values(value for key in keys for value in table.get(key, []))


@dataclass(frozen=True)
class Source:
    """What a set of real segments could leak, prepared once for every generation it is matched with."""

    keys: tuple[SegmentKey, ...]
    values: list[str]
    persons: list[str]
    any_values: list[str]
    near: NearMatcher
    ngrams: tuple[set, ...]

    @classmethod
    def of(cls, keys: Iterable[SegmentKey], real: RealValues) -> Source:
        keys = tuple(dict.fromkeys(keys))
        values, persons = real.union(real.values, keys), real.union(real.persons, keys)
        return cls(
            keys,
            values,
            persons,
            real.union(real.any_values, keys),
            NearMatcher([*values, *name_words(persons, real.min_letters)], real.common_words),
            tuple(real.ngrams(key) for key in keys),
        )
