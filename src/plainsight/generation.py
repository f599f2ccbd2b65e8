"""Batched generation with optional per-row value blocking and regeneration.

Prompts are sorted by length and cut into batches (left padding, KV cache), so
little compute goes to padding. The KV cache is preallocated (`static`): the
default cache grows by concatenation, copying the whole cache of every row at
every step, which with 800-token prompts costs more than the weights at batch 8.
Sampling is `NucleusSampler`, not `generate`'s full-vocabulary sort.

Each batch is sampled, and its leaking rows regenerated, on its own, seeded
from the run seed, the attempt and the ids of the generations it holds: a
batch's texts depend on nothing outside it. So the same config gives the same
texts, and a shard of a corpus (whole batches of the full run, see
`shard_positions`) gives the same texts as the full run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Sequence

import torch
from tqdm import tqdm
from transformers import GenerationConfig, LogitsProcessorList

from plainsight.blocking import BlockValuesProcessor, Vocabulary
from plainsight.fictional import stable_rng
from plainsight.metrics import leaked_values
from plainsight.prompts import BOUNDARY, cut_at_boundary
from plainsight.sampling import NucleusSampler

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingSettings:
    max_new_tokens: int
    temperature: float
    top_p: float
    batch_size: int
    max_regenerations: int = 0

    @classmethod
    def from_config(cls, generation: dict, method: str) -> "SamplingSettings":
        """The `generation` config block; only icl_pe regenerates (the others block nothing)."""
        regenerations = generation["max_regenerations"] if method == "icl_pe" else 0
        return cls(generation["max_new_tokens"], generation["temperature"], generation["top_p"],
                   generation["batch_size"], regenerations)


@dataclass
class Request:
    prompt: str
    blocked_values: list[str] = field(default_factory=list)


@dataclass
class Result:
    text: str
    prompt_tokens: int
    new_tokens: int
    regenerations: int = 0
    leaked_blocked: list[str] = field(default_factory=list)  # blocked values still present at the end


def length_sorted_batches(lengths: Sequence[int], ids: Sequence[int], batch_size: int) -> list[list[int]]:
    """Positions sorted by prompt length (ties by generation id), cut into batches of `batch_size`."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], ids[i]))
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def shard_positions(lengths: Sequence[int], ids: Sequence[int], batch_size: int, shard: int, shards: int
                    ) -> list[int]:
    """The positions shard `shard` (0-based) of `shards` generates, in their original order.

    A shard takes whole batches of the full run, every `shards`-th one, so each shard gets short
    and long prompts alike. Batching the shard's positions again gives exactly those batches: all
    batches but the last one of the full run are full, and the last one is the shard's last.
    """
    batches = length_sorted_batches(lengths, ids, batch_size)
    return sorted(position for batch in batches[shard::shards] for position in batch)


def batch_seed(seed: int, attempt: int, ids: Sequence[int]) -> int:
    """The torch seed of one batch: from the run seed, the attempt and the generations it holds."""
    return stable_rng(seed, attempt, *ids).getrandbits(63)


class Generator:
    """Wraps a causal LM and its tokenizer for batched, seeded sampling."""

    def __init__(self, model, tokenizer, settings: SamplingSettings):
        self.model = model
        self.tokenizer = tokenizer
        self.settings = settings
        self._vocabulary: Vocabulary | None = None

    @property
    def vocabulary(self) -> Vocabulary:
        if self._vocabulary is None:
            self._vocabulary = Vocabulary(self.tokenizer)
        return self._vocabulary

    def prompt_lengths(self, requests: Sequence[Request]) -> list[int]:
        return [len(self.tokenizer(r.prompt, add_special_tokens=False).input_ids) for r in requests]

    def run(self, requests: list[Request], seed: int, desc: str = "generate",
            ids: Sequence[int] | None = None) -> list[Result]:
        """Generate one document per request; regenerate those that still leak a blocked value.

        `ids` (default: the positions) name the generations; batches are seeded from them, so
        the same generation gets the same text whichever other requests are run with it, as long
        as its batch is the same (see `shard_positions`).
        """
        ids = list(range(len(requests))) if ids is None else list(ids)
        lengths = self.prompt_lengths(requests)
        results: list[Result | None] = [None] * len(requests)
        sampled_tokens, started = 0, time.perf_counter()
        progress = tqdm(length_sorted_batches(lengths, ids, self.settings.batch_size), desc=desc, unit="batch")
        for batch in progress:
            batch_results, tokens = self._run_batch([requests[i] for i in batch], [ids[i] for i in batch],
                                                    [lengths[i] for i in batch], seed)
            for index, result in zip(batch, batch_results):
                results[index] = result
            sampled_tokens += tokens
            progress.set_postfix(tokens_per_s=f"{sampled_tokens / (time.perf_counter() - started):.1f}")
        elapsed = time.perf_counter() - started
        log.info("%s: %d documents, %d regenerated, %d new tokens in %.1f s (%.1f tokens/s)",
                 desc, len(requests), sum(1 for r in results if r.regenerations), sampled_tokens, elapsed,
                 sampled_tokens / max(elapsed, 1e-9))
        for generation_id, result in zip(ids, results):
            if result.leaked_blocked:
                log.warning("generation %d still contains %s after %d regenerations",
                            generation_id, result.leaked_blocked, self.settings.max_regenerations)
        return results

    def run_shard(self, requests: list[Request], ids: Sequence[int], seed: int, shard: int, shards: int,
                  desc: str = "generate") -> tuple[list[int], list[Result]]:
        """Shard `shard` of `shards` of the run over `requests` (see `shard_positions`): its positions
        in `requests` and their results, the same as the full run gives them."""
        positions = shard_positions(self.prompt_lengths(requests), ids, self.settings.batch_size, shard, shards)
        return positions, self.run([requests[p] for p in positions], seed, desc, [ids[p] for p in positions])

    def _run_batch(self, requests: list[Request], ids: list[int], lengths: list[int], seed: int
                   ) -> tuple[list[Result], int]:
        """One batch through all its attempts; the rows still leaking a blocked value are sampled again
        as a smaller batch. Returns the results and the number of tokens sampled over all attempts."""
        results: list[Result | None] = [None] * len(requests)
        pending, sampled_tokens = list(range(len(requests))), 0
        for attempt in range(self.settings.max_regenerations + 1):
            torch.manual_seed(batch_seed(seed, attempt, [ids[i] for i in pending]))
            texts, counts = self._generate_batch([requests[i] for i in pending])
            sampled_tokens += sum(counts)
            for index, text, count in zip(pending, texts, counts):
                leaked = leaked_values(text, requests[index].blocked_values)
                results[index] = Result(text, lengths[index], count, attempt, leaked)
            pending = [i for i in pending if results[i].leaked_blocked]
            if not pending:
                break
        return results, sampled_tokens

    @torch.inference_mode()
    def _generate_batch(self, requests: list[Request]) -> tuple[list[str], list[int]]:
        encoded = self.tokenizer([r.prompt for r in requests], return_tensors="pt", padding=True,
                                 add_special_tokens=False)
        prompt_length = encoded.input_ids.shape[1]
        processors = []
        if any(r.blocked_values for r in requests):
            processors.append(BlockValuesProcessor(self.vocabulary, [r.blocked_values for r in requests],
                                                   prompt_length))
        processors.append(NucleusSampler(self.settings.temperature, self.settings.top_p))  # last: it draws
        config = GenerationConfig(
            do_sample=False,  # the sampler has drawn; greedy decoding takes its token
            max_new_tokens=self.settings.max_new_tokens,
            stop_strings=[BOUNDARY],
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.model.generation_config.eos_token_id,
            # a prefix-tuned model brings its prefix as a cache of its own
            cache_implementation=None if hasattr(self.model, "peft_config") else "static",
        )
        output = self.model.generate(**encoded, generation_config=config, tokenizer=self.tokenizer,
                                     logits_processor=LogitsProcessorList(processors))
        generated = output[:, prompt_length:]
        texts, counts = [], []
        for row in generated:
            tokens = [t for t in row.tolist() if t != self.tokenizer.pad_token_id]
            texts.append(cut_at_boundary(self.tokenizer.decode(tokens, skip_special_tokens=True)))
            counts.append(len(tokens))
        return texts, counts
