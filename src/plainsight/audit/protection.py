"""Who a method's formal guarantee protects, stated per person.

An (epsilon, delta) claim protects one record of the kind its method declares
(`plainsight.methods.registry.Method.protects`): one privacy unit, the docs' `unit_id` with all its
documents (DP-SGD, Aug-PE), or one training segment (RPSG's selection, per seed; DP-SGD with
`dpsgd.privacy_unit: sequence`, which its guarantee record says). A person is covered as a whole only
where every document of theirs shares one unit. One whose documents make k protected records has
k epsilon at k e^((k-1) epsilon) delta (group privacy); RPSG's selections each read their own seed alone,
so k of them compose to k epsilon at k delta. The corpus says how its training documents fall into units
(`unit_sizes`), and RPSG's guarantee records how many seeds one unit fed at most.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from plainsight.audit.guarantee import Guarantee
from plainsight.methods import registry
from plainsight.methods.registry import PROTECTED, Protection

SEQUENCE_UNIT = "sequence"  # `dpsgd.privacy_unit` that makes every training segment its own unit
UNIT_COLUMNS = ("doc_id", "split", "unit_id")  # what `unit_sizes` reads of the docs table


@dataclass(frozen=True)
class UnitSizes:
    """How the training documents of a corpus fall into privacy units (the docs' `unit_id`)."""

    units: int
    several: int  # units with more than one document
    largest: int  # documents of the largest unit
    most_segments: int  # training segments of the unit that has the most
    own: bool  # every document is its own unit: the corpus names no units (TAB, or no `unit_id`)


def unit_sizes(docs: pd.DataFrame) -> UnitSizes:
    """The privacy units of a docs table's training split (one row per document segment)."""
    train = docs[docs["split"] == "train"]
    if train.empty:
        raise ValueError("the docs table has no training segment")
    units = train.groupby(train["unit_id"].astype(str))
    documents = units["doc_id"].nunique()
    return UnitSizes(
        units=len(documents),
        several=int((documents > 1).sum()),
        largest=int(documents.max()),
        most_segments=int(units.size().max()),
        own=bool((train["unit_id"].astype(str) == train["doc_id"].astype(str)).all()),
    )


def _noun_count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def units_line(sizes: UnitSizes) -> str:
    """The corpus's units in words: how many, how many hold several documents, the largest."""
    own = "; the corpus names no units, so each document is its own" if sizes.own else ""
    return (
        f"Privacy units (the docs' `unit_id`) of the training split: {sizes.units}, with more than one "
        f"document: {sizes.several}, largest: {_noun_count(sizes.largest, 'document')} (most training "
        f"segments of one unit: {sizes.most_segments}){own}."
    )


def short_name(protected_record: str) -> str:
    """A protected record (`PROTECTED`) without its explanation: "privacy unit", "training segment"."""
    return protected_record.split(" (")[0]


def protected(method: str, records: Sequence[Mapping[str, Any]]) -> Protection | None:
    """What `method`'s guarantee protects: the registry's declaration, narrowed to one training segment
    where its records say DP-SGD ran with `privacy_unit: sequence`."""
    declared = registry.method(method).protects
    if declared == "unit" and any(r.get("privacy_unit") == SEQUENCE_UNIT for r in records):
        return "segment"
    return declared


def record_claim(records: Sequence[Mapping[str, Any]]) -> Guarantee:
    """The weakest claim over the seeds' guarantee records (largest epsilon and delta): the epsilon that
    bounds the release where a record states one (`release_epsilon`), else its `epsilon`."""
    epsilons = [r["epsilon"] if r.get("release_epsilon") is None else r["release_epsilon"] for r in records]
    return Guarantee(max(map(float, epsilons)), max(float(r["delta"]) for r in records))


def group_claim(claim: Guarantee, members: int, separate: bool) -> Guarantee:
    """The claim for `members` protected records at once: k epsilon at k e^((k-1) epsilon) delta (group
    privacy), or at k delta where each record feeds a mechanism of its own (`separate`: the k mechanisms
    compose). A delta of 1 bounds nothing."""
    growth = 1.0 if separate else math.exp(min((members - 1) * claim.epsilon, 700.0))
    return Guarantee(members * claim.epsilon, min(1.0, members * growth * claim.delta))


@dataclass(frozen=True)
class PersonClaim:
    """A method's guarantee per protected record, and for the privacy unit that makes the most of them."""

    protects: Protection | None  # None: no formal guarantee
    claim: Guarantee | None = None
    per_selection: bool = False  # one mechanism per record (RPSG's selection of each seed)
    per_unit: int | None = None  # the most protected records one unit makes; None: not known
    unit_claim: Guarantee | None = None  # the claim for that unit


def person_claim(method: str, records: Sequence[Mapping[str, Any]], sizes: UnitSizes | None) -> PersonClaim:
    """What `method`'s guarantee records (one per seed) claim per protected record and per privacy unit:
    a unit is one record where the unit is protected; RPSG's records say the most seeds one unit fed; a
    segment-level DP-SGD unit makes as many records as its training segments (`sizes`)."""
    protects = protected(method, records)
    if protects is None or not records:
        return PersonClaim(None)
    claim = record_claim(records)
    per_selection = registry.method(method).rewrites_seeds
    seeds = [int(r["largest_unit_seeds"]) for r in records if "largest_unit_seeds" in r]
    if protects == "unit":
        per_unit: int | None = 1
    elif seeds:
        per_unit = max(seeds)
    else:
        per_unit = sizes.most_segments if sizes is not None else None
    unit_claim = group_claim(claim, per_unit, per_selection) if per_unit is not None else None
    return PersonClaim(protects, claim, per_selection, per_unit, unit_claim)


def _delta(delta: float) -> str:
    return "1: no bound" if delta >= 1 else f"{delta:.2g}"


def person_statement(name: str, person: PersonClaim) -> str:
    """What the guarantee of the method called `name` means for a person with several documents."""
    if person.claim is None:
        return (
            f"{name}: no formal guarantee; nothing bounds what is revealed of a person, with one document "
            "or many."
        )
    epsilon, delta = person.claim.epsilon, person.claim.delta
    head = f"{name}: epsilon {epsilon:.2f} at delta {delta:.2g} protects one {PROTECTED[person.protects]}"
    if person.protects == "unit":
        return (
            f"{head}: a person all of whose documents share one unit is protected as a whole, however many "
            f"documents they have; one whose documents fall into k units has k x {epsilon:.2f} at delta "
            f"k e^((k-1) x {epsilon:.2f}) x {delta:.2g} (group privacy)."
        )
    if person.per_selection:
        terms = (
            ", per selection (its seed): a person whose documents feed m seeds has "
            f"m x {epsilon:.2f} at delta m x {delta:.2g} (each selection reads its own seed alone)"
        )
        largest = "fed up to {} seeds"
    else:
        terms = (
            f": a person whose documents make m training segments has m x {epsilon:.2f} at delta "
            f"m e^((m-1) x {epsilon:.2f}) x {delta:.2g} (group privacy)"
        )
        largest = "has up to {} training segments"
    if person.per_unit is None or person.unit_claim is None:
        return f"{head}{terms}."
    return (
        f"{head}{terms}; here one privacy unit {largest.format(person.per_unit)}: epsilon "
        f"{person.unit_claim.epsilon:.2f} at delta {_delta(person.unit_claim.delta)}."
    )
