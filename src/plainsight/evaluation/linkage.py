"""Unit linkage: whether released text singles out one privacy unit of the real corpus (a TAB case, a
MIMIC patient, a generic corpus's `unit_id`; each document of a corpus without units).

The adversary holds the released text and knows the rest of the corpus: for every annotated direct and
quasi value, the units it belongs to and the units whose text holds it (`UnitIndex`). A set of values
that a text holds **links** unit u when it holds

- a direct value of u that no other unit's text holds, or
- at least `quasi_min` quasi values of u that together occur in no other unit's text: the units holding
  each value are intersected, so the combination, not each value, must be specific to u (a birth year
  and a town that many cases share each, one case alone shares both).

Across generations a person may be split: generations that share a value only one unit's text holds
are joined into groups (transitively), and each group's values are tested together by the same rule.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from plainsight.entities import SegmentKey
from plainsight.matching import leaked_values, normalise_value, unique_values

_WORD = re.compile(r"\w+")

# The default of `metrics.linkage_quasi_min`: quasi values of one unit that link it together.
LINKAGE_QUASI_MIN = 2


def value_key(value: str) -> str:
    """How the index names a value: whitespace-normalised and case-folded, as the matcher compares."""
    return normalise_value(value).casefold()


def value_words(value: str) -> set[str]:
    """The case-folded words of a value: every text that holds the value holds each of them as a word.
    A value without word characters has the empty word, which every text has (`text_words`)."""
    return set(_WORD.findall(value.casefold())) or {""}


def text_words(text: str) -> set[str]:
    """The case-folded words of a text, the empty word among them."""
    return {"", *_WORD.findall(text.casefold())}


class ValueFinder:
    """Which of many values a text holds, as `leaked_values` matches them: each value is tried only in a
    text that holds its rarest word among the values (a placeholder's number, not its "lastname"), so a
    text costs its own words, not the corpus's values."""

    def __init__(self, values: Iterable[str]):
        values = unique_values(values)
        counts = Counter(word for value in values for word in value_words(value))
        self._by_word: dict[str, list[str]] = {}
        for value in values:
            rarest = min(value_words(value), key=lambda word: (counts[word], -len(word), word))
            self._by_word.setdefault(rarest, []).append(value)

    def found(self, text: str) -> list[str]:
        return leaked_values(text, [v for word in text_words(text) for v in self._by_word.get(word, ())])


@dataclass(frozen=True)
class UnitIndex:
    """The adversary's index of the real corpus, built once: per value (by `value_key`), the units that
    have it as a direct or as a quasi identifier and the units whose text holds it (its own among them)."""

    direct: Mapping[str, frozenset[str]]
    quasi: Mapping[str, frozenset[str]]
    holders: Mapping[str, frozenset[str]]
    finder: ValueFinder
    quasi_min: int

    @classmethod
    def of(
        cls,
        direct: Mapping[SegmentKey, Sequence[str]],
        quasi: Mapping[SegmentKey, Sequence[str]],
        unit_of: Callable[[SegmentKey], str],
        holders: Callable[[str], Iterable[SegmentKey]],
        quasi_min: int,
    ) -> UnitIndex:
        """The index of the direct and quasi values per segment; `holders(value)`: the segments whose
        text holds a value."""
        if quasi_min < 1:
            raise ValueError(f"metrics.linkage_quasi_min must be at least 1, not {quasi_min}")
        owners: tuple[dict[str, set[str]], dict[str, set[str]]] = ({}, {})
        shown: dict[str, str] = {}  # one spelling per key: the matcher ignores case
        for table, owned in zip((direct, quasi), owners):
            for key, values in table.items():
                for value in unique_values(values):
                    owned.setdefault(value_key(value), set()).add(unit_of(key))
                    shown.setdefault(value_key(value), value)
        holding = {
            key: frozenset(
                {unit_of(segment) for segment in holders(value)}
                | owners[0].get(key, set())
                | owners[1].get(key, set())
            )
            for key, value in shown.items()
        }
        return cls(
            *({key: frozenset(units) for key, units in owned.items()} for owned in owners),
            holding,
            ValueFinder(shown.values()),
            quasi_min,
        )

    def held(self, text: str) -> frozenset[str]:
        """The keys of the indexed values that `text` holds."""
        return frozenset(value_key(value) for value in self.finder.found(text))

    def specific(self, key: str) -> bool:
        """Whether one unit's text alone holds the value."""
        return len(self.holders[key]) == 1

    def linked(self, held: Iterable[str]) -> frozenset[str]:
        """The units that the values `held` (keys) link: each value's units are looked up, never every
        unit tried."""
        linked: set[str] = set()
        quasi_held: dict[str, list[str]] = {}
        for key in held:
            linked.update(unit for unit in self.direct.get(key, ()) if self.holders[key] == {unit})
            for unit in self.quasi.get(key, ()):
                quasi_held.setdefault(unit, []).append(key)
        linked.update(
            unit
            for unit, keys in quasi_held.items()
            if len(keys) >= self.quasi_min
            and frozenset.intersection(*(self.holders[key] for key in keys)) == {unit}
        )
        return frozenset(linked)

    def groups(self, held: Sequence[frozenset[str]]) -> list[list[int]]:
        """The generations (by position, each with the keys it holds) joined wherever two share a value
        that one unit's text alone holds, transitively; each group in order, by its first generation."""
        parent = list(range(len(held)))

        def root(index: int) -> int:
            while parent[index] != index:
                parent[index] = parent[parent[index]]
                index = parent[index]
            return index

        first: dict[str, int] = {}
        for index, keys in enumerate(held):
            for key in keys:
                if self.specific(key):
                    parent[root(index)] = root(first.setdefault(key, index))
        groups: dict[int, list[int]] = {}
        for index in range(len(held)):
            groups.setdefault(root(index), []).append(index)
        return sorted(groups.values())

    def jointly_linked(self, held: Sequence[frozenset[str]]) -> list[frozenset[str]]:
        """Per generation: the units that the values of its whole group (`groups`) link together."""
        linked: list[frozenset[str]] = [frozenset()] * len(held)
        for group in self.groups(held):
            units = self.linked(frozenset().union(*(held[index] for index in group)))
            for index in group:
                linked[index] = units
        return linked
