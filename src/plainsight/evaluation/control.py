"""The held-out control of every leak measure: the same matcher run against real values (and text)
that the method never saw. A value that unseen documents show as often is a phantom, not a leak.

- In-context methods (paired): per generation, the values of as many training segments as its prompt
  showed, from documents the prompt did not show, each drawn with the run's seed among them with the
  entity types of one context document (the nearest type set where none has them).
- Trained methods (unpaired): the distinct values that occur only in the fine-tuning segments against
  those that occur only in held-out (dev, test) segments: the share of each that the corpus holds.
  Verbatim copying: fine-tuning segments against held-out segments.

Measures (`MEASURES`): `exact` (a value of the run's identifier set, as PIPP counts), `partial` (a
word of a person name), `near` (a value, a name word or a near variant), `any_identifier` (a direct or
quasi value whatever the identifier set), `verbatim` (a run of `verbatim_ngram` words).

Each leaked value (any identifier) is classed `source_specific` when no real document outside its
source holds it (an unshown or held-out document for in-context methods, a held-out one for trained
methods) and `common` otherwise. Documents, not segments: a shown document's other segment is the
same case, so it neither explains a value nor serves as a control.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from plainsight.entities import SegmentKey
from plainsight.matching import (
    NearMatcher,
    leaked_values,
    name_words,
    partial_leak,
    public_words,
    unique_values,
    value_pattern,
)
from plainsight.rng import stable_rng

MEASURES: tuple[str, ...] = ("exact", "partial", "near", "any_identifier", "verbatim")
# The per-generation column of each measure's member hit (the first three are the paper's own leak
# columns of plainsight.evaluation.privacy) and of its control hit.
MEMBER_COLUMNS: dict[str, str] = {
    "exact": "leaked",
    "partial": "partial_leak",
    "near": "near_leak",
    "any_identifier": "any_identifier_leak",
    "verbatim": "verbatim_copy",
}
CONTROL_COLUMNS: dict[str, str] = {m: f"control_{m}" for m in MEASURES}
SOURCE_SPECIFIC, COMMON = "source_specific", "common"
ANY_IDENTIFIER_SET = "both"  # direct and quasi identifiers, whatever the run's identifier set
COLUMNS: tuple[str, ...] = (
    "control_doc_ids",
    "control_segments",
    "any_identifier_leak",
    "verbatim_copy",
    *CONTROL_COLUMNS.values(),
    "leaked_identifier_values",
    "leaked_value_classes",
    "source_specific_leak",
)
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

    def hits(self, text: str, verbatim_ngram: int, min_letters: int) -> dict[str, bool]:
        """Whether `text` leaks something of these segments, per measure."""
        own = word_ngrams(text, verbatim_ngram)
        return {
            "exact": bool(leaked_values(text, self.values)),
            "partial": partial_leak(text, self.persons, min_letters),
            "near": bool(self.near.found(text)),
            "any_identifier": bool(leaked_values(text, self.any_values)),
            "verbatim": any(not own.isdisjoint(other) for other in self.ngrams),
        }


def value_classes(values: Sequence[str], source: Iterable[SegmentKey], real: RealValues) -> list[str]:
    """`common` where a real document outside `source`'s documents holds the value, else
    `source_specific`: another segment of a source document is the same case, not independent text."""
    inside = {doc_id for doc_id, _ in source}
    return [
        COMMON if any(doc_id not in inside for doc_id, _ in real.holders(value)) else SOURCE_SPECIFIC
        for value in values
    ]


def _generation_row(text: str, member: Source, control: Source | None, real: RealValues) -> dict[str, Any]:
    hits = member.hits(text, real.verbatim_ngram, real.min_letters)
    controls = control.hits(text, real.verbatim_ngram, real.min_letters) if control else {}
    leaked = leaked_values(text, member.any_values)
    classes = value_classes(leaked, member.keys, real)
    return {
        "control_doc_ids": [key[0] for key in control.keys] if control else [],
        "control_segments": [key[1] for key in control.keys] if control else [],
        "any_identifier_leak": hits["any_identifier"],
        "verbatim_copy": hits["verbatim"],
        **{column: controls.get(m) for m, column in CONTROL_COLUMNS.items()},
        "leaked_identifier_values": leaked,
        "leaked_value_classes": classes,
        "source_specific_leak": SOURCE_SPECIFIC in classes,
    }


# --- in-context: a matched control per generation -------------------------------------------------


def _type_distance(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return 0.0 if not union else 1 - len(a & b) / len(union)


def control_keys(
    context: Sequence[SegmentKey],
    pool: Sequence[SegmentKey],
    types: Mapping[SegmentKey, frozenset[str]],
    rng: random.Random,
) -> list[SegmentKey]:
    """One segment of an unshown document per context document, with its entity types (or the nearest
    type set), none drawn twice; fewer only when the pool runs out. A shown document's other segments
    are the same case, so they are never drawn."""
    shown = {doc_id for doc_id, _ in context}
    free = sorted(key for key in pool if key[0] not in shown)
    drawn: list[SegmentKey] = []
    for key in context:
        if not free:
            break
        wanted = types.get(key, frozenset())
        distances = [_type_distance(wanted, types.get(other, frozenset())) for other in free]
        nearest = [other for other, d in zip(free, distances) if d == min(distances)]
        choice = nearest[rng.randrange(len(nearest))]
        drawn.append(choice)
        free.remove(choice)
    return drawn


def in_context_control(
    corpus: pd.DataFrame,
    contexts: Sequence[Sequence[SegmentKey]],
    pool: Sequence[SegmentKey],
    real: RealValues,
    seed: int,
) -> pd.DataFrame:
    """Per generation: its matched control segments, the control hit of each measure, the member hits
    the paper's columns lack, and its leaked identifier values with their classes."""
    rows = []
    for row, shown in zip(corpus.to_dict("records"), contexts):
        rng = stable_rng(seed, "control", int(row["generation_id"]))
        drawn = control_keys(shown, pool, real.types, rng)
        rows.append(
            _generation_row(str(row["text"] or ""), Source.of(shown, real), Source.of(drawn, real), real)
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


# --- trained: distinct values of the fine-tuning set against held-out values ---------------------


def trained_control(corpus: pd.DataFrame, train: Sequence[SegmentKey], real: RealValues) -> pd.DataFrame:
    """Per generation: the member hits against the whole fine-tuning set and its leaked identifier values
    classed against the held-out segments; no control hit (a trained method's control is per value,
    `trained_value_counts`)."""
    member = Source.of(train, real)
    return pd.DataFrame(
        [_generation_row(str(text or ""), member, None, real) for text in corpus["text"]],
        columns=list(COLUMNS),
    )


def _only_in(table: Mapping[SegmentKey, list[str]], keys, others) -> list[str]:
    elsewhere = {value.casefold() for key in others for value in table.get(key, [])}
    return [
        value
        for value in unique_values(v for k in keys for v in table.get(k, []))
        if value.casefold() not in elsewhere
    ]


def _near_found(generations: Sequence[str], values: Sequence[str], common_words: frozenset[str]) -> set[str]:
    if not values:
        return set()
    matcher = NearMatcher(values, common_words)
    return set().union(*(matcher.found(text) for text in generations))


def _side_counts(
    generations: Sequence[str], corpus: str, index: set, keys, others, real: RealValues
) -> dict[str, tuple[int, int]]:
    exact = _only_in(real.values, keys, others)
    persons = name_words(_only_in(real.persons, keys, others), real.min_letters)
    any_values = _only_in(real.any_values, keys, others)
    near = [*exact, *persons]
    return {
        "exact": (len(leaked_values(corpus, exact)), len(exact)),
        "partial": (len(leaked_values(corpus, persons)), len(persons)),
        "near": (len(_near_found(generations, near, real.common_words)), len(near)),
        "any_identifier": (len(leaked_values(corpus, any_values)), len(any_values)),
        "verbatim": (sum(not real.ngrams(key).isdisjoint(index) for key in keys), len(keys)),
    }


def trained_value_counts(
    generations: Sequence[str], train: Sequence[SegmentKey], held_out: Sequence[SegmentKey], real: RealValues
) -> dict[str, dict[str, int]]:
    """Per measure: the distinct values occurring only in the fine-tuning (held-out) segments, and how
    many of them the corpus holds; verbatim: the fine-tuning (held-out) segments sharing a run with a
    generation."""
    corpus = "\n|\n".join(generations)  # no value's whitespace spans two generations
    index = set().union(*(word_ngrams(text, real.verbatim_ngram) for text in generations))
    member = _side_counts(generations, corpus, index, train, held_out, real)
    control = _side_counts(generations, corpus, index, held_out, train, real)
    return {
        m: {
            "member_hits": member[m][0],
            "members": member[m][1],
            "control_hits": control[m][0],
            "controls": control[m][1],
        }
        for m in MEASURES
    }


def paired_value_counts(per_generation: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per measure of an in-context corpus: generations with a member hit, with a control hit, and the
    paired design's discordant counts (member hit only, control hit only)."""
    counts = {}
    for measure in MEASURES:
        member = per_generation[MEMBER_COLUMNS[measure]].astype(bool).to_numpy()
        control = per_generation[CONTROL_COLUMNS[measure]].astype(bool).to_numpy()
        counts[measure] = {
            "member_hits": int(member.sum()),
            "members": len(member),
            "control_hits": int(control.sum()),
            "controls": len(control),
            "member_only": int((member & ~control).sum()),
            "control_only": int((~member & control).sum()),
        }
    return counts
