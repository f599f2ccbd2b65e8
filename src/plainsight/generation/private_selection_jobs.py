"""The generate jobs of the training-free private generators (rpsg, aug_pe, dp_topics): the base model
writes, and the private training segments only choose among its texts through a DP mechanism
(`plainsight.generation.seed_rewrite`, `plainsight.generation.private_evolution`,
`plainsight.generation.topic_generation`).

`PrivateSelectionCorpusJob` is rule `generate_private_selection`: the corpus and the record of its
guarantee. `CorpusTextsWriter` is how rule `mauve_texts` gives such a method's MAUVE texts: the method
writes from no code, so its texts for the test segments of a paragraph range are its corpus's texts of
that range, in corpus order (as many as both have).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from plainsight.data.segments import SegmentKey
from plainsight.generation.job_common import JobCommon, Plan
from plainsight.generation.private_evolution import EvolutionRun, evolve_corpus
from plainsight.generation.seed_rewrite import RewriteRun, rewrite_corpus
from plainsight.generation.selection import Embedder, PrivateSegments, StepWriter
from plainsight.generation.topic_generation import TopicRun, topic_corpus
from plainsight.methods.pii import PiiPatterns
from plainsight.methods.planned import PlannedGeneration
from plainsight.methods.private_selection import EvolutionSettings, SeedRewriteSettings
from plainsight.methods.selection_prompts import SelectionPrompts
from plainsight.methods.topics import TopicSettings
from plainsight.models import resolve_placement
from plainsight.training.finetune import FinetuneSettings

if TYPE_CHECKING:
    from plainsight.snakemake_job import RuleJob


@dataclass(frozen=True)
class PrivateSelectionCorpusJob:
    """A private generator's corpus for one seed: its config block's settings, the sentence embedder,
    the prompts of the dataset's format, and (RPSG) the PII patterns."""

    common: JobCommon
    docs: str
    settings: Mapping[str, Any]  # the method's config block
    embedder: str
    prompts: str
    dataset_format: str
    pii: str | None = None

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> PrivateSelectionCorpusJob:
        params = job.params
        return cls(
            JobCommon.from_snakemake(job),
            job.input.docs,
            params.settings,
            params.embedder,
            job.input.prompts,
            params.dataset_format,
            job.input.pii or None,
        )

    def rewrite_run(self) -> RewriteRun:
        settings, common = self.settings, self.common
        return RewriteRun(
            common.method,
            common.seed,
            SeedRewriteSettings.from_params(settings),
            FinetuneSettings.from_params(settings["surrogate"]),
            settings["abstract_tokens"],
            common.generation.max_new_tokens,
            PiiPatterns.load(self.pii),
        )

    def evolution_run(self) -> EvolutionRun:
        common = self.common
        return EvolutionRun(
            common.method,
            common.seed,
            EvolutionSettings.from_params(self.settings),
            common.generation.max_new_tokens,
        )

    def topic_run(self) -> TopicRun:
        common = self.common
        return TopicRun(
            common.method,
            common.seed,
            TopicSettings.from_params(self.settings),
            common.generation.max_new_tokens,
        )

    def run_with_guarantee(self) -> tuple[pd.DataFrame, dict[str, Any]]:
        """The corpus table (`plainsight.generation.corpus.CORPUS_COLUMNS`) and its guarantee record."""
        common = self.common
        private = PrivateSegments.of(pd.read_parquet(self.docs), common.read_codes())
        prompts = SelectionPrompts.load(self.prompts, self.dataset_format)
        placement = resolve_placement(common.placement)
        generation = replace(common.generation, temperature=self.settings["temperature"])
        writer = StepWriter(*common.load_model(), prompts, generation, common.seed)
        embedder = Embedder(self.embedder, placement[0])
        if common.spec.rewrites_seeds:
            return rewrite_corpus(self.rewrite_run(), private, writer, embedder, (common.model, placement))
        if common.spec.writes_from_topics:
            return topic_corpus(self.topic_run(), private, writer, embedder)
        return evolve_corpus(self.evolution_run(), private, writer, embedder)

    def run(self) -> pd.DataFrame:
        return self.run_with_guarantee()[0]


@dataclass(frozen=True)
class CorpusTextsWriter:
    """A private-selection method's texts for given real segments: its corpus's texts of each target's
    paragraph range, in corpus order; a target left without one (the range has fewer texts) gets none."""

    corpus: str

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> CorpusTextsWriter:
        return cls(job.input.corpus)

    def plan(
        self, common: JobCommon, codes: pd.DataFrame, texts: dict[SegmentKey, str], targets: list[SegmentKey]
    ) -> Plan:
        return Plan([PlannedGeneration(n, key[1], (), (), (), None, (), ()) for n, key in enumerate(targets)])

    def write(self, common: JobCommon, plan: Plan) -> pd.DataFrame:
        corpus = pd.read_parquet(self.corpus)
        parts = []
        for segment, texts in corpus.groupby("segment", sort=True):
            wanted = [g.generation_id for g in plan.generations if g.segment == segment][: len(texts)]
            parts.append(texts.iloc[: len(wanted)].assign(generation_id=wanted))
        frame = pd.concat(parts, ignore_index=True) if parts else corpus.iloc[:0]
        return frame.sort_values("generation_id", ignore_index=True)
