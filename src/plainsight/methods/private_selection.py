"""The differentially private mechanisms of the training-free generators: the private text only chooses
among texts the model wrote. No model here; the generation stage writes and embeds the texts
(`plainsight.generation.seed_rewrite`, `plainsight.generation.private_evolution`).

Seed rewriting (Ma and Rajtmajer 2025, RPSG): per private seed, m abstracted candidates; one is chosen
by the Gaussian mechanism on a utility in [0, 1] (the normalised cosine of seed and candidate, so its
sensitivity is 1), with the classical calibration of their Eq. 1,
sigma = sqrt(2 ln(1.25 / delta)) / epsilon; then a cosine filter against the seeds and a filter that
keeps texts above a percentile of a surrogate model's negative log-likelihood.

Private evolution (Xie et al. 2024, Aug-PE): a population of texts written without private data; in
each of T rounds every privacy unit votes for the synthetic texts nearest to its records in embedding
space (its votes scaled to L2 norm 1, so one unit moves the histogram by at most 1), Gaussian noise is
added to the histogram, the texts with the highest noisy counts survive, and the model writes
variations of them. The T Gaussian mechanisms compose to the stated (epsilon, delta): Opacus's PRV
accountant (sample rate 1: every unit votes in every round) gives the noise multiplier and the
epsilon spent.

Both papers take delta = 1 / (N ln N) for N private records (`paper_delta`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from plainsight import accounting


def paper_delta(records: int) -> float:
    """1 / (N ln N) for N private records, the delta of both papers."""
    if records < 2:
        raise ValueError(f"delta = 1 / (N ln N) needs at least 2 private records, not {records}")
    return 1.0 / (records * math.log(records))


# --- seed rewriting: the Gaussian mechanism on candidate utilities --------------------------------


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classical Gaussian mechanism's noise (RPSG's Eq. 1):
    sqrt(2 ln(1.25 / delta)) x sensitivity / epsilon."""
    accounting.check_budget(epsilon, delta)
    return math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / epsilon


def normalised_cosine(seed: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """(1 + cos) / 2 of one seed's embedding [D] and each candidate's [m, D]: a utility in [0, 1]."""
    seed = seed / max(np.linalg.norm(seed), 1e-12)
    norms = np.maximum(np.linalg.norm(candidates, axis=1), 1e-12)
    cosine = candidates @ seed / norms
    return np.clip((1 + cosine) / 2, 0.0, 1.0)


def noisy_argmax(utilities: Sequence[float], sigma: float, rng: np.random.Generator) -> int:
    """The index of the highest utility after independent N(0, sigma^2) noise on each."""
    noisy = np.asarray(utilities, dtype=float) + rng.normal(0.0, sigma, len(utilities))
    return int(np.argmax(noisy))


def least_similar(similarities: Sequence[float], keep_share: float) -> list[int]:
    """Positions of the `keep_share` least similar texts (at least one), in their original order."""
    count = max(1, math.floor(keep_share * len(similarities) + 1e-9)) if len(similarities) else 0
    order = sorted(range(len(similarities)), key=lambda i: (similarities[i], i))
    return sorted(order[:count])


def above_percentile(nll: Sequence[float], percentile: float) -> list[int]:
    """Positions of the texts whose NLL exceeds the `percentile` (a share, 0 to 1) of all of them:
    the least predictable ones, which a surrogate model is least likely to have memorised."""
    if not len(nll):
        return []
    threshold = float(np.percentile(np.asarray(nll, dtype=float), 100 * percentile))
    return [i for i, value in enumerate(nll) if value > threshold]


@dataclass(frozen=True)
class SeedRewriteSettings:
    """RPSG's settings: seeds per paragraph range, candidates per seed (m), the selection's budget, the
    filters' shares."""

    private_seeds: int | None  # per paragraph range, drawn from the training segments; None: all
    candidates: int  # m
    epsilon: float  # of each seed's selection
    delta: float | None  # None: 1 / (N ln N) for the N training segments
    similarity_keep: float  # cosine filter: the share of texts kept, the least similar to the seeds
    nll_percentile: float  # NLL filter: texts above this percentile (a share) of the surrogate's NLL

    def __post_init__(self):
        if self.candidates < 2:
            raise ValueError(f"candidates (m) must be at least 2 to choose among, not {self.candidates}")
        if self.private_seeds is not None and self.private_seeds < 1:
            raise ValueError(f"private_seeds must be at least 1, not {self.private_seeds}")
        accounting.check_budget(self.epsilon, self.delta)
        if not 0 < self.similarity_keep <= 1:
            raise ValueError(f"similarity_keep must lie in (0, 1], not {self.similarity_keep}")
        if not 0 <= self.nll_percentile < 1:
            raise ValueError(f"nll_percentile must lie in [0, 1), not {self.nll_percentile}")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SeedRewriteSettings:
        """The settings of the config's RPSG block."""
        return cls(
            params["private_seeds"],
            params["candidates"],
            params["epsilon"],
            params["delta"],
            params["similarity_keep"],
            params["nll_percentile"],
        )

    def delta_for(self, records: int) -> float:
        return self.delta if self.delta is not None else paper_delta(records)

    def sigma(self, records: int) -> float:
        """The selection noise of Eq. 1 for `records` private records."""
        return gaussian_sigma(self.epsilon, self.delta_for(records))


# --- private evolution: the noisy nearest-neighbour histogram over T rounds -----------------------


def noise_multiplier(epsilon: float, delta: float, rounds: int) -> float:
    """The histogram noise (per unit of sensitivity) whose `rounds` Gaussian mechanisms compose to
    (epsilon, delta), every unit in every round (`plainsight.accounting`)."""
    return accounting.gaussian_noise_multiplier(epsilon, delta, rounds)


def composed_epsilon(noise: float, rounds: int, delta: float) -> float:
    """The epsilon at `delta` of `rounds` Gaussian mechanisms of noise multiplier `noise`, every unit in
    each (Opacus's PRV accountant)."""
    return accounting.composed_epsilon([(noise, 1.0, rounds)], delta)


def nearest_samples(
    private: np.ndarray,
    private_groups: Sequence[int],
    synthetic: np.ndarray,
    synthetic_groups: Sequence[int],
    votable: Sequence[bool] | None = None,
) -> list[int]:
    """For each private record, the position of the nearest synthetic text (L2) of its own group, among
    the `votable` ones where its group has any."""
    synthetic_groups = np.asarray(synthetic_groups)
    votable = np.ones(len(synthetic_groups), bool) if votable is None else np.asarray(votable, bool)
    nearest = []
    for row, group in zip(private, private_groups):
        positions = np.flatnonzero(synthetic_groups == group)
        if not len(positions):
            raise ValueError(f"no synthetic text in group {group} to vote for")
        if votable[positions].any():
            positions = positions[votable[positions]]
        distances = np.linalg.norm(synthetic[positions] - row, axis=1)
        nearest.append(int(positions[int(np.argmin(distances))]))
    return nearest


def unit_votes(nearest: Sequence[int], units: Sequence[str], bins: int) -> np.ndarray:
    """The vote histogram: each unit's counts over the synthetic texts, scaled to L2 norm 1, summed
    over the units (adding or removing one unit moves it by at most 1 in L2)."""
    if len(nearest) != len(units):
        raise ValueError(f"{len(nearest)} votes for {len(units)} records")
    histogram = np.zeros(bins)
    for unit in dict.fromkeys(units):
        counts = np.bincount([n for n, u in zip(nearest, units) if u == unit], minlength=bins).astype(float)
        histogram += counts / np.linalg.norm(counts)
    return histogram


def top_per_group(counts: np.ndarray, groups: Sequence[int], per_group: int) -> list[int]:
    """Positions of the `per_group` highest counts of each group (ties: the earlier position), in order."""
    kept = []
    for group in dict.fromkeys(groups):
        positions = [i for i, g in enumerate(groups) if g == group]
        kept += sorted(positions, key=lambda i: (-counts[i], i))[:per_group]
    return sorted(kept)


@dataclass(frozen=True)
class EvolutionSettings:
    """Aug-PE's settings: rounds (T), texts kept per group and round, variations per kept text (the
    population is the kept texts and their variations), how strongly a variation departs, the budget."""

    rounds: int  # T
    samples: int  # texts kept per paragraph range and round (the corpus: the last round's)
    variations: int  # written per kept text each round (L)
    variation_strength: float  # share of a text's words blanked before the model rewrites it
    epsilon: float
    delta: float | None  # None: 1 / (N ln N) for the N privacy units
    # texts with fewer words take no votes and survive only where a range lacks longer ones: a check of
    # the model's own output, so the guarantee is unchanged (an empty text otherwise draws votes)
    min_words: int = 0

    def __post_init__(self):
        if self.rounds < 1:
            raise ValueError(f"rounds (T) must be at least 1, not {self.rounds}")
        if self.samples < 1 or self.variations < 1:
            raise ValueError(
                f"samples and variations must be at least 1, not {self.samples}, {self.variations}"
            )
        if self.min_words < 0:
            raise ValueError(f"min_words must be at least 0, not {self.min_words}")
        if not 0 <= self.variation_strength < 1:
            raise ValueError(f"variation_strength must lie in [0, 1), not {self.variation_strength}")
        accounting.check_budget(self.epsilon, self.delta)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> EvolutionSettings:
        """The settings of the config's Aug-PE block."""
        return cls(
            params["rounds"],
            params["samples"],
            params["variations"],
            params["variation_strength"],
            params["epsilon"],
            params["delta"],
            params["min_words"],
        )

    def delta_for(self, units: int) -> float:
        return self.delta if self.delta is not None else paper_delta(units)


@dataclass(frozen=True)
class Population:
    """Texts (any items) and the group (paragraph range) of each."""

    items: list
    groups: list[int]

    def take(self, positions: Sequence[int]) -> Population:
        return Population([self.items[i] for i in positions], [self.groups[i] for i in positions])

    def __add__(self, other: Population) -> Population:
        return Population(self.items + other.items, self.groups + other.groups)


@dataclass(frozen=True)
class PrivateRecords:
    """The private records' embeddings [N, D], the group of each and its privacy unit."""

    embeddings: np.ndarray
    groups: list[int]
    units: list[str]


def evolve(
    initial: Population,
    private: PrivateRecords,
    embed: Callable[[list], np.ndarray],
    vary: Callable[[Population, int], Population],
    settings: EvolutionSettings,
    noise: float,
    rng: np.random.Generator,
    words: Callable[[Any], int] | None = None,
) -> list[Population]:
    """Private evolution from `initial`: per round, the noisy vote histogram (`noise` x N(0, 1) per
    text) keeps the `samples` best texts of each group; after every round but the last, `vary(kept,
    next round)` writes `variations` texts per kept text, which join them. Returns the texts kept in
    each round; the last is the result. `words`: an item's word count, against `settings.min_words`."""
    population, kept_by_round = initial, []
    for round_index in range(settings.rounds):
        votable = [words is None or words(item) >= settings.min_words for item in population.items]
        nearest = nearest_samples(
            private.embeddings, private.groups, embed(population.items), population.groups, votable
        )
        votes = unit_votes(nearest, private.units, len(population.items))
        noisy = np.where(votable, votes + rng.normal(0.0, noise, len(votes)), -np.inf)
        kept = population.take(top_per_group(noisy, population.groups, settings.samples))
        kept_by_round.append(kept)
        if round_index + 1 < settings.rounds:
            population = kept + vary(kept, round_index + 1)
    return kept_by_round
