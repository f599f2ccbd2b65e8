"""The DP topic histogram of the CTCL-style generator (method `dp_topics`; Tan et al., ICML 2025,
"Synthesizing Privacy-Preserving Text Data via Finetuning without Finetuning Billion-Scale LLMs"). No
model here: the generation stage writes and embeds the texts (`plainsight.generation.topic_generation`).

The topic model is built from public text alone: the texts the model writes from a prompt that holds no
private data, clustered per paragraph range in the sentence embedder's space (k-means), each topic named
by the words that set its texts apart from the other topics of its range (class-based TF-IDF: the texts
of a topic joined into one document). CTCL builds its topic model the same way (BERTopic) from Wikipedia.

The private data enters once. Every training segment falls in the topic of the nearest centre of its own
range; each privacy unit's counts over all (range, topic) bins are scaled to L2 norm 1 (as Aug-PE's
votes, `plainsight.methods.private_selection.unit_votes`), so adding or removing a unit moves the
histogram by at most 1 in L2; Gaussian noise of `noise` per bin; a range's texts are shared out over its
topics by their noisy counts, negative ones read as none. One Gaussian mechanism over every unit (sample
rate 1): Opacus's PRV accountant solves its noise multiplier for the stated (epsilon, delta)
(`plainsight.methods.private_selection.noise_multiplier` with one round, as Aug-PE's T). Drawing the
topics and writing the texts are post-processing, so a corpus may have as many texts as wanted at no
further privacy cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from plainsight import accounting
from plainsight.methods.private_selection import paper_delta, unit_votes

# words of at least three letters: numbers, dates and codes never name a topic
KEYWORD_PATTERN = r"(?u)\b[^\W\d_]{3,}\b"


@dataclass(frozen=True)
class TopicSettings:
    """The topic model's size, the corpus's and the histogram's budget."""

    topics: int  # k-means topics per paragraph range
    public_texts: int  # texts per paragraph range, written without private data: the topic model's
    keywords: int  # words naming each topic in its prompt
    samples: int  # texts of the corpus per paragraph range
    epsilon: float
    delta: float | None  # None: 1 / (N ln N) for the N privacy units
    # public texts with fewer words are left out of the topic model (an empty text has no topic)
    min_words: int = 0

    def __post_init__(self):
        for name in ("topics", "keywords", "samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.public_texts < self.topics:
            raise ValueError(
                f"public_texts ({self.public_texts}) must be at least topics ({self.topics}): "
                "every topic needs a text"
            )
        if self.min_words < 0:
            raise ValueError(f"min_words must be at least 0, not {self.min_words}")
        accounting.check_budget(self.epsilon, self.delta)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TopicSettings:
        """The settings of the config's `dp_topics` block."""
        return cls(
            params["topics"],
            params["public_texts"],
            params["keywords"],
            params["samples"],
            params["epsilon"],
            params["delta"],
            params["min_words"],
        )

    def delta_for(self, units: int) -> float:
        return self.delta if self.delta is not None else paper_delta(units)


@dataclass(frozen=True)
class TopicModel:
    """Per paragraph range, the topics' centres [k, D] and keywords; `bin` numbers (range, topic) pairs."""

    ranges: tuple[int, ...]
    centres: tuple[np.ndarray, ...]
    keywords: tuple[tuple[tuple[str, ...], ...], ...]

    def offset(self, group: int) -> int:
        position = self.ranges.index(group)
        return sum(len(centres) for centres in self.centres[:position])

    @property
    def bins(self) -> int:
        return sum(len(centres) for centres in self.centres)

    def bins_of(self, group: int) -> range:
        start = self.offset(group)
        return range(start, start + len(self.centres[self.ranges.index(group)]))

    def topics(self) -> list[tuple[int, int, int, tuple[str, ...]]]:
        """(range, topic, bin, keywords) of every topic, in bin order."""
        return [
            (group, topic, bin_index, self.keywords[position][topic])
            for position, group in enumerate(self.ranges)
            for topic, bin_index in enumerate(self.bins_of(group))
        ]

    def nearest(self, embeddings: np.ndarray, groups: Sequence[int]) -> list[int]:
        """The bin of each row's nearest centre (L2) of its own range; a range without topics stops."""
        found = []
        for row, group in zip(embeddings, groups):
            if group not in self.ranges:
                raise ValueError(f"no topic in paragraph range {group}")
            centres = self.centres[self.ranges.index(group)]
            found.append(self.offset(group) + int(np.argmin(np.linalg.norm(centres - row, axis=1))))
        return found


def cluster(embeddings: np.ndarray, topics: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """k-means of `embeddings` [n, D] into `topics` clusters (scikit-learn, 10 starts, seeded): the
    centres [k, D] and each row's cluster."""
    from sklearn.cluster import KMeans

    k_means = KMeans(n_clusters=topics, n_init=10, random_state=seed).fit(embeddings)
    return k_means.cluster_centers_, k_means.labels_


def topic_keywords(
    texts: Sequence[str], labels: Sequence[int], topics: int, count: int
) -> list[tuple[str, ...]]:
    """The `count` words of highest class-based TF-IDF of each topic: a topic's texts joined into one
    document, English stop words and words without three letters left out; ties in word order. A topic
    whose texts hold no such word gets none."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    joined = [" ".join(t for t, label in zip(texts, labels) if label == topic) for topic in range(topics)]
    vectorizer = TfidfVectorizer(stop_words="english", token_pattern=KEYWORD_PATTERN)
    try:
        weights = vectorizer.fit_transform(joined).toarray()
    except ValueError:  # no topic has a word left: the vocabulary is empty
        return [() for _ in range(topics)]
    vocabulary = vectorizer.get_feature_names_out()
    keywords = []
    for row in weights:
        order = sorted(np.flatnonzero(row > 0), key=lambda i: (-row[i], vocabulary[i]))
        keywords.append(tuple(str(vocabulary[i]) for i in order[:count]))
    return keywords


def shares(counts: np.ndarray) -> np.ndarray:
    """A range's noisy counts as shares: negative counts read as none; all none, equal shares."""
    clipped = np.maximum(np.asarray(counts, dtype=float), 0.0)
    total = clipped.sum()
    return clipped / total if total > 0 else np.full(len(clipped), 1.0 / len(clipped))


def allocate(topic_shares: np.ndarray, total: int) -> list[int]:
    """`total` texts shared out by `topic_shares` (largest remainders; ties: the earlier topic)."""
    exact = np.asarray(topic_shares, dtype=float) * total
    counts = np.floor(exact + 1e-9).astype(int)
    remainders = exact - counts
    for topic in sorted(range(len(exact)), key=lambda i: (-remainders[i], i))[: total - int(counts.sum())]:
        counts[topic] += 1
    return [int(c) for c in counts]


def noisy_allocation(
    model: TopicModel,
    nearest: Sequence[int],
    units: Sequence[str],
    samples: int,
    noise: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[int]]:
    """The mechanism and its post-processing: the unit votes of the records' topics (`nearest`, bins),
    `noise` x N(0, 1) on every bin, and each range's `samples` texts shared out by its noisy counts.
    Returns the noisy histogram and the texts per bin."""
    noisy = unit_votes(nearest, units, model.bins) + rng.normal(0.0, noise, model.bins)
    counts = [0] * model.bins
    for group in model.ranges:
        bins = list(model.bins_of(group))
        for bin_index, count in zip(bins, allocate(shares(noisy[bins]), samples)):
            counts[bin_index] = count
    return noisy, counts
