"""The generate jobs of trained methods (ft, ft_mask, dpsgd): a control code alone as the prompt
(`plainsight.methods.trained`), written by the base model with the method's adapter.

`TrainedCorpusJob` is rules `generate_trained` and `canary_generations`; `TrainedWriter` is how rule
`mauve_texts` has such a method write from given real codes (`plainsight.generation.jobs.MauveTextsJob`);
`ZeroLearningCorpusJob` is rule `generate_zero_learning`: the same prompts without the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from plainsight.data.segments import SegmentKey
from plainsight.generation.job_common import JobCommon, Plan, Shard
from plainsight.generation.params import GenerationSettings
from plainsight.methods import trained

if TYPE_CHECKING:
    from plainsight.snakemake_job import RuleJob


@dataclass(frozen=True)
class TrainedCorpusJob:
    """A trained method's corpus for one seed (or one shard of it): the seed's fictional codes of the
    fine-tuning samples, all of them or `generations` drawn with the seed."""

    common: JobCommon
    adapter: str
    fictional: str  # the seed's fictional codes table
    generations: int | None  # prefix_tuning.generations; None: one per fine-tuning sample
    shard: Shard

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> TrainedCorpusJob:
        return cls(
            JobCommon.from_snakemake(job),
            job.input.adapter,
            job.input.fictional,
            job.params.generations,
            Shard.from_params(job.params.shard),
        )

    def plan(self) -> Plan:
        codes = self.common.read_codes()
        return Plan(trained.plan(pd.read_parquet(self.fictional), codes, self.common.seed, self.generations))

    def run(self) -> pd.DataFrame:
        plan = self.plan()
        return self.common.decode(plan, *self.common.load_model(self.adapter), self.shard)


@dataclass(frozen=True)
class ZeroLearningCorpusJob:
    """A corpus written without private data, the audit's negative control: the base model, with no adapter
    and no real text in its prompts, writing from the fictional codes a trained method's corpus of the
    seed writes from (the same plan, so as many generations), in that method's prompt format. Its
    `method` column is `label`."""

    corpus: TrainedCorpusJob  # the trained corpus job whose plan it writes, never given an adapter
    label: str

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> ZeroLearningCorpusJob:
        params = job.params
        common = JobCommon(
            trained.prompting_method(),
            job.seed,
            job.input.codes,
            params.model,
            params.placement,
            GenerationSettings.from_params(params.generation),
            job.threads,
        )
        return cls(
            TrainedCorpusJob(common, "", job.input.fictional, params.generations, Shard()), params.label
        )

    def run(self) -> pd.DataFrame:
        common = self.corpus.common
        frame = common.decode(self.corpus.plan(), *common.load_model())
        return frame.assign(method=self.label)


@dataclass(frozen=True)
class TrainedWriter:
    """How a trained method writes from given real codes: each code alone, through its adapter."""

    adapter: str

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> TrainedWriter:
        return cls(job.input.adapter)

    def plan(
        self, common: JobCommon, codes: pd.DataFrame, texts: dict[SegmentKey, str], targets: list[SegmentKey]
    ) -> Plan:
        return Plan(trained.plan_for_segments(codes, targets))

    def write(self, common: JobCommon, plan: Plan) -> pd.DataFrame:
        return common.decode(plan, *common.load_model(self.adapter))
