"""Seeded generation of many documents, with per-document value blocking and regeneration.

Prompts are sorted by length and decoded in that order with continuous batching
(`plainsight.generation.slots.SlotDecoder`, `batch_size` slots, `auto` resolved
once per run by `plainsight.generation.memory`): every prompt is prefilled
alone, the slots decode together, and a finished document's slot goes to the
next prompt at once, so the slots stay full until the last prompts. A document
in which the near-leak detector (`plainsight.matching.NearMatcher`) still finds
one of its blocked values, exactly or as a near variant, or that holds one of its
blocked digit runs (`plainsight.code_runs.held_runs`), is decoded again with
the next attempt's seed in the next free slot (at most `max_regenerations`
times).

Each document draws its random numbers from its own generator, seeded from the
run seed, the attempt and its generation id (`document_seed`): its k-th token
takes the k-th number of that generator whatever slot and step it runs in. So
which documents share its batch, and how many slots there are, change its text
only through rounding; the same config gives the same texts, and a shard of a
corpus (`shard_positions`: whole length-sorted groups of `group_size`) gives the
same texts as the full run.

Progress (documents done, new tokens/s, time left) goes to the job's log every 30 s
(`plainsight.progress.Progress`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from plainsight.code_runs import held_runs
from plainsight.generation.blocking import ValueBlocker, Vocabulary
from plainsight.generation.memory import batch_slots
from plainsight.generation.params import GenerationSettings
from plainsight.generation.sampling import NucleusSampler
from plainsight.generation.slots import Row, SlotDecoder, base_model, prefix_tokens
from plainsight.matching import NearMatcher
from plainsight.methods.prompts import BOUNDARY, cut_at_boundary
from plainsight.methods.registry import Method
from plainsight.progress import Progress
from plainsight.rng import stable_rng
from plainsight.scheduling import slot_cache_positions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingSettings:
    max_new_tokens: int
    temperature: float
    top_p: float
    batch_size: int | str  # slots, or `auto` (plainsight.generation.memory)
    max_regenerations: int = 0
    group_size: int = 32

    @classmethod
    def from_generation(cls, generation: GenerationSettings, method: Method) -> SamplingSettings:
        """A generate job's settings; only a method that blocks values regenerates."""
        return cls(
            generation.max_new_tokens,
            generation.temperature,
            generation.top_p,
            generation.batch_size,
            method.regenerations(generation.max_regenerations),
            generation.group_size,
        )


@dataclass
class Request:
    prompt: str
    blocked_values: list[str] = field(default_factory=list)
    near_words: list[str] = field(default_factory=list)  # blocked with their near variants
    digit_runs: list[str] = field(default_factory=list)  # blocked under any prefix or spacing

    @property
    def blocks(self) -> bool:
        return bool(self.blocked_values or self.near_words or self.digit_runs)


@dataclass
class Result:
    text: str
    prompt_tokens: int
    new_tokens: int  # sampled in the last attempt, the token that ended it included
    regenerations: int = 0
    # blocked values (or near variants) and blocked digit runs still present
    leaked_blocked: list[str] = field(default_factory=list)


def still_leaked(request: Request, detector: NearMatcher | None, text: str) -> list[str]:
    """The blocked values (exactly or as near variants) and the blocked digit runs a finished text holds:
    what makes it decoded again."""
    near = detector.found(text) if detector else []
    return [*near, *held_runs(text, request.digit_runs)]


def length_order(lengths: Sequence[int], ids: Sequence[int]) -> list[int]:
    """Positions sorted by prompt length, ties by generation id: the order in which prompts are decoded."""
    return sorted(range(len(lengths)), key=lambda i: (lengths[i], ids[i]))


def length_sorted_groups(lengths: Sequence[int], ids: Sequence[int], group_size: int) -> list[list[int]]:
    """Positions in `length_order`, cut into groups of `group_size` (the units shards take)."""
    order = length_order(lengths, ids)
    return [order[start : start + group_size] for start in range(0, len(order), group_size)]


def shard_positions(
    lengths: Sequence[int], ids: Sequence[int], group_size: int, shard: int, shards: int
) -> list[int]:
    """The positions shard `shard` (0-based) of `shards` generates, in their original order.

    A shard takes whole groups of the full run, every `shards`-th one, so each shard gets short
    and long prompts alike. Grouping the shard's positions again gives exactly those groups: all
    groups but the last one of the full run are full, and the last one is the shard's last.
    """
    groups = length_sorted_groups(lengths, ids, group_size)
    return sorted(position for group in groups[shard::shards] for position in group)


def document_seed(seed: int, attempt: int, generation_id: int) -> int:
    """The torch seed of one attempt at one document: from the run seed, the attempt and its id."""
    return stable_rng(seed, attempt, generation_id).getrandbits(63)


@dataclass(frozen=True)
class _Attempt:
    position: int  # in the requests of the run
    attempt: int


class Generator:
    """Wraps a causal LM (or a prefix-tuned peft model) and its tokenizer for seeded sampling.

    `common_words` are the corpus's ordinary words, which the near-leak detector does not take for
    variants of a blocked value.
    """

    def __init__(
        self, model, tokenizer, settings: SamplingSettings, common_words: frozenset[str] = frozenset()
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.settings = settings
        self.common_words = common_words
        self._vocabulary: Vocabulary | None = None

    @property
    def vocabulary(self) -> Vocabulary:
        if self._vocabulary is None:
            self._vocabulary = Vocabulary(self.tokenizer)
        return self._vocabulary

    def prompt_ids(self, requests: Sequence[Request]) -> list[list[int]]:
        return [self.tokenizer(r.prompt, add_special_tokens=False).input_ids for r in requests]

    def decoder(self, longest_prompt: int, prompts: int) -> SlotDecoder:
        """The slot decoder of a run of `prompts` prompts of at most `longest_prompt` tokens."""
        settings = self.settings
        sampler = NucleusSampler(settings.temperature, settings.top_p)
        positions = slot_cache_positions(prefix_tokens(self.model) + longest_prompt, settings.max_new_tokens)
        slots = batch_slots(settings.batch_size, base_model(self.model), positions, max(prompts, 1))
        return SlotDecoder(self.model, self.tokenizer, sampler, settings.max_new_tokens, slots, BOUNDARY)

    def run(
        self, requests: list[Request], seed: int, desc: str = "generate", ids: Sequence[int] | None = None
    ) -> list[Result]:
        """Generate one document per request; regenerate those that still leak a blocked value
        (exactly or as a near variant).

        `ids` (default: the positions) name the generations and seed their sampling; a generation
        gets the same text whichever other requests are run with it (up to rounding).
        """
        ids = list(range(len(requests))) if ids is None else list(ids)
        prompt_ids = self.prompt_ids(requests)
        detectors = [
            NearMatcher(r.blocked_values, self.common_words) if r.blocked_values else None for r in requests
        ]

        results: list[Result | None] = [None] * len(requests)
        decoder = self.decoder(max(map(len, prompt_ids), default=0), len(requests))
        sampled_tokens, started = 0, time.perf_counter()  # tokens of every attempt
        progress = Progress(total=len(requests), desc=desc, unit="documents")

        def row(position: int, attempt: int) -> Row:
            request = requests[position]
            return Row(
                _Attempt(position, attempt),
                prompt_ids[position],
                torch.Generator().manual_seed(document_seed(seed, attempt, ids[position])),
                ValueBlocker(
                    self.vocabulary,
                    request.blocked_values,
                    near_words=request.near_words,
                    digit_runs=request.digit_runs,
                )
                if request.blocks
                else None,
            )

        def finished(done: Row) -> Row | None:
            nonlocal sampled_tokens
            sampled_tokens += len(done.generated)
            position, attempt = done.key.position, done.key.attempt
            text = cut_at_boundary(self.tokenizer.decode(done.generated, skip_special_tokens=True))
            leaked = still_leaked(requests[position], detectors[position], text)
            if leaked and attempt < self.settings.max_regenerations:
                progress.update(0, tokens=len(done.generated))
                return row(position, attempt + 1)
            results[position] = Result(text, len(prompt_ids[position]), len(done.generated), attempt, leaked)
            progress.update(1, tokens=len(done.generated))
            return None

        order = length_order([len(p) for p in prompt_ids], ids)
        with progress:
            decoder.run([row(position, 0) for position in order], finished)
        elapsed = time.perf_counter() - started
        steps = len(decoder.occupancy)
        log.info(
            "%s: %d documents, %d regenerated, %d new tokens in %.1f s (%.1f tokens/s, %d slots on %s, "
            "%.1f rows per decoding step)",
            desc,
            len(requests),
            sum(1 for r in results if r.regenerations),
            sampled_tokens,
            elapsed,
            sampled_tokens / max(elapsed, 1e-9),
            decoder.slots,
            decoder.device,
            sum(decoder.occupancy) / max(steps, 1),
        )
        for generation_id, result in zip(ids, results):
            if result.leaked_blocked:
                log.warning(
                    "generation %d still contains %s (or a near variant) after %d regenerations",
                    generation_id,
                    result.leaked_blocked,
                    self.settings.max_regenerations,
                )
        return results

    def run_shard(
        self,
        requests: list[Request],
        ids: Sequence[int],
        seed: int,
        shard: int,
        shards: int,
        desc: str = "generate",
    ) -> tuple[list[int], list[Result]]:
        """Shard `shard` of `shards` of the run over `requests` (see `shard_positions`): its positions
        in `requests` and their results, the same as the full run gives them."""
        lengths = [len(p) for p in self.prompt_ids(requests)]
        positions = shard_positions(lengths, ids, self.settings.group_size, shard, shards)
        return positions, self.run([requests[p] for p in positions], seed, desc, [ids[p] for p in positions])
