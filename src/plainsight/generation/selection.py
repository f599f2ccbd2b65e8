"""What the two training-free private generators share (`seed_rewrite`: RPSG; `private_evolution`:
Aug-PE): the private records (training segments, their paragraph range and privacy unit), the model
writing a list of prompts in one seeded batch, the sentence embedder, and the corpus table every
method writes (`plainsight.generation.corpus.CORPUS_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from plainsight.data.segments import SegmentKey, segment_texts
from plainsight.generation.corpus import corpus_frame
from plainsight.generation.params import GenerationSettings
from plainsight.generation.runner import Generator, Request, Result, SamplingSettings
from plainsight.methods.in_context import prompt_budget
from plainsight.methods.planned import PlannedGeneration
from plainsight.methods.registry import PROTECTED, method
from plainsight.methods.selection_prompts import SelectionPrompts
from plainsight.methods.trained import training_keys
from plainsight.models import model_placement
from plainsight.rng import stable_rng
from plainsight.sentence_embedder import embed


@dataclass(frozen=True)
class PrivateSegments:
    """The private data: every training segment's key, text and privacy unit (docs `unit_id`)."""

    keys: list[SegmentKey]
    texts: list[str]
    units: list[str]

    @classmethod
    def of(cls, docs: pd.DataFrame, codes: pd.DataFrame) -> PrivateSegments:
        texts = segment_texts(docs)
        unit_of = {
            (str(d), int(s)): str(u) for d, s, u in zip(docs["doc_id"], docs["segment"], docs["unit_id"])
        }
        keys = training_keys(codes)
        if not keys:
            raise ValueError("no training segments: a private generator needs private data")
        return cls(keys, [texts[key] for key in keys], [unit_of[key] for key in keys])

    @property
    def ranges(self) -> list[int]:
        """The paragraph range (segment index) of each record."""
        return [segment for _, segment in self.keys]


@dataclass(frozen=True)
class Written:
    """A text the model wrote, with the sizes of the prompt it was written from."""

    text: str
    prompt_tokens: int
    new_tokens: int
    trimmed_tokens: int = 0  # input text cut from the prompt to fit the budget


class StepWriter:
    """The model writing one step's prompts in one seeded batch (`Generator.run`): each step has its
    own seed, derived from the run's, so no two steps draw the same random numbers."""

    def __init__(
        self, model, tokenizer, prompts: SelectionPrompts, generation: GenerationSettings, seed: int
    ):
        self.model, self.tokenizer, self.prompts, self.generation, self.seed = (
            model,
            tokenizer,
            prompts,
            generation,
            seed,
        )

    def budget(self, max_new_tokens: int) -> int:
        context = self.model.config.max_position_embeddings
        return prompt_budget(self.generation.max_prompt_tokens, max_new_tokens, context)

    def write(
        self,
        template: str,
        inputs: Sequence[str],
        max_new_tokens: int,
        step: str,
        tones: Sequence[str] | None = None,
    ) -> list[Written]:
        """One text per input (an empty input for a template without {text}), written from `template`
        (with a tone per input for a template with {tone})."""
        budget = self.budget(max_new_tokens)
        tones = [""] * len(inputs) if tones is None else tones
        fitted = [
            self.prompts.fitted(template, text, self.tokenizer, budget, tone)
            for text, tone in zip(inputs, tones)
        ]
        settings = SamplingSettings(
            max_new_tokens,
            self.generation.temperature,
            self.generation.top_p,
            self.generation.batch_size,
            0,
            self.generation.group_size,
        )
        step_seed = stable_rng(self.seed, step).getrandbits(31)
        results = Generator(self.model, self.tokenizer, settings).run(
            [Request(prompt) for prompt, _ in fitted], step_seed, desc=step
        )
        return [written(result, cut) for result, (_, cut) in zip(results, fitted)]

    @property
    def placement(self) -> dict[str, str]:
        return model_placement(self.model)


def written(result: Result, trimmed: int) -> Written:
    return Written(result.text, result.prompt_tokens, result.new_tokens, trimmed)


@dataclass(frozen=True)
class Embedder:
    """The sentence embedder of the utilities, votes and filters, on the job's device."""

    name: str
    device: torch.device

    def __call__(self, texts: Sequence[str], desc: str = "embeddings") -> np.ndarray:
        # An empty text is still a text of the method; the embedder gets a space, not nothing.
        return embed(
            [text if text.strip() else " " for text in texts], self.name, device=self.device, desc=desc
        )


def cosines(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row [n, D] with every other row [k, D]: [n, k]."""

    def unit(matrix: np.ndarray) -> np.ndarray:
        return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)

    return unit(rows) @ unit(others).T


def selection_frame(
    method: str,
    seed: int,
    texts: Sequence[Written],
    ranges: Sequence[int],
    sources: Sequence[tuple[SegmentKey, ...]],
    placement: Mapping[str, str],
) -> pd.DataFrame:
    """The corpus table of a private generator: one row per text, its paragraph range, and the private
    segment it was rewritten from where it has one (its `context` columns); no code, nothing blocked."""
    planned = [
        PlannedGeneration(number, int(segment), tuple(source), (), (), None, (), ())
        for number, (segment, source) in enumerate(zip(ranges, sources))
    ]
    results = [Result(t.text, t.prompt_tokens, t.new_tokens) for t in texts]
    return corpus_frame(method, seed, planned, results, [t.trimmed_tokens for t in texts], placement)


@dataclass(frozen=True)
class HistogramAccount:
    """What the accountant states of a private generator's Gaussian histograms: the budget asked, the
    noise multiplier solved for it over `rounds` histograms (every unit in each) and the epsilon spent."""

    epsilon: float
    delta: float
    noise_multiplier: float
    rounds: int
    spent: float


def histogram_guarantee(
    method_name: str,
    seed: int,
    private: PrivateSegments,
    mechanism: str,
    covers: str,
    account: HistogramAccount,
    settings: Mapping,
) -> dict:
    """The guarantee record of a generator whose private data enters only through Gaussian histograms
    (Aug-PE's votes, the topic histogram): the spent epsilon bounds the released corpus, per the
    method's protected record."""
    protects = method(method_name).protects
    return {
        "method": method_name,
        "seed": seed,
        "mechanism": mechanism,
        "epsilon": account.epsilon,
        "delta": account.delta,
        "noise_multiplier": account.noise_multiplier,
        "rounds": account.rounds,
        "epsilon_spent": account.spent,
        "accountant": "opacus prv, sample rate 1",
        "privacy_unit": f"one {PROTECTED[protects]}",
        "protects": protects,
        "covers": covers,
        "not_covered": "what the model, the embedder and the prompts hold of their own (public) training "
        "data; the corpus's paragraph ranges and the number of texts per range are public settings",
        "release_epsilon": account.spent,
        "units": len(set(private.units)),
        "private_records": len(private.keys),
        "settings": dict(settings),
    }
