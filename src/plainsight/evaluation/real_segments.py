"""The real segments as the leak measures match them: their values, name words, texts and privacy units,
with the indexes built once (`RealValues`), and what a set of them could leak, prepared once (`Source`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from plainsight.entities import SegmentKey
from plainsight.evaluation.linkage import LINKAGE_QUASI_MIN, UnitIndex, text_words, value_words
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
    # Each segment's privacy unit; a segment without one is its document's own unit.
    units: Mapping[SegmentKey, str] = field(default_factory=dict)
    direct: Mapping[SegmentKey, list[str]] = field(default_factory=dict)  # direct identifiers only
    quasi: Mapping[SegmentKey, list[str]] = field(default_factory=dict)  # quasi identifiers only
    linkage_quasi_min: int = LINKAGE_QUASI_MIN
    # the distinctive digit runs of the code values of the run's identifier set (`plainsight.code_runs`)
    code_runs: Mapping[SegmentKey, list[str]] = field(default_factory=dict)
    _ngrams: dict[SegmentKey, set] = field(default_factory=dict, repr=False)
    _holders: dict[str, frozenset[SegmentKey]] = field(default_factory=dict, repr=False)
    _common_words: frozenset[str] | None = field(default=None, repr=False)
    _segments_with: dict[str, set[SegmentKey]] | None = field(default=None, repr=False)
    _unit_index: UnitIndex | None = field(default=None, repr=False)
    _held: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

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
        """The real segments whose text holds `value` (the exact matcher), found once per value among the
        segments that hold the rarest of its words."""
        if value not in self._holders:
            if self._segments_with is None:
                self._segments_with = {}
                for key, text in self.texts.items():
                    for word in text_words(text):
                        self._segments_with.setdefault(word, set()).add(key)
            candidates = min((self._segments_with.get(word, set()) for word in value_words(value)), key=len)
            pattern = value_pattern(value)
            self._holders[value] = frozenset(key for key in candidates if pattern.search(self.texts[key]))
        return self._holders[value]

    def unit_of(self, key: SegmentKey) -> str:
        return self.units.get(key, key[0])

    @property
    def unit_index(self) -> UnitIndex:
        """The adversary's index of the units behind the direct and quasi values, built once."""
        if self._unit_index is None:
            self._unit_index = UnitIndex.of(
                self.direct, self.quasi, self.unit_of, self.holders, self.linkage_quasi_min
            )
        return self._unit_index

    def held_values(self, text: str) -> frozenset[str]:
        """The direct and quasi values (`linkage.value_key`) a text holds, found once per text: a
        generation is matched against its source and its control, one at a time and with its corpus."""
        if text not in self._held:
            self._held[text] = self.unit_index.held(text)
        return self._held[text]

    def linked_units(self, text: str) -> frozenset[str]:
        """The units a text links on its own (`plainsight.evaluation.linkage`)."""
        return self.unit_index.linked(self.held_values(text))

    def jointly_linked(self, texts: Sequence[str]) -> list[frozenset[str]]:
        """Per text: the units that its group of texts, joined by values specific to one unit, links."""
        return self.unit_index.jointly_linked([self.held_values(text) for text in texts])

    def union(self, table: Mapping[SegmentKey, list[str]], keys: Iterable[SegmentKey]) -> list[str]:
        return unique_values(value for key in keys for value in table.get(key, []))


@dataclass(frozen=True)
class Source:
    """What a set of real segments could leak, prepared once for every generation it is matched with."""

    keys: tuple[SegmentKey, ...]
    units: frozenset[str]  # the privacy units of its segments
    values: list[str]
    persons: list[str]
    any_values: list[str]
    code_runs: list[str]
    near: NearMatcher
    ngrams: tuple[set, ...]

    @classmethod
    def of(cls, keys: Iterable[SegmentKey], real: RealValues) -> Source:
        keys = tuple(dict.fromkeys(keys))
        values, persons = real.union(real.values, keys), real.union(real.persons, keys)
        return cls(
            keys,
            frozenset(real.unit_of(key) for key in keys),
            values,
            persons,
            real.union(real.any_values, keys),
            real.union(real.code_runs, keys),
            NearMatcher([*values, *name_words(persons, real.min_letters)], real.common_words),
            tuple(real.ngrams(key) for key in keys),
        )
