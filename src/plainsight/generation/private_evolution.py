"""Aug-PE (Xie et al. 2024, "Differentially Private Synthetic Data via Foundation Model APIs 2: Text") on
the configured model.

Per paragraph range, the model writes `samples x (variations + 1)` texts from a prompt that holds no
private data (a description of the corpus's kind of document and a tone). Then, for T rounds: every
training segment votes for the nearest text of its own range in the sentence embedder's space, each
privacy unit's (document's, patient's) votes scaled to L2 norm 1; Gaussian noise is added to the vote
histogram; the `samples` texts of each range with the highest noisy counts survive; and, but after
the last round, the model writes `variations` new texts per survivor from a copy of it with a
`variation_strength` share of its words blanked. The corpus is the last round's survivors.

The noise multiplier is solved for the stated (epsilon, delta) over the T rounds by Opacus's PRV
accountant (sample rate 1: every unit votes in every round), which also reports the epsilon spent
(`plainsight.methods.private_selection`). Private text enters only through the noisy histograms: the
texts, the variations and the survivors are post-processing, so the guarantee covers the released
corpus, per privacy unit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from plainsight.generation.selection import (
    Embedder,
    HistogramAccount,
    PrivateSegments,
    StepWriter,
    histogram_guarantee,
    selection_frame,
)
from plainsight.methods.private_selection import (
    EvolutionSettings,
    Population,
    PrivateRecords,
    composed_epsilon,
    evolve,
    noise_multiplier,
)
from plainsight.rng import numpy_rng, stable_rng

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvolutionRun:
    method: str
    seed: int
    settings: EvolutionSettings
    max_new_tokens: int  # of every text the model writes


def initial_population(run: EvolutionRun, writer: StepWriter, ranges: list[int]) -> Population:
    """`samples x (variations + 1)` texts per paragraph range, written with no private data."""
    per_range = run.settings.samples * (run.settings.variations + 1)
    groups = [segment for segment in sorted(set(ranges)) for _ in range(per_range)]
    rng = stable_rng(run.seed, "initial tones")
    tones = [writer.prompts.tone(rng) for _ in groups]
    texts = writer.write("initial", [""] * len(groups), run.max_new_tokens, "initial texts", tones)
    return Population(texts, groups)


def variation_step(run: EvolutionRun, writer: StepWriter) -> Callable[[Population, int], Population]:
    """The variation of a round: `variations` texts per survivor, each from a copy with a
    `variation_strength` share of its words blanked, in a tone drawn per text."""

    def vary(kept: Population, round_index: int) -> Population:
        rng = stable_rng(run.seed, "variations", round_index)
        copies = run.settings.variations
        parents = [item.text for item in kept.items for _ in range(copies)]
        inputs = [writer.prompts.blanked(text, run.settings.variation_strength, rng) for text in parents]
        tones = [writer.prompts.tone(rng) for _ in parents]
        step = f"variations of round {round_index}"
        texts = writer.write("variation", inputs, run.max_new_tokens, step, tones)
        return Population(texts, [group for group in kept.groups for _ in range(copies)])

    return vary


def evolve_corpus(
    run: EvolutionRun, private: PrivateSegments, writer: StepWriter, embedder: Embedder
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The Aug-PE corpus of one seed and its guarantee record; `writer` holds the loaded model."""
    settings = run.settings
    delta = settings.delta_for(len(set(private.units)))
    noise = noise_multiplier(settings.epsilon, delta, settings.rounds)
    spent = composed_epsilon(noise, settings.rounds, delta)
    log.info(
        "%d rounds, noise multiplier %.3f: epsilon %.3f at delta %.3g", settings.rounds, noise, spent, delta
    )
    records = PrivateRecords(
        embedder(private.texts, desc="private embeddings"), private.ranges, private.units
    )

    def embed(items: list) -> Any:
        return embedder([item.text for item in items], desc="synthetic embeddings")

    rounds = evolve(
        initial_population(run, writer, private.ranges),
        records,
        embed,
        variation_step(run, writer),
        settings,
        noise,
        numpy_rng(run.seed, "histogram noise"),
        words=lambda item: len(item.text.split()),
    )
    final = rounds[-1]
    frame = selection_frame(
        run.method, run.seed, final.items, final.groups, [()] * len(final.items), writer.placement
    )
    account = HistogramAccount(settings.epsilon, delta, noise, settings.rounds, spent)
    record = histogram_guarantee(
        run.method,
        run.seed,
        private,
        "Gaussian noise on a nearest-neighbour vote histogram in each of T rounds, each unit's votes "
        "scaled to L2 norm 1 (sensitivity 1); T rounds composed by Opacus's PRV accountant",
        "the released corpus: private text enters only through the T noisy histograms; the texts, their "
        "variations and the survivors are post-processing",
        account,
        asdict(settings),
    )
    return frame, record
