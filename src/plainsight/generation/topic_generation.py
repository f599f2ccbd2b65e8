"""The CTCL-style generator (method `dp_topics`) on the configured model: a topic model from public text,
one DP histogram of the private segments' topics, and texts written from the drawn topics' keywords
(`plainsight.methods.topics` has the mechanism and its accounting).

Per paragraph range the model writes `public_texts` texts from Aug-PE's prompt, which holds no private
data (a description of the corpus's kind of document and a tone drawn per text); they are embedded and
clustered into `topics` topics, each named by its `keywords`. The private training segments then vote
once, through the noisy histogram, and the range's `samples` texts are shared out over its topics by the
noisy counts; each is written from the `topic` prompt with its topic's keywords. CTCL's generator is a
140M model pre-trained on public description-document pairs and then DP fine-tuned on the private data;
here the configured model writes from the keywords as it is, with no fine-tuning, so the topic histogram
is the only way private data reaches the corpus, and the guarantee covers every text of it.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from plainsight.generation.selection import (
    Embedder,
    HistogramAccount,
    PrivateSegments,
    StepWriter,
    Written,
    histogram_guarantee,
    selection_frame,
)
from plainsight.methods.private_selection import composed_epsilon, noise_multiplier
from plainsight.methods.topics import TopicModel, TopicSettings, cluster, noisy_allocation, topic_keywords
from plainsight.rng import numpy_rng, stable_rng

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopicRun:
    method: str
    seed: int
    settings: TopicSettings
    max_new_tokens: int  # of every text the model writes


def public_texts(run: TopicRun, writer: StepWriter, ranges: list[int]) -> tuple[list[Written], list[int]]:
    """`public_texts` texts per paragraph range, written with no private data, and the range of each."""
    groups = [segment for segment in sorted(set(ranges)) for _ in range(run.settings.public_texts)]
    rng = stable_rng(run.seed, "public tones")
    tones = [writer.prompts.tone(rng) for _ in groups]
    texts = writer.write("initial", [""] * len(groups), run.max_new_tokens, "public texts", tones)
    return texts, groups


def fit_topic_model(run: TopicRun, texts: list[str], groups: list[int], embeddings: np.ndarray) -> TopicModel:
    """Per range, the k-means topics of its public texts (those of `min_words` words, or all of them where
    fewer than `topics` have as many) and their keywords."""
    settings = run.settings
    ranges = tuple(sorted(set(groups)))
    all_centres, all_keywords = [], []
    for group in ranges:
        positions = [i for i, g in enumerate(groups) if g == group]
        usable = [i for i in positions if len(texts[i].split()) >= settings.min_words]
        if len(usable) < settings.topics:
            log.warning(
                "range %d: %d public texts of %d words or more, fewer than %d topics: all %d clustered",
                group,
                len(usable),
                settings.min_words,
                settings.topics,
                len(positions),
            )
            usable = positions
        centres, labels = cluster(embeddings[usable], settings.topics, run.seed)
        all_centres.append(centres)
        all_keywords.append(
            tuple(topic_keywords([texts[i] for i in usable], labels, settings.topics, settings.keywords))
        )
    return TopicModel(ranges, tuple(all_centres), tuple(all_keywords))


def topic_prompts(model: TopicModel, counts: list[int]) -> tuple[list[int], list[tuple[str, ...]]]:
    """(range, keywords) of every text to write: each bin's count of texts, in bin order."""
    groups, keywords = [], []
    for group, _, bin_index, words in model.topics():
        groups += [group] * counts[bin_index]
        keywords += [words] * counts[bin_index]
    return groups, keywords


def topic_corpus(
    run: TopicRun, private: PrivateSegments, writer: StepWriter, embedder: Embedder
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The corpus of one seed and its guarantee record; `writer` holds the loaded model. The record lists
    every topic with its keywords, noisy count and texts: all of it the mechanism's output."""
    settings = run.settings
    delta = settings.delta_for(len(set(private.units)))
    noise = noise_multiplier(settings.epsilon, delta, 1)
    spent = composed_epsilon(noise, 1, delta)
    log.info("one histogram, noise multiplier %.3f: epsilon %.3f at delta %.3g", noise, spent, delta)

    written, public_groups = public_texts(run, writer, private.ranges)
    public = [w.text for w in written]
    model = fit_topic_model(run, public, public_groups, embedder(public, desc="public embeddings"))
    nearest = model.nearest(embedder(private.texts, desc="private embeddings"), private.ranges)
    rng = numpy_rng(run.seed, "histogram noise")
    noisy, counts = noisy_allocation(model, nearest, private.units, settings.samples, noise, rng)
    groups, keywords = topic_prompts(model, counts)
    tone_rng = stable_rng(run.seed, "topic tones")
    tones = [writer.prompts.tone(tone_rng) for _ in groups]
    subjects = [", ".join(words) for words in keywords]
    texts = writer.write("topic", subjects, run.max_new_tokens, "topic texts", tones)

    topics = [
        {
            "segment": group,
            "topic": topic,
            "keywords": list(words),
            "noisy_count": round(float(noisy[bin_index]), 3),
            "texts": counts[bin_index],
        }
        for group, topic, bin_index, words in model.topics()
    ]
    frame = selection_frame(run.method, run.seed, texts, groups, [()] * len(texts), writer.placement)
    record = histogram_guarantee(
        run.method,
        run.seed,
        private,
        "Gaussian noise on one histogram of the private segments' topics (a topic model of public text), "
        "each unit's counts scaled to L2 norm 1 (sensitivity 1); Opacus's PRV accountant",
        "the released corpus: private text enters only through the noisy topic histogram; the topic "
        "model, the drawn topics and the texts are post-processing",
        HistogramAccount(settings.epsilon, delta, noise, 1, spent),
        asdict(settings),
    )
    return frame, {**record, "topics": topics}
