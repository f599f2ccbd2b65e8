"""Batched generation with optional per-row value blocking and regeneration.

Prompts are sorted by length and cut into batches (left padding, KV cache), so
little compute goes to padding. Sampling is seeded per batch from the run seed,
the attempt and the batch position, so the same config gives the same texts.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import torch
from tqdm import tqdm

from plainsight.blocking import BlockValuesProcessor, Vocabulary
from plainsight.fictional import stable_rng
from plainsight.metrics import leaked_values
from plainsight.prompts import BOUNDARY, cut_at_boundary

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingSettings:
    max_new_tokens: int
    temperature: float
    top_p: float
    batch_size: int
    max_regenerations: int = 0


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

    def run(self, requests: list[Request], seed: int, desc: str = "generate") -> list[Result]:
        """Generate one document per request; regenerate those that still leak a blocked value."""
        results: list[Result | None] = [None] * len(requests)
        pending = list(range(len(requests)))
        for attempt in range(self.settings.max_regenerations + 1):
            fresh = self._generate([requests[i] for i in pending], seed, attempt, desc)
            still_leaking = []
            for index, result in zip(pending, fresh):
                result.regenerations = attempt
                result.leaked_blocked = leaked_values(result.text, requests[index].blocked_values)
                results[index] = result
                if result.leaked_blocked:
                    still_leaking.append(index)
            if not still_leaking:
                break
            log.info("attempt %d: %d generation(s) contain a blocked value", attempt, len(still_leaking))
            pending = still_leaking
        for index in pending:
            if results[index].leaked_blocked:
                log.warning("generation %d still contains %s after %d regenerations",
                            index, results[index].leaked_blocked, self.settings.max_regenerations)
        return results

    def _generate(self, requests: list[Request], seed: int, attempt: int, desc: str) -> list[Result]:
        lengths = [len(self.tokenizer(r.prompt, add_special_tokens=False).input_ids) for r in requests]
        order = sorted(range(len(requests)), key=lambda i: (lengths[i], i))
        size = self.settings.batch_size
        batches = [order[start:start + size] for start in range(0, len(order), size)]
        results: list[Result | None] = [None] * len(requests)
        new_tokens, started = 0, time.perf_counter()
        progress = tqdm(batches, desc=f"{desc} (attempt {attempt})" if attempt else desc, unit="batch")
        for number, batch in enumerate(progress):
            torch.manual_seed(stable_rng(seed, attempt, number).getrandbits(63))
            texts, counts = self._generate_batch([requests[i] for i in batch])
            for index, text, count in zip(batch, texts, counts):
                results[index] = Result(text, lengths[index], count)
                new_tokens += count
            elapsed = time.perf_counter() - started
            progress.set_postfix(tokens_per_s=f"{new_tokens / elapsed:.1f}")
        elapsed = time.perf_counter() - started
        log.info("%s: %d documents, %d new tokens in %.1f s (%.1f tokens/s)",
                 desc, len(requests), new_tokens, elapsed, new_tokens / max(elapsed, 1e-9))
        return results

    @torch.inference_mode()
    def _generate_batch(self, requests: list[Request]) -> tuple[list[str], list[int]]:
        encoded = self.tokenizer([r.prompt for r in requests], return_tensors="pt", padding=True,
                                 add_special_tokens=False)
        prompt_length = encoded.input_ids.shape[1]
        processors = []
        if any(r.blocked_values for r in requests):
            processors.append(BlockValuesProcessor(self.vocabulary, [r.blocked_values for r in requests],
                                                   prompt_length))
        output = self.model.generate(
            **encoded,
            do_sample=True,
            temperature=self.settings.temperature,
            top_p=self.settings.top_p,
            top_k=0,
            max_new_tokens=self.settings.max_new_tokens,
            stop_strings=[BOUNDARY],
            tokenizer=self.tokenizer,
            pad_token_id=self.tokenizer.pad_token_id,
            logits_processor=processors or None,
        )
        generated = output[:, prompt_length:]
        texts, counts = [], []
        for row in generated:
            tokens = [t for t in row.tolist() if t != self.tokenizer.pad_token_id]
            texts.append(cut_at_boundary(self.tokenizer.decode(tokens, skip_special_tokens=True)))
            counts.append(len(tokens))
        return texts, counts
