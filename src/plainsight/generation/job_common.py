"""What every generate job shares (`plainsight.generation.jobs`): its method and seed, the codes table,
the model and where it runs, its rule's generation settings; and the one way they decode a plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import torch

from plainsight.generation.corpus import WHOLE_CORPUS, Shard, generate_corpus
from plainsight.generation.params import GenerationSettings
from plainsight.methods import registry
from plainsight.methods.planned import PlannedGeneration
from plainsight.models import load_model, resolve_placement
from plainsight.training.prefix import load_adapter

if TYPE_CHECKING:
    from plainsight.snakemake_job import RuleJob


@dataclass(frozen=True)
class Plan:
    """A job's planned generations, and the corpus's ordinary words that the near-leak check of blocked
    values does not take for variants (none for a method that blocks nothing)."""

    generations: list[PlannedGeneration]
    common_words: frozenset[str] = frozenset()


@dataclass(frozen=True)
class JobCommon:
    method: str
    seed: int
    codes: str
    model: str
    placement: Mapping[str, Any]  # the configured device and dtype, resolved on the job's machine
    generation: GenerationSettings
    threads: int

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> JobCommon:
        params = job.params
        return cls(
            method=job.method,
            seed=job.seed,
            codes=job.input.codes,
            model=params.model,
            placement=params.placement,
            generation=GenerationSettings.from_params(params.generation),
            threads=job.threads,
        )

    @property
    def spec(self) -> registry.Method:
        return registry.method(self.method)

    def read_codes(self) -> pd.DataFrame:
        return pd.read_parquet(self.codes)

    def load_model(self, adapter: str | None = None):
        """(model, tokenizer): the model where the job says, with `adapter` on it if one is given."""
        torch.set_num_threads(self.threads)
        model, tokenizer = load_model(self.model, *resolve_placement(self.placement))
        return (load_adapter(model, adapter) if adapter else model), tokenizer

    def decode(self, plan: Plan, model, tokenizer, shard: Shard = WHOLE_CORPUS) -> pd.DataFrame:
        """Shard `shard` of the texts of `plan`, as the corpus table
        (`plainsight.generation.corpus.generate_corpus`)."""
        return generate_corpus(
            self.method,
            self.seed,
            plan.generations,
            model,
            tokenizer,
            self.generation,
            shard,
            plan.common_words,
        )
