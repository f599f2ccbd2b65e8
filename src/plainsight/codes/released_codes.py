"""The control codes a method with a formal guarantee writes from: patterns released by a DP mechanism,
or drawn from a prior that reads no private data, filled with values from pools that do not depend on the
private corpus.

A code's pattern is its paragraph range and the count of each entity type (MISC left out, counts clipped
at `max_count`). The domain of patterns is fixed before any data is read (every range and every count of
every type), so the released histogram reveals nothing through which cells it has.

- `histogram`: each privacy unit adds weight 1 to the domain, spread evenly over its training segments'
  patterns, so adding or removing a unit moves the histogram by at most 1 in L1 and in L2 however many
  segments it has. Gaussian noise of `noise_multiplier` per cell releases it; the patterns are drawn
  from its positive part (post-processing). Its (epsilon, delta) composes with the method's training
  (`plainsight.accounting`).
- `prior`: every pattern of the domain equally likely; no private data is read and nothing is spent.

The values come from the fictional pools as they are, never filtered by the real values
(`plainsight.codes.fictional.RealCodeValues` reads the private corpus): a fictional value that happens
to equal a real one is measured against the held-out control like any other leak.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from plainsight import accounting
from plainsight.codes.control_code import entities_to_records, format_code, records_to_entities, type_counts
from plainsight.codes.fictional import EXCLUDED_TYPES, FictionalPools, fictional_entities
from plainsight.entities import ENTITY_TYPES
from plainsight.rng import stable_rng
from plainsight.settings import dp_delta

Source = Literal["histogram", "prior"]
SOURCES: tuple[str, ...] = ("histogram", "prior")
PATTERN_TYPES: tuple[str, ...] = tuple(t for t in ENTITY_TYPES if t not in EXCLUDED_TYPES)
# the doc_id of a released code: it names the released pattern draw, never a real document
RELEASED_ID = "released{:05d}"

# (paragraph range, count of each of PATTERN_TYPES)
Pattern = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class PatternDomain:
    """Every pattern a released code may have, fixed before any data is read."""

    ranges: int
    max_count: int

    def __post_init__(self):
        if self.ranges < 1 or self.max_count < 1:
            raise ValueError(f"a pattern domain needs ranges and max_count of at least 1, not {self}")

    @property
    def size(self) -> int:
        return self.ranges * (self.max_count + 1) ** len(PATTERN_TYPES)

    def patterns(self) -> list[Pattern]:
        """Every pattern, in index order."""
        return [
            (segment, combo)
            for segment in range(self.ranges)
            for combo in itertools.product(range(self.max_count + 1), repeat=len(PATTERN_TYPES))
        ]

    def index(self, pattern: Pattern) -> int:
        segment, counts = pattern
        index = segment
        for count in counts:
            index = index * (self.max_count + 1) + count
        return index

    def pattern_of(self, segment: int, entities: Sequence[tuple[str, str]]) -> Pattern:
        """A segment's pattern: its range and each type's count, clipped at `max_count`."""
        if not 0 <= segment < self.ranges:
            raise ValueError(f"segment {segment} outside the {self.ranges} paragraph ranges")
        counts = type_counts(list(entities))
        return segment, tuple(min(counts.get(t, 0), self.max_count) for t in PATTERN_TYPES)


@dataclass(frozen=True)
class ReleasedCodeSettings:
    """`codes.released`: where a guaranteed method's code patterns come from and what they cost."""

    source: Source
    budget_share: float  # of the method's epsilon, spent on the histogram (`histogram` only)
    max_count: int
    threshold: float  # in noise standard deviations: the cells kept of the noised histogram

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"codes.released.source must be one of {SOURCES}, not {self.source!r}")
        if self.source == "histogram" and not 0 < self.budget_share < 1:
            raise ValueError(f"codes.released.budget_share must lie in (0, 1), not {self.budget_share}")

    @classmethod
    def from_config(cls, block: Mapping[str, Any]) -> ReleasedCodeSettings:
        return cls(
            block["source"], float(block["budget_share"]), int(block["max_count"]), float(block["threshold"])
        )

    @property
    def spent_share(self) -> float:
        """The share of the method's epsilon the codes spend: none from the prior."""
        return self.budget_share if self.source == "histogram" else 0.0

    def training_block(self, dpsgd: Mapping[str, Any]) -> dict[str, Any]:
        """The `dpsgd` block the adapter trains with: its epsilon less the codes' share."""
        return {**dpsgd, "epsilon": float(dpsgd["epsilon"]) * (1 - self.spent_share)}


def training_units(codes: pd.DataFrame, docs: pd.DataFrame, privacy_unit: str) -> list[str]:
    """The privacy unit of each training row of `codes`: its document's `unit_id` (`document`), or the
    segment itself (`sequence`), as DP-SGD counts them."""
    train = codes[codes["split"] == "train"]
    if privacy_unit == "sequence":
        return [f"{doc_id}#{segment}" for doc_id, segment in zip(train["doc_id"], train["segment"])]
    if privacy_unit != "document":
        raise ValueError(f"privacy unit must be document or sequence, not {privacy_unit!r}")
    unit_of = dict(zip(docs["doc_id"].astype(str), docs["unit_id"].astype(str)))
    return [unit_of[str(doc_id)] for doc_id in train["doc_id"]]


def unit_histogram(codes: pd.DataFrame, units: Sequence[str], domain: PatternDomain) -> np.ndarray:
    """The training segments' patterns, each privacy unit adding weight 1 spread evenly over its segments
    (`units`: the unit of each training row, `training_units`)."""
    train = codes[codes["split"] == "train"]
    if len(units) != len(train):
        raise ValueError(f"{len(units)} units for {len(train)} training segments")
    histogram = np.zeros(domain.size)
    per_unit: dict[str, list[int]] = {}
    for row, unit in zip(train.itertuples(index=False), units):
        cell = domain.index(domain.pattern_of(int(row.segment), records_to_entities(row.entities)))
        per_unit.setdefault(unit, []).append(cell)
    for cells in per_unit.values():
        np.add.at(histogram, cells, 1.0 / len(cells))
    return histogram


def noised_histogram(histogram: np.ndarray, noise_multiplier: float, *key: object) -> np.ndarray:
    """The Gaussian mechanism on every cell (sensitivity 1), seeded by `key`."""
    rng = np.random.default_rng(stable_rng("released code patterns", *key).getrandbits(64))
    return histogram + rng.normal(0.0, noise_multiplier, size=histogram.shape)


def pattern_weights(noised: np.ndarray | None, threshold: float, domain: PatternDomain) -> np.ndarray:
    """The distribution codes are drawn from: the cells of a noised histogram above `threshold`, in
    proportion to their noised counts (post-processing: most cells of the domain are empty, and noise
    alone would otherwise spread the draws over all of them), or the uniform prior (None, or a histogram
    with no cell above the threshold)."""
    if noised is None or not (noised > threshold).any():
        return np.full(domain.size, 1.0 / domain.size)
    kept = np.where(noised > threshold, noised, 0.0)
    return kept / kept.sum()


def total_variation(p: np.ndarray, q: np.ndarray) -> float:
    """Half the L1 distance between two distributions over the same cells."""
    return 0.5 * float(np.abs(p / p.sum() - q / q.sum()).sum())


def released_codes_table(
    weights: np.ndarray, domain: PatternDomain, pools: FictionalPools, generations: int, seed: int
) -> pd.DataFrame:
    """`generations` codes drawn from `weights`, each filled with fictional values of its counts, in the
    schema of a fictional codes table (training rows; doc_id `RELEASED_ID`)."""
    if generations < 1:
        raise ValueError(f"at least one code to draw, not {generations}")
    rng = np.random.default_rng(stable_rng(seed, "released code draws").getrandbits(64))
    patterns = domain.patterns()
    rows = []
    for number, cell in enumerate(rng.choice(domain.size, size=generations, p=weights)):
        segment, counts = patterns[cell]
        entities = fictional_entities(
            dict(zip(PATTERN_TYPES, counts)), pools, stable_rng(seed, "released code values", number)
        )
        rows.append(
            {
                "doc_id": RELEASED_ID.format(number),
                "segment": segment,
                "split": "train",
                "seed": seed,
                "code": format_code(entities),
                "entities": entities_to_records(entities),
            }
        )
    return pd.DataFrame(rows, columns=["doc_id", "segment", "split", "seed", "code", "entities"])


def release_patterns(
    codes: pd.DataFrame,
    docs: pd.DataFrame,
    settings: ReleasedCodeSettings,
    dpsgd: Mapping[str, Any],
    ranges: int,
    key: Sequence[object],
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rule `release_code_patterns`: the distribution a method's codes are drawn from (one row per
    pattern of the domain) and the record of its mechanism, the histogram noised for the codes' share of
    the method's epsilon at the method's delta (`dpsgd`: its block), seeded by `key`; or the prior (no
    private data read: `codes` and `docs` may be None)."""
    domain = PatternDomain(ranges, settings.max_count)
    if settings.source == "prior":
        weights = pattern_weights(None, 0.0, domain)
        record: dict[str, Any] = {
            "mechanism": "none: every pattern of the domain equally likely (no private data read)",
            "source": "prior",
            "epsilon": 0.0,
        }
    else:
        units = training_units(codes, docs, dpsgd["privacy_unit"])
        delta = dp_delta(dpsgd["delta"], len(set(units)))
        epsilon = settings.budget_share * float(dpsgd["epsilon"])
        noise = accounting.gaussian_noise_multiplier(epsilon, delta)
        noised = noised_histogram(unit_histogram(codes, units, domain), noise, *key)
        threshold = settings.threshold * noise
        weights = pattern_weights(noised, threshold, domain)
        record = {
            "mechanism": "Gaussian noise on every cell of the code-pattern histogram, each privacy unit "
            "adding weight 1 spread over its segments (sensitivity 1); the cells above the threshold kept",
            "source": "histogram",
            "epsilon": epsilon,
            "delta": float(delta),
            "noise_multiplier": noise,
            "sample_rate": 1.0,
            "steps": 1,
            "privacy_unit": dpsgd["privacy_unit"],
            "threshold": threshold,
            "noised_count": noised_count(noised, threshold),
        }
    record |= {"max_count": settings.max_count, "ranges": ranges, "cells": domain.size}
    frame = pd.DataFrame({"cell": np.arange(domain.size), "weight": weights})
    return frame, record


def noised_count(noised: np.ndarray, threshold: float) -> float:
    """How many units the noised histogram counts: the sum of the cells kept (the noise of every empty
    cell of the domain would swamp a sum over all of them), or of every cell where none is kept."""
    kept = noised[noised > threshold]
    return float(kept.sum() if kept.size else noised.sum())


def codes_to_draw(record: Mapping[str, Any], generations: int | None) -> int:
    """How many codes a seed draws: `generations`, else as many as the noised histogram counts (the
    prior has no count: it needs `generations`)."""
    if generations is not None:
        return generations
    if "noised_count" not in record:
        raise ValueError("codes from the prior need prefix_tuning.generations: the prior counts no segments")
    return max(1, round(record["noised_count"]))
