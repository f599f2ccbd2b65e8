"""The leak measures, each declared once: what it matches, how it matches one generation (the paired
design of in-context methods) and a whole corpus (the distinct values of trained methods), which release
criterion its evidence feeds, and how every output names it.

Everything that handles a leak measure reads `leak_measures()`: the per-generation metrics and their
held-out control (`plainsight.evaluation.held_out`), the evidence and the verdict (`plainsight.audit`),
Table 1's control notes, the privacy audit table, the review page and the release bundle
(`plainsight.report`). A new measure is one `LeakMeasure` in `REGISTRY` and its two matching functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from plainsight.entities import SegmentKey
from plainsight.evaluation.real_segments import RealValues, Source, word_ngrams
from plainsight.matching import NearMatcher, leaked_values, name_words, partial_leak, unique_values


def _only_in(table: Mapping[SegmentKey, list[str]], keys, others) -> list[str]:
    elsewhere = {value.casefold() for key in others for value in table.get(key, [])}
    return [
        value
        for value in unique_values(v for k in keys for v in table.get(k, []))
        if value.casefold() not in elsewhere
    ]


@dataclass(frozen=True)
class Side:
    """One side of the unpaired design: the segments a trained method saw (or the held-out ones) against
    the other side's, and the corpus matched against both; its distinct values are found once."""

    generations: Sequence[str]
    corpus: str  # the generations joined so that no value's whitespace spans two of them
    ngram_index: frozenset  # every word run of `RealValues.verbatim_ngram` words the corpus holds
    keys: Sequence[SegmentKey]
    others: Sequence[SegmentKey]
    real: RealValues

    @cached_property
    def values(self) -> list[str]:
        """The run's identifier-set values that occur on this side only."""
        return _only_in(self.real.values, self.keys, self.others)

    @cached_property
    def name_words(self) -> list[str]:
        """The words of this side's person names that occur on this side only."""
        return name_words(_only_in(self.real.persons, self.keys, self.others), self.real.min_letters)

    @cached_property
    def any_values(self) -> list[str]:
        """Every direct or quasi value that occurs on this side only."""
        return _only_in(self.real.any_values, self.keys, self.others)


def _held(corpus: str, values: Sequence[str]) -> tuple[int, int]:
    return len(leaked_values(corpus, values)), len(values)


def _near_held(side: Side) -> tuple[int, int]:
    near = [*side.values, *side.name_words]
    if not near:
        return 0, 0
    matcher = NearMatcher(near, side.real.common_words)
    return len(set().union(*(matcher.found(text) for text in side.generations))), len(near)


def _verbatim_held(side: Side) -> tuple[int, int]:
    shared = sum(not side.real.ngrams(key).isdisjoint(side.ngram_index) for key in side.keys)
    return shared, len(side.keys)


def _verbatim_hit(text: str, source: Source, real: RealValues) -> bool:
    own = word_ngrams(text, real.verbatim_ngram)
    return any(not own.isdisjoint(other) for other in source.ngrams)


@dataclass(frozen=True)
class LeakMeasure:
    """One leak measure and where it shows."""

    name: str  # the key of its counts and of its audit columns, `leak_{name}_*`
    display: str  # how tables, cards and the page name it
    evidence_label: str  # how a verdict's reasons name its excess
    matches: str  # what it matches, in words
    member_column: str  # the per-generation column of its member hit
    # Paired design: whether one generation leaks something of a set of real segments.
    generation_hit: Callable[[str, Source, RealValues], bool]
    # Unpaired design: (held, total) of one side's distinct items (values, or segments for verbatim).
    distinct_held: Callable[[Side], tuple[int, int]]
    unit: str = "values"  # what the unpaired design counts
    # The release criterion its evidence feeds (`plainsight.audit.gate`) and its threshold's key in
    # `release.gate`; None: reported, not judged.
    criterion: str | None = None
    threshold_key: str = "leak_excess_max"
    # Where the member hit comes from: the paper's own metrics (`plainsight.evaluation.privacy`) or the
    # held-out control's pass, which adds the column.
    paper_metric: bool = False
    table1_label: str | None = None  # the Table 1 column whose control the table's notes give
    review_flag: str | None = None  # the review page's flag of a generation it hits
    drop_reason: str | None = None  # why `release.drop: any_identifier` leaves such a generation out

    @property
    def control_column(self) -> str:
        return f"control_{self.name}"


REGISTRY: dict[str, LeakMeasure] = {
    measure.name: measure
    for measure in (
        LeakMeasure(
            "exact",
            "Exact leak",
            "exact leak excess",
            "a value of the run's identifier set, as PIPP counts",
            "leaked",
            lambda text, source, _real: bool(leaked_values(text, source.values)),
            lambda side: _held(side.corpus, side.values),
            paper_metric=True,
            table1_label="PIPP",
            review_flag="exact",
            drop_reason="exact leak of a value of its code's identifier set",
        ),
        LeakMeasure(
            "partial",
            "Partial leak",
            "partial leak excess",
            "a word of a real person name, such as a surname alone",
            "partial_leak",
            lambda text, source, real: partial_leak(text, source.persons, real.min_letters),
            lambda side: _held(side.corpus, side.name_words),
            unit="name words",
            paper_metric=True,
            table1_label="partial leak",
            review_flag="partial",
            drop_reason="partial leak (a word of a real name)",
        ),
        LeakMeasure(
            "near",
            "Near leak",
            "near leak excess",
            "a value, a name word, or a variant of either that a reader would still recognise",
            "near_leak",
            lambda text, source, _real: bool(source.near.found(text)),
            _near_held,
            unit="values and name words",
            criterion="leak_excess",
            paper_metric=True,
            table1_label="near leak",
            review_flag="near",
            drop_reason="near leak (a variant of a real value)",
        ),
        LeakMeasure(
            "any_identifier",
            "Any identifier",
            "any-identifier leak excess",
            "a real direct or quasi identifier, whatever the run's identifier set",
            "any_identifier_leak",
            lambda text, source, _real: bool(leaked_values(text, source.any_values)),
            lambda side: _held(side.corpus, side.any_values),
            criterion="leak_excess",
            review_flag="any",
            drop_reason="a real direct or quasi identifier of any document of the corpus",
        ),
        LeakMeasure(
            "verbatim",
            "Verbatim",
            "verbatim excess",
            "a run of `verbatim_ngram` words of a real segment",
            "verbatim_copy",
            _verbatim_hit,
            _verbatim_held,
            unit="segments",
            criterion="verbatim",
            threshold_key="verbatim_excess_max",
        ),
    )
}


def leak_measures() -> tuple[LeakMeasure, ...]:
    """Every leak measure, in the order of their columns."""
    return tuple(REGISTRY.values())


def judged_by(criterion: str) -> tuple[LeakMeasure, ...]:
    """The measures whose evidence a release criterion judges."""
    return tuple(m for m in leak_measures() if m.criterion == criterion)


def leak_measure(name: str) -> LeakMeasure:
    if name not in REGISTRY:
        raise ValueError(f"unknown leak measure {name!r}; known: {list(REGISTRY)}")
    return REGISTRY[name]
