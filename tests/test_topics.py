"""The CTCL-style generator's mechanism without a model: the topic model of public points, the unit
votes, the noisy shares, the allocation of texts, the accountant's numbers, bad settings."""

from __future__ import annotations

import re

import numpy as np
import pytest

from plainsight.methods.private_selection import composed_epsilon, noise_multiplier, unit_votes
from plainsight.methods.topics import (
    TopicModel,
    TopicSettings,
    allocate,
    cluster,
    noisy_allocation,
    shares,
    topic_keywords,
)


def test_texts_are_shared_out_by_largest_remainders():
    # 7 x (0.5, 0.3, 0.2) = (3.5, 2.1, 1.4): floors (3, 2, 1), the one left to the largest remainder
    assert allocate(np.array([0.5, 0.3, 0.2]), 7) == [4, 2, 1]
    # a tie in remainders goes to the earlier topic; the total is always kept
    assert allocate(np.array([0.5, 0.5]), 5) == [3, 2]
    assert allocate(np.array([0.0, 1.0, 0.0]), 4) == [0, 4, 0]
    assert sum(allocate(np.array([1 / 3] * 3), 100)) == 100


def test_negative_noisy_counts_read_as_none_and_all_none_as_equal_shares():
    assert shares(np.array([3.0, -1.0, 1.0])).tolist() == [0.75, 0.0, 0.25]
    assert shares(np.array([-2.0, -0.5])).tolist() == [0.5, 0.5]


def test_the_one_histogram_spends_the_stated_epsilon():
    noise = noise_multiplier(1.0, 1e-5, 1)
    # the classical Gaussian mechanism needs sqrt(2 ln(1.25 / 1e-5)) = 4.84 for (1, 1e-5); the exact
    # (PRV) accounting of one Gaussian mechanism asks less
    assert 3.5 < noise < 4.0
    assert 0.99 <= composed_epsilon(noise, 1, 1e-5) <= 1.0
    assert composed_epsilon(2 * noise, 1, 1e-5) < 0.6


def two_ranges_model() -> TopicModel:
    centres = (np.array([[0.0, 0.0], [10.0, 0.0]]), np.array([[0.0, 5.0], [0.0, -5.0], [9.0, 9.0]]))
    return TopicModel((0, 1), centres, ((("a",), ("b",)), (("c",), ("d",), ("e",))))


def test_records_fall_in_the_nearest_topic_of_their_own_range():
    model = two_ranges_model()
    assert model.bins == 5 and list(model.bins_of(0)) == [0, 1] and list(model.bins_of(1)) == [2, 3, 4]
    assert model.topics() == [
        (0, 0, 0, ("a",)),
        (0, 1, 1, ("b",)),
        (1, 0, 2, ("c",)),
        (1, 1, 3, ("d",)),
        (1, 2, 4, ("e",)),
    ]
    points = np.array([[9.0, 1.0], [9.0, 1.0], [1.0, -4.0]])
    # the first point is near (10, 0) in range 0 and near (9, 9) in range 1
    assert model.nearest(points, [0, 1, 1]) == [1, 4, 3]
    with pytest.raises(ValueError, match="no topic in paragraph range 2"):
        model.nearest(points[:1], [2])


def test_each_unit_moves_the_topic_histogram_by_at_most_one():
    model = two_ranges_model()
    # unit u0 has three segments (two in bin 1, one in bin 3), u1 one: u0's counts (2, 1) scaled to norm 1
    votes = unit_votes([1, 1, 3, 2], ["u0", "u0", "u0", "u1"], model.bins)
    assert votes == pytest.approx([0, 2 / 5**0.5, 1.0, 1 / 5**0.5, 0])
    without_u0 = unit_votes([2], ["u1"], model.bins)
    assert np.linalg.norm(votes - without_u0) == pytest.approx(1.0)


def test_k_means_finds_the_public_clusters_and_is_seeded():
    rng = np.random.default_rng(0)
    points = np.concatenate([rng.normal(centre, 0.2, (10, 2)) for centre in ([0, 0], [5, 5], [0, 5])])
    centres, labels = cluster(points, 3, seed=1)
    found = sorted(map(tuple, np.round(centres).astype(int).tolist()))
    assert found == [(0, 0), (0, 5), (5, 5)]
    assert len(set(labels[:10])) == len(set(labels[10:20])) == len(set(labels[20:])) == 1
    again, _ = cluster(points, 3, seed=1)
    assert np.array_equal(centres, again)


def test_a_topics_keywords_set_its_texts_apart():
    texts = [
        "The detention of the applicant in prison was unlawful.",
        "Detention in prison lasted two years; the prison was crowded.",
        "The property was expropriated and the compensation for the property was late.",
        "Compensation for land and property, 1999, no. 4711.",
    ]
    keywords = topic_keywords(texts, [0, 0, 1, 1], 2, 2)
    assert keywords == [("prison", "detention"), ("property", "compensation")]
    # stop words and digits never name a topic; a topic of stop words only gets no keyword
    assert topic_keywords(["the of and", "court court judgment"], [0, 1], 2, 3) == [(), ("court", "judgment")]
    assert topic_keywords(["the", "and 1999"], [0, 1], 2, 3) == [(), ()]


SETTINGS = {
    "topics": 4,
    "public_texts": 16,
    "keywords": 8,
    "samples": 12,
    "epsilon": 1.0,
    "delta": 1e-5,
    "min_words": 20,
}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"topics": 0}, "topics must be at least 1, not 0"),
        ({"samples": 0}, "samples must be at least 1, not 0"),
        ({"public_texts": 3}, "public_texts (3) must be at least topics (4)"),
        ({"min_words": -1}, "min_words must be at least 0, not -1"),
        ({"epsilon": 0.0}, "epsilon must be a positive finite number, not 0.0"),
        ({"delta": 1.5}, "delta must lie strictly between 0 and 1, not 1.5"),
    ],
)
def test_bad_topic_settings_stop_with_one_line(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        TopicSettings(**{**SETTINGS, **changes})
    assert "\n" not in str(raised.value)


def test_the_settings_read_the_config_block():
    assert TopicSettings.from_params({**SETTINGS, "temperature": 1.0}) == TopicSettings(**SETTINGS)


def test_a_large_epsilon_writes_on_the_private_topics_and_a_tiny_one_does_not_find_them():
    model = two_ranges_model()
    # 40 units, one segment each in range 0 (all in topic 1) and one in range 1 (all in topic 3)
    units = [f"u{i}" for i in range(40)]
    nearest, all_units = [1] * 40 + [3] * 40, units + units

    def allocation(epsilon: float, seed: int) -> list[int]:
        noise = noise_multiplier(epsilon, 1e-5, 1)
        return noisy_allocation(model, nearest, all_units, 20, noise, np.random.default_rng(seed))[1]

    assert allocation(50.0, 0) == [0, 20, 0, 20, 0]
    # at epsilon 0.01 the noise (about 500) drowns the 40 / sqrt(2) votes of each topic
    spread = [allocation(0.01, seed) for seed in range(20)]
    assert np.mean([counts[1] for counts in spread]) < 16 and np.mean([counts[3] for counts in spread]) < 12
    assert all(sum(counts[:2]) == 20 and sum(counts[2:]) == 20 for counts in spread)
    assert allocation(1.0, 7) == allocation(1.0, 7)
