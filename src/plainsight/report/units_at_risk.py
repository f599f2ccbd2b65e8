"""The review page's person view: the privacy units of the real corpus (a TAB case, a MIMIC patient, a
generic corpus's `unit_id`) that a corpus's generations link, as unit linkage decides it
(`plainsight.evaluation.linkage`): a generation alone, or a group of generations joined by values that
one unit's text alone holds. Per unit: the generations that link it, the unit's values they hold and
where those occur, in the generations and in the unit's own real segments.

Which values a text holds and which units they link is the metrics' own `UnitIndex`; where a value
occurs in a text is `plainsight.matching.value_spans`, as everywhere on the page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plainsight.entities import SegmentKey
from plainsight.evaluation.linkage import UnitIndex, value_key
from plainsight.evaluation.real_segments import RealValues
from plainsight.matching import fold, value_spans, without_overlaps
from plainsight.report.review_data import segment_ref

DIRECT, QUASI = "direct", "quasi"
# A value that joins generations into a group: one unit's text alone holds it (not always the linked one's).
JOINS = "joins"


@dataclass(frozen=True)
class Link:
    """Generations that link one unit: one generation that links it alone, or a group of generations
    (`UnitIndex.groups`) that links it only together."""

    generations: tuple[int, ...]
    values: tuple[str, ...]  # the keys (`linkage.value_key`) of the unit's values that they hold
    joins: tuple[str, ...] = ()  # a group's: the keys two of its generations share, one unit's alone


@dataclass(frozen=True)
class UnitAtRisk:
    unit: str
    links: tuple[Link, ...]


def unit_values(index: UnitIndex, unit: str, held: Iterable[str]) -> tuple[str, ...]:
    """The keys among `held` that are one of `unit`'s direct or quasi values, sorted."""
    return tuple(
        sorted(
            key for key in set(held) if unit in index.direct.get(key, ()) or unit in index.quasi.get(key, ())
        )
    )


def joining_values(index: UnitIndex, held: Sequence[frozenset[str]]) -> tuple[str, ...]:
    """The keys that join a group: held by two or more of its generations, and by one unit's text alone."""
    counts = Counter(key for keys in held for key in keys if index.specific(key))
    return tuple(sorted(key for key, count in counts.items() if count > 1))


def units_at_risk(index: UnitIndex, held: Sequence[frozenset[str]]) -> list[UnitAtRisk]:
    """Every unit that a corpus's generations (by position, each with the keys it holds) link: with each
    generation that links it alone, and each group of generations that links it together where none of
    them does alone (a group that a member's own link explains adds nothing to read). Units sorted, each
    one's links by their first generation."""
    links: dict[str, list[Link]] = defaultdict(list)
    alone = [index.linked(keys) for keys in held]
    for generation, units in enumerate(alone):
        for unit in units:
            links[unit].append(Link((generation,), unit_values(index, unit, held[generation])))
    for group in index.groups(held):
        if len(group) < 2:
            continue
        together = frozenset().union(*(held[generation] for generation in group))
        explained = frozenset().union(*(alone[generation] for generation in group))
        for unit in index.linked(together) - explained:
            links[unit].append(
                Link(
                    tuple(group),
                    unit_values(index, unit, together),
                    joining_values(index, [held[generation] for generation in group]),
                )
            )
    return [
        UnitAtRisk(unit, tuple(sorted(links[unit], key=lambda link: link.generations)))
        for unit in sorted(links)
    ]


class PersonView:
    """The real corpus as the person view shows it, prepared once per page: each unit's segments and each
    value's spelling (the index's: the first of the direct, then the quasi values) and entity type."""

    def __init__(self, real: RealValues, value_types: Mapping[str, str]):
        self.real = real
        self.types = value_types  # folded value -> entity type (`summary.value_types`)
        self.segments: dict[str, list[SegmentKey]] = defaultdict(list)
        for key in sorted(real.texts):
            self.segments[real.unit_of(key)].append(key)
        self.labels: dict[str, str] = {}
        for table in (real.direct, real.quasi):
            for values in table.values():
                for value in values:
                    self.labels.setdefault(value_key(value), value)

    def identifier(self, unit: str, key: str) -> str:
        """Whether `key` is a direct or a quasi value of `unit`: direct where any of its spans says so."""
        return DIRECT if unit in self.real.unit_index.direct.get(key, ()) else QUASI

    def spans(self, text: str, marked: Iterable[tuple[str, str]]) -> list[list[Any]]:
        """[start, end, kind, value] where each (key, kind) of `marked` occurs in `text`, without overlaps;
        where two mark one span, the first of `marked` names it."""
        found: dict[tuple[int, int], list[Any]] = {}
        for key, kind in marked:
            for start, end in value_spans(text, self.labels[key]):
                found.setdefault((start, end), [start, end, kind, self.labels[key]])
        return [found[span] for span in without_overlaps(found)]

    def entry(self, risk: UnitAtRisk, texts: Sequence[str]) -> dict[str, Any]:
        """What the page shows of one unit at risk, every text referred to by its place: the generations
        by their index in the corpus, the real segments by their ref in the real segments' data file."""
        index = self.real.unit_index
        keys = sorted({key for link in risk.links for key in link.values})
        kinds = [(key, self.identifier(risk.unit, key)) for key in keys]
        real = [
            {"ref": segment_ref(*segment), "spans": spans}
            for segment in self.segments[risk.unit]
            if (spans := self.spans(self.real.texts[segment], kinds))
        ]
        return {
            "unit": risk.unit,
            "values": [
                {
                    "value": self.labels[key],
                    "type": self.types.get(fold(self.labels[key]), ""),
                    "identifier": kind,
                    "units": len(index.holders[key]),
                }
                for key, kind in kinds
            ],
            "links": [
                {
                    "generations": [
                        {
                            "i": generation,
                            "spans": self.spans(
                                texts[generation], [*kinds, *((key, JOINS) for key in link.joins)]
                            ),
                        }
                        for generation in link.generations
                    ],
                    "joins": [self.labels[key] for key in link.joins],
                }
                for link in risk.links
            ],
            "real": real,
            "segments": len(self.segments[risk.unit]),
        }

    def corpus(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        """The units that a corpus's generations link, each as `entry` shows it."""
        held = [self.real.held_values(text) for text in texts]
        return [self.entry(risk, texts) for risk in units_at_risk(self.real.unit_index, held)]
