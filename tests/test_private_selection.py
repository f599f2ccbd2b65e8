"""The training-free generators' mechanisms: RPSG's Gaussian selection and filters, the PII patterns,
Aug-PE's vote histogram, its accountant and its evolution on toy embeddings."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import chisquare, norm

from conftest import RESOURCES
from plainsight.errors import InputError
from plainsight.methods.pii import PiiPatterns
from plainsight.methods.private_selection import (
    EvolutionSettings,
    Population,
    PrivateRecords,
    SeedRewriteSettings,
    above_percentile,
    composed_epsilon,
    evolve,
    gaussian_sigma,
    least_similar,
    nearest_samples,
    noise_multiplier,
    noisy_argmax,
    normalised_cosine,
    paper_delta,
    top_per_group,
    unit_votes,
)

# --- RPSG ---------------------------------------------------------------------------------------


def test_eq1_sigma_by_hand():
    # delta = 1.25 e^-8: ln(1.25 / delta) = 8, so sigma = sqrt(16) / epsilon = 4 / epsilon
    assert gaussian_sigma(2.0, 1.25 * math.exp(-8)) == pytest.approx(2.0, abs=1e-12)
    assert gaussian_sigma(0.5, 1.25 * math.exp(-8), sensitivity=0.5) == pytest.approx(4.0, abs=1e-12)


def test_eq1_sigma_at_the_papers_delta_matches_its_table_6():
    # Reddit's N = 8948 training posts: delta = 1 / (N ln N); RPSG's sigma 4.80, 2.40, 1.20 at epsilon 1, 2, 4
    delta = paper_delta(8948)
    assert delta == pytest.approx(1 / (8948 * 9.09918), rel=1e-5)
    assert [round(gaussian_sigma(e, delta), 2) for e in (1, 2, 4)] == [4.80, 2.40, 1.20]


def test_normalised_cosine_is_a_utility_in_0_1():
    seed = np.array([1.0, 0.0])
    candidates = np.array([[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
    assert normalised_cosine(seed, candidates) == pytest.approx([1.0, 0.5, 0.0])


def test_a_huge_epsilon_picks_the_highest_utility():
    rng = np.random.default_rng(0)
    sigma = gaussian_sigma(1e9, 1e-5)
    assert {noisy_argmax([0.2, 0.9, 0.4, 0.899, 0.1], sigma, rng) for _ in range(500)} == {1}


def test_a_tiny_epsilon_chooses_close_to_uniformly():
    rng = np.random.default_rng(0)
    sigma = gaussian_sigma(1e-6, 1e-5)
    picks = [noisy_argmax([0.0, 0.25, 0.5, 0.75, 1.0], sigma, rng) for _ in range(5000)]
    counts = np.bincount(picks, minlength=5)
    assert chisquare(counts).pvalue > 0.01  # uniform at the 1% level
    assert counts.min() > 900  # each of the five near its 1000


def test_a_moderate_epsilon_favours_the_best_candidate():
    rng = np.random.default_rng(0)
    picks = [noisy_argmax([0.0, 1.0], gaussian_sigma(8.0, 1e-5), rng) for _ in range(2000)]
    # sigma = sqrt(2 ln 125000) / 8 = 0.606 on a gap of 1: P(best) = Phi(1 / (0.606 sqrt 2)) = 0.878
    assert 0.85 < np.mean(picks) < 0.91


def test_the_cosine_filter_keeps_the_least_similar_share():
    assert least_similar([0.9, 0.1, 0.5, 0.3], 0.5) == [1, 3]
    assert least_similar([0.9, 0.1, 0.5], 0.1) == [1]  # at least one
    assert least_similar([0.9, 0.1, 0.5], 1.0) == [0, 1, 2]
    assert least_similar([], 0.5) == []


def test_the_nll_filter_keeps_texts_above_the_percentile():
    # the 25th percentile of 1..5 is 2 (linear interpolation); kept: strictly above it
    assert above_percentile([3.0, 1.0, 5.0, 2.0, 4.0], 0.25) == [0, 2, 4]
    assert above_percentile([3.0, 1.0, 5.0, 2.0, 4.0], 0.0) == [0, 2, 3, 4]
    assert above_percentile([], 0.5) == []


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"candidates": 1}, "candidates (m) must be at least 2"),
        ({"epsilon": 0.0}, "epsilon must be a positive finite number"),
        ({"epsilon": -1.0}, "epsilon must be a positive finite number"),
        ({"delta": 1.0}, "delta must lie strictly between 0 and 1"),
        ({"similarity_keep": 0.0}, "similarity_keep must lie in"),
        ({"nll_percentile": 1.0}, "nll_percentile must lie in"),
        ({"private_seeds": 0}, "private_seeds must be at least 1"),
    ],
)
def test_bad_rewrite_settings_stop_with_one_line(changes, message):
    settings = {
        "private_seeds": None,
        "candidates": 5,
        "epsilon": 4.0,
        "delta": None,
        "similarity_keep": 0.8,
        "nll_percentile": 0.25,
    }
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        SeedRewriteSettings(**{**settings, **changes})
    assert "\n" not in str(raised.value)


def test_rewrite_sigma_takes_the_papers_delta_for_its_records():
    settings = SeedRewriteSettings(None, 5, 1.0, None, 0.8, 0.25)
    assert settings.sigma(8948) == pytest.approx(gaussian_sigma(1.0, paper_delta(8948)))
    assert SeedRewriteSettings(None, 5, 2.0, 1.25 * math.exp(-8), 0.8, 0.25).sigma(10) == pytest.approx(2.0)


# --- PII patterns ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pii() -> PiiPatterns:
    return PiiPatterns.load(RESOURCES / "pii_patterns.yaml")


@pytest.mark.parametrize(
    "text, redacted, count",
    [
        ("Write to jan.kowalski@example.com today.", "Write to [MASK] today.", 1),
        ("See https://hudoc.echr.coe.int/eng?i=001 and www.example.org.", "See [MASK] and [MASK]", 2),
        (
            "Application no. 40593/04 was lodged on 12 March 2003.",
            "Application no. [MASK] was lodged on [MASK].",
            2,
        ),
        ("Born 03/11/1961, record 4471902.", "Born [MASK], record [MASK].", 2),
        ("Call +48 22 123 4567 or 555-123-4567.", "Call [MASK] or [MASK].", 2),
        ("Server 192.168.10.4 logged it.", "Server [MASK] logged it.", 1),
        (
            "The applicant, Mr Henrik Hasslund, was born in 1961.",
            "The applicant, Mr Henrik Hasslund, was born in 1961.",
            0,
        ),
    ],
)
def test_pii_patterns_mask_structured_identifiers_only(pii, text, redacted, count):
    assert pii.redact(text) == (redacted, count)


def test_a_bad_pii_pattern_names_its_file_and_pattern(tmp_path):
    path = tmp_path / "pii.yaml"
    path.write_text("mask: '[X]'\npatterns:\n  ok: '\\d+'\n  broken: '(unclosed'\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"pii.yaml: pattern broken: not a regular expression") as raised:
        PiiPatterns.load(path)
    assert "\n" not in str(raised.value)
    path.write_text("patterns: []\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a `mask` string and a `patterns` mapping"):
        PiiPatterns.load(path)


# --- Aug-PE -------------------------------------------------------------------------------------


def test_each_unit_votes_with_l2_norm_one():
    # unit a: two records, both nearest text 0; b: one record, text 1; c: two records, texts 1 and 2
    votes = unit_votes([0, 0, 1, 1, 2], ["a", "a", "b", "c", "c"], 4)
    half = 1 / math.sqrt(2)
    assert votes == pytest.approx([1.0, 1.0 + half, half, 0.0])
    without_c = unit_votes([0, 0, 1], ["a", "a", "b"], 4)
    assert np.linalg.norm(votes - without_c) == pytest.approx(1.0)


def test_records_vote_for_the_nearest_text_of_their_own_group():
    synthetic = np.array([[0.0, 0.0], [10.0, 0.0], [1.0, 0.0]])
    private = np.array([[0.9, 0.0], [9.0, 0.0]])
    assert nearest_samples(private, [0, 0], synthetic, [0, 0, 1]) == [0, 1]
    assert nearest_samples(private, [1, 1], synthetic, [0, 0, 1]) == [2, 2]
    with pytest.raises(ValueError, match="no synthetic text in group 2"):
        nearest_samples(private, [2, 2], synthetic, [0, 0, 1])


def test_the_top_counts_of_each_group_survive():
    counts = np.array([3.0, 1.0, 2.0, 5.0, 0.5, 4.0])
    assert top_per_group(counts, [0, 0, 0, 1, 1, 1], 2) == [0, 2, 3, 5]
    assert top_per_group(np.zeros(3), [0, 0, 0], 2) == [0, 1]  # ties: the earlier


def exact_gaussian_composition(noise: float, rounds: int, delta: float) -> float:
    """Epsilon of `rounds` Gaussian mechanisms (sensitivity 1) at `delta`: one of noise / sqrt(T), whose
    exact privacy profile is delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
    mu = sqrt(T) / noise."""
    mu = math.sqrt(rounds) / noise

    def profile(eps: float) -> float:
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta

    return brentq(profile, 0.0, 100.0)


@pytest.mark.parametrize("noise, rounds, delta", [(4.0, 5, 1e-5), (2.0, 3, 1e-3), (10.0, 10, 1e-5)])
def test_the_accountant_composes_the_rounds_as_the_exact_profile(noise, rounds, delta):
    exact = exact_gaussian_composition(noise, rounds, delta)
    assert exact <= composed_epsilon(noise, rounds, delta) <= exact * 1.01


def test_the_noise_multiplier_spends_the_stated_epsilon():
    noise = noise_multiplier(2.0, 1e-3, 3)
    assert 2.0 * 0.99 <= composed_epsilon(noise, 3, 1e-3) <= 2.0
    assert noise == pytest.approx(2.51, abs=0.02)  # exact profile: 2.0 at noise 2.51
    assert noise_multiplier(2.0, 1e-3, 12) == pytest.approx(
        2 * noise, rel=0.02
    )  # 4x the rounds: 2x the noise


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"rounds": 0}, "rounds (T) must be at least 1"),
        ({"samples": 0}, "samples and variations must be at least 1"),
        ({"epsilon": 0.0}, "epsilon must be a positive finite number"),
        ({"delta": 0.0}, "delta must lie strictly between 0 and 1"),
        ({"variation_strength": 1.0}, "variation_strength must lie in"),
        ({"min_words": -1}, "min_words must be at least 0"),
    ],
)
def test_bad_evolution_settings_stop_with_one_line(changes, message):
    settings = {
        "rounds": 3,
        "samples": 4,
        "variations": 1,
        "variation_strength": 0.5,
        "epsilon": 4.0,
        "delta": None,
    }
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        EvolutionSettings(**{**settings, **changes})
    assert "\n" not in str(raised.value)


CENTRES = np.array([[5.0, 5.0], [-5.0, -5.0]])


def toy_run(epsilon: float, seed: int = 0, rounds: int = 8) -> list[Population]:
    """Private points in two tight clusters, 20 units each; 12 texts kept per round, one toy variation
    (a step of N(0, 0.7^2)) per kept text; the embedding is the point itself."""
    rng = np.random.default_rng(seed)
    private = np.concatenate([centre + rng.normal(0, 0.3, (20, 2)) for centre in CENTRES])
    records = PrivateRecords(private, [0] * 40, [f"unit{i}" for i in range(40)])
    start = Population(list(rng.uniform(-10, 10, (24, 2))), [0] * 24)

    def vary(kept: Population, round_index: int) -> Population:
        return Population([item + rng.normal(0, 0.7, 2) for item in kept.items], kept.groups)

    settings = EvolutionSettings(rounds, 12, 1, 0.5, epsilon, 1e-3)
    noise = noise_multiplier(epsilon, 1e-3, rounds)
    return evolve(start, records, np.array, vary, settings, noise, rng)


def distance_to_clusters(population: Population) -> float:
    points = np.array(population.items)
    return float(np.linalg.norm(points[:, None] - CENTRES[None], axis=2).min(axis=1).mean())


def test_a_large_epsilon_moves_the_texts_to_both_private_clusters():
    kept = toy_run(epsilon=50.0)
    distances = [distance_to_clusters(round_kept) for round_kept in kept]
    assert len(kept) == 8 and all(len(k.items) == 12 for k in kept)
    assert distances[-1] < 0.5 * distances[0]
    assert distances[-1] < 1.5
    final = np.array(kept[-1].items)
    near = np.linalg.norm(final[:, None] - CENTRES[None], axis=2).argmin(axis=1)
    assert set(near) == {0, 1}  # both clusters are kept


def test_a_tiny_epsilon_does_not_find_the_clusters():
    assert distance_to_clusters(toy_run(epsilon=0.01)[-1]) > 2 * distance_to_clusters(
        toy_run(epsilon=50.0)[-1]
    )


def test_evolution_is_deterministic():
    first, second = toy_run(epsilon=4.0, seed=3), toy_run(epsilon=4.0, seed=3)
    assert np.array_equal(np.array(first[-1].items), np.array(second[-1].items))


def test_a_text_too_short_takes_no_votes_and_does_not_survive():
    # the private points sit on the empty text's embedding: without the length check it wins every vote
    records = PrivateRecords(np.zeros((6, 2)), [0] * 6, [f"unit{i}" for i in range(6)])
    texts = ["", "one two three", "a longer text of six", "another text of five words"]
    points = {texts[0]: [0.0, 0.0], texts[1]: [1.0, 0.0], texts[2]: [3.0, 0.0], texts[3]: [4.0, 0.0]}
    start = Population(texts, [0] * 4)

    def embed(items: list) -> np.ndarray:
        return np.array([points[item] for item in items])

    def run(min_words: int) -> list[str]:
        settings = EvolutionSettings(1, 2, 1, 0.5, 50.0, 1e-3, min_words)
        noise = noise_multiplier(50.0, 1e-3, 1)
        rng = np.random.default_rng(0)
        return evolve(start, records, embed, None, settings, noise, rng, words=lambda t: len(t.split()))[
            -1
        ].items

    assert "" in run(min_words=0)
    # at 4 words the two longer texts survive, and the six votes go to the nearest of them
    assert run(min_words=4) == ["a longer text of six", "another text of five words"]
    assert nearest_samples(np.zeros((1, 2)), [0], embed(texts), [0] * 4, [False, False, True, True]) == [2]
    # a range with no long enough text still votes among all of its texts
    assert nearest_samples(np.zeros((1, 2)), [0], embed(texts), [0] * 4, [False] * 4) == [0]
