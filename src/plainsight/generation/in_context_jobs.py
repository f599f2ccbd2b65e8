"""The generate jobs of in-context methods (baseline, icl, icl_pe): real training segments as contexts
(`plainsight.methods.in_context`), the base model, and the method's blocking.

`InContextCorpusJob` is rule `generate_icl`; `InContextWriter` is how rule `mauve_texts` has such a
method write from given real codes (`plainsight.generation.jobs.MauveTextsJob`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from plainsight.code_runs import CodeRuns
from plainsight.codes.fictional import Drawer
from plainsight.codes.surrogates import fictional_drawer
from plainsight.data.segments import SegmentKey, segment_texts
from plainsight.generation.job_common import JobCommon, Plan, Shard
from plainsight.methods import in_context
from plainsight.methods.in_context import Blocking

if TYPE_CHECKING:
    from plainsight.snakemake_job import RuleJob


def context_blocking(common: JobCommon, codes: pd.DataFrame, texts: dict[SegmentKey, str]) -> Blocking:
    """What the method blocks: nothing unless it blocks its context values (then as configured)."""
    if not common.spec.blocks_context_values:
        return Blocking()
    return Blocking.for_corpus(
        common.generation.blocking, codes, texts, CodeRuns.from_config(common.generation.code_runs)
    )


@dataclass(frozen=True)
class FictionalValues:
    """Where an in-context method draws its fictional codes' values from (`codes.surrogates`)."""

    spans: str  # the corpus's spans: the real values no fictional one may look like
    pools: str
    surrogates: str  # paper | format_preserving
    lists: str | None  # format_preserving's word lists; the rule hands none to `paper`

    def drawer(self, codes: pd.DataFrame) -> Drawer:
        return fictional_drawer(codes, pd.read_parquet(self.spans), self.pools, self.surrogates, self.lists)


@dataclass(frozen=True)
class InContextCorpusJob:
    """An in-context method's corpus for one seed (or one shard of it): per paragraph range, prompts
    of real training segments and a fictional code."""

    common: JobCommon
    docs: str
    fictional: FictionalValues
    shard: Shard

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> InContextCorpusJob:
        inputs = job.input
        return cls(
            JobCommon.from_snakemake(job),
            inputs.docs,
            FictionalValues(inputs.spans, inputs.pools, job.params.surrogates, inputs.lists or None),
            Shard.from_params(job.params.shard),
        )

    def plan(self) -> Plan:
        common = self.common
        codes = common.read_codes()
        texts = segment_texts(pd.read_parquet(self.docs))
        blocking = context_blocking(common, codes, texts)
        planned = in_context.plan(
            common.method,
            codes,
            texts,
            self.fictional.drawer(codes),
            common.seed,
            common.generation.generations_per_segment,
            common.generation.context_documents,
            blocking,
        )
        return Plan(planned, blocking.common_words)

    def run(self) -> pd.DataFrame:
        plan = self.plan()
        return self.common.decode(plan, *self.common.load_model(), self.shard)


@dataclass(frozen=True)
class InContextWriter:
    """How an in-context method writes from given real codes: each with real training segments of its
    paragraph range as contexts, drawn per seed and target."""

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> InContextWriter:
        return cls()

    def plan(
        self, common: JobCommon, codes: pd.DataFrame, texts: dict[SegmentKey, str], targets: list[SegmentKey]
    ) -> Plan:
        blocking = context_blocking(common, codes, texts)
        planned = in_context.plan_for_segments(
            common.method,
            codes,
            texts,
            targets,
            common.seed,
            common.generation.context_documents,
            blocking,
        )
        return Plan(planned, blocking.common_words)

    def write(self, common: JobCommon, plan: Plan) -> pd.DataFrame:
        return common.decode(plan, *common.load_model())
