"""The leak measures, each declared once: what it matches, how it matches one generation (the paired
design of in-context methods) and a whole corpus (the distinct values of trained methods), which release
criterion its evidence feeds, and how every output names it.

Everything that handles a leak measure reads `leak_measures()`: the per-generation metrics and their
held-out control (`plainsight.evaluation.held_out`), the evidence and the verdict (`plainsight.audit`),
Table 1's control notes, the privacy audit table, the review page and the release bundle
(`plainsight.report`). A new measure is one `LeakMeasure` in `REGISTRY` and its two matching functions;
a third, optional one (`held_items`) attributes each of its distinct items to a document, so that trained
methods' evidence takes the document, not the item, as its unit. A measure whose hit of one generation
depends on the others (`corpus_hits`: joint linkage joins generations) has no per-generation pair: its
evidence is the unpaired design in every run, in-context methods' shown units against unshown ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from plainsight.code_runs import held_runs
from plainsight.entities import SegmentKey
from plainsight.evaluation.real_segments import RealValues, Source, word_ngrams
from plainsight.matching import (
    NearMatcher,
    leaked_values,
    name_words,
    normalise_value,
    partial_leak,
    unique_values,
)


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
    def code_runs(self) -> list[str]:
        """The distinctive digit runs of code values that occur on this side only."""
        return _only_in(self.real.code_runs, self.keys, self.others)

    @cached_property
    def any_values(self) -> list[str]:
        """Every direct or quasi value that occurs on this side only."""
        return _only_in(self.real.any_values, self.keys, self.others)

    def documents_of(
        self, items: Sequence[str], items_of: Callable[[SegmentKey], Iterable[str]]
    ) -> list[str]:
        """The document each item is attributed to: the first of this side's segments, in sorted
        (doc_id, segment) order, among whose own items (`items_of`) it is, compared case-folded as
        `_only_in` compares. One document per item, so that the documents partition the items."""
        first: dict[str, str] = {}
        for key in sorted(self.keys):
            for item in items_of(key):
                first.setdefault(normalise_value(item).casefold(), key[0])
        return [first[normalise_value(item).casefold()] for item in items]

    def documents_of_values(self, table: Mapping[SegmentKey, list[str]], values: Sequence[str]) -> list[str]:
        return self.documents_of(values, lambda key: table.get(key, []))

    def documents_of_name_words(self, words: Sequence[str]) -> list[str]:
        return self.documents_of(
            words, lambda key: name_words(self.real.persons.get(key, []), self.real.min_letters)
        )

    @cached_property
    def units(self) -> dict[str, str]:
        """The privacy units of this side's segments that none of the other side's belong to, each with
        the document its item is attributed to: its first, in sorted (doc_id, segment) order."""
        elsewhere = {self.real.unit_of(key) for key in self.others}
        first: dict[str, str] = {}
        for key in sorted(self.keys):
            if self.real.unit_of(key) not in elsewhere:
                first.setdefault(self.real.unit_of(key), key[0])
        return first


HeldItems = list[tuple[str, bool]]  # per distinct item: (the document it is attributed to, held)


def tally(items: HeldItems) -> tuple[int, int]:
    """(held, total) of a side's items."""
    return sum(held for _, held in items), len(items)


def _held_items(corpus: str, values: Sequence[str], documents: Sequence[str]) -> HeldItems:
    held = set(leaked_values(corpus, values))
    return [(document, value in held) for document, value in zip(documents, values)]


def _exact_items(side: Side) -> HeldItems:
    return _held_items(side.corpus, side.values, side.documents_of_values(side.real.values, side.values))


def _partial_items(side: Side) -> HeldItems:
    return _held_items(side.corpus, side.name_words, side.documents_of_name_words(side.name_words))


def _any_identifier_items(side: Side) -> HeldItems:
    return _held_items(
        side.corpus, side.any_values, side.documents_of_values(side.real.any_values, side.any_values)
    )


def _code_part_items(side: Side) -> HeldItems:
    # generation by generation: the corpus's separators between generations could join two runs
    held = set().union(*(held_runs(text, side.code_runs) for text in side.generations))
    documents = side.documents_of_values(side.real.code_runs, side.code_runs)
    return [(document, run in held) for document, run in zip(documents, side.code_runs)]


def _near_items(side: Side) -> HeldItems:
    near = [*side.values, *side.name_words]
    if not near:
        return []
    matcher = NearMatcher(near, side.real.common_words)
    found = set().union(*(matcher.found(text) for text in side.generations))
    documents = [
        *side.documents_of_values(side.real.values, side.values),
        *side.documents_of_name_words(side.name_words),
    ]
    # A value that is also a name word is one item to the matcher: it is held once, as its first entry.
    counted: set[str] = set()
    items = []
    for document, item in zip(documents, near):
        items.append((document, item in found and item not in counted))
        counted.add(item)
    return items


def _verbatim_items(side: Side) -> HeldItems:
    return [(key[0], not side.real.ngrams(key).isdisjoint(side.ngram_index)) for key in side.keys]


def _verbatim_hit(text: str, source: Source, real: RealValues) -> bool:
    own = word_ngrams(text, real.verbatim_ngram)
    return any(not own.isdisjoint(other) for other in source.ngrams)


def _unit_linkage_hit(text: str, source: Source, real: RealValues) -> bool:
    return not real.linked_units(text).isdisjoint(source.units)


def _units_held(side: Side, linked: frozenset[str]) -> HeldItems:
    return [(document, unit in linked) for unit, document in side.units.items()]


def _unit_linkage_items(side: Side) -> HeldItems:
    """Per unit of the side: whether some single generation links it."""
    return _units_held(side, frozenset().union(*map(side.real.linked_units, side.generations)))


def _joint_linkage_hits(texts: Sequence[str], sources: Sequence[Source], real: RealValues) -> list[bool]:
    return [
        not linked.isdisjoint(source.units) for linked, source in zip(real.jointly_linked(texts), sources)
    ]


def _joint_linkage_items(side: Side) -> HeldItems:
    """Per unit of the side: whether some group of generations links it with its values together."""
    return _units_held(side, frozenset().union(*side.real.jointly_linked(side.generations)))


@dataclass(frozen=True)
class LeakMeasure:
    """One leak measure and where it shows."""

    name: str  # the key of its counts and of its audit columns, `leak_{name}_*`
    display: str  # how tables, cards and the page name it
    evidence_label: str  # how a verdict's reasons name its excess
    matches: str  # what it matches, in words
    member_column: str  # the per-generation column of its member hit
    # Paired design: whether one generation leaks something of a set of real segments.
    generation_hit: Callable[[str, Source, RealValues], bool] | None = None
    # Unpaired design, for a measure without `held_items`: (held, total) of one side's distinct items,
    # taken as independent.
    distinct_held: Callable[[Side], tuple[int, int]] | None = None
    # what the unpaired design's rates are shares of (the paired design's: generations), as tables name it
    unit: str = "distinct values"
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
    # Unpaired design, per distinct item (values, or segments for verbatim): the document it is attributed
    # to and whether the corpus holds it. With it the evidence takes the document as its unit
    # (`plainsight.audit.evidence.cluster_excess`); a measure gives it or `distinct_held`.
    held_items: Callable[[Side], HeldItems] | None = None
    # Instead of `generation_hit`, for a measure whose hit of one generation depends on the rest of its
    # corpus: per generation, whether it leaks something of its source (its context's segments, or the
    # fine-tuning set). Such a measure has no paired control: both families take the unpaired design.
    corpus_hits: Callable[[Sequence[str], Sequence[Source], RealValues], list[bool]] | None = None

    def __post_init__(self):
        if (self.held_items is None) == (self.distinct_held is None):
            raise ValueError(f"leak measure {self.name!r} needs exactly one of held_items and distinct_held")
        if (self.generation_hit is None) == (self.corpus_hits is None):
            raise ValueError(
                f"leak measure {self.name!r} needs exactly one of generation_hit and corpus_hits"
            )

    @property
    def paired(self) -> bool:
        """Whether in-context runs judge it by the paired design (a matched control per generation)."""
        return self.generation_hit is not None

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
            paper_metric=True,
            table1_label="PIPP",
            review_flag="exact",
            drop_reason="exact leak of a value of its code's identifier set",
            held_items=_exact_items,
        ),
        LeakMeasure(
            "partial",
            "Partial leak",
            "partial leak excess",
            "a word of a real person name, such as a surname alone",
            "partial_leak",
            lambda text, source, real: partial_leak(text, source.persons, real.min_letters),
            unit="distinct name words",
            paper_metric=True,
            table1_label="partial leak",
            review_flag="partial",
            drop_reason="partial leak (a word of a real name)",
            held_items=_partial_items,
        ),
        LeakMeasure(
            "near",
            "Near leak",
            "near leak excess",
            "a value, a name word, or a variant of either that a reader would still recognise",
            "near_leak",
            lambda text, source, _real: bool(source.near.found(text)),
            unit="distinct values and name words",
            criterion="leak_excess",
            paper_metric=True,
            table1_label="near leak",
            review_flag="near",
            drop_reason="near leak (a variant of a real value)",
            held_items=_near_items,
        ),
        LeakMeasure(
            "any_identifier",
            "Any identifier",
            "any-identifier leak excess",
            "a real direct or quasi identifier, whatever the run's identifier set",
            "any_identifier_leak",
            lambda text, source, _real: bool(leaked_values(text, source.any_values)),
            criterion="leak_excess",
            review_flag="any",
            drop_reason="a real direct or quasi identifier of any document of the corpus",
            held_items=_any_identifier_items,
        ),
        LeakMeasure(
            "code_part",
            "Code part",
            "code-part leak excess",
            "the distinctive digit run of a real code value, under any prefix, spacing or punctuation",
            "code_part_leak",
            lambda text, source, _real: bool(held_runs(text, source.code_runs)),
            unit="distinct code digit runs",
            criterion="leak_excess",
            review_flag="code",
            drop_reason="the digit run of a real code value (a case or phone number under another prefix or "
            "spacing)",
            held_items=_code_part_items,
        ),
        LeakMeasure(
            "verbatim",
            "Verbatim",
            "verbatim excess",
            "a run of `verbatim_ngram` words of a real segment",
            "verbatim_copy",
            _verbatim_hit,
            unit="segments copied",
            criterion="verbatim",
            threshold_key="verbatim_excess_max",
            held_items=_verbatim_items,
        ),
        LeakMeasure(
            "unit_linkage",
            "Unit linkage",
            "unit linkage excess",
            "a direct value that one unit's text alone holds, or `linkage_quasi_min` quasi values of one "
            "unit that no other unit's text holds together",
            "unit_linked",
            _unit_linkage_hit,
            unit="privacy units linked",
            criterion="unit_linkage",
            threshold_key="unit_linkage_excess_max",
            review_flag="linked",
            drop_reason="values that single out one person (privacy unit) of the corpus",
            held_items=_unit_linkage_items,
        ),
        LeakMeasure(
            "joint_linkage",
            "Joint linkage",
            "joint linkage excess",
            "unit linkage by the values of generations joined through a value that one unit's text alone "
            "holds",
            "jointly_linked",
            unit="privacy units linked",
            threshold_key="unit_linkage_excess_max",
            review_flag="joint",
            held_items=_joint_linkage_items,
            corpus_hits=_joint_linkage_hits,
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
