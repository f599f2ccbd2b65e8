"""The generate jobs of trained methods (ft, ft_mask, dpsgd): a control code alone as the prompt
(`plainsight.methods.trained`), written by the base model with the method's adapter.

`TrainedCorpusJob` is rules `generate_trained` and `canary_generations`; `TrainedWriter` is how rule
`mauve_texts` has such a method write from given real codes (`plainsight.generation.jobs.MauveTextsJob`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from plainsight.data.segments import SegmentKey
from plainsight.generation.job_common import JobCommon, Plan, Shard
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
