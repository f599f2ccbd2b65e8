"""The generate jobs, one type per kind, each holding what its rule hands it and nothing else.

- `InContextCorpusJob` (`plainsight.generation.in_context_jobs`), rule `generate_icl`: an in-context
  method's corpus (baseline, icl, icl_pe) from real training segments and fictional codes.
- `TrainedCorpusJob` (`plainsight.generation.trained_jobs`), rules `generate_trained` and
  `canary_generations`: a trained method's corpus from its adapter and the seed's fictional codes;
  `ZeroLearningCorpusJob`, rule `generate_zero_learning`: the same prompts written without the adapter.
- `PrivateSelectionCorpusJob` (`plainsight.generation.private_selection_jobs`), rule
  `generate_private_selection`: a training-free private generator's corpus (rpsg, aug_pe), the model's
  texts chosen by a DP mechanism on the private training segments, and the record of its guarantee.
- `MauveTextsJob`, rule `mauve_texts`: one text per sampled real test segment, written from that
  segment's real code, for MAUVE to compare; its method writes them as its family does (a `Writer`;
  a private-selection method, which writes from no code, gives its corpus's texts).

Each is built from its rule's job by `from_snakemake` and shares `JobCommon` (method, seed, codes,
model, generation settings). The path from rule to decoder runs one way: the job plans with its
family's module (`plainsight.methods.in_context` or `trained`), loads the model (with the adapter of a
trained method), and `JobCommon.decode` hands the plan to `plainsight.generation.corpus.generate_corpus`.
The method's family picks its job types in one place, `KINDS`: a new family adds its own there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from plainsight.data.segments import SegmentKey, mauve_targets, segment_texts
from plainsight.generation.in_context_jobs import InContextCorpusJob, InContextWriter
from plainsight.generation.job_common import JobCommon, Plan
from plainsight.generation.private_selection_jobs import CorpusTextsWriter, PrivateSelectionCorpusJob
from plainsight.generation.trained_jobs import TrainedCorpusJob, TrainedWriter
from plainsight.methods import registry

if TYPE_CHECKING:
    from plainsight.snakemake_job import RuleJob


class CorpusJob(Protocol):
    """A method's corpus for one seed, or one shard of it."""

    def run(self) -> pd.DataFrame: ...


class Writer(Protocol):
    """How a method gives one text per given real segment: written from that segment's real code, or
    (a private-selection method, which writes from no code) taken from its corpus."""

    def plan(
        self, common: JobCommon, codes: pd.DataFrame, texts: dict[SegmentKey, str], targets: list[SegmentKey]
    ) -> Plan: ...

    def write(self, common: JobCommon, plan: Plan) -> pd.DataFrame: ...


@dataclass(frozen=True)
class Kind:
    """The job types of one family of methods, each built from its rule's job."""

    corpus_job: Callable[[RuleJob], CorpusJob]
    writer: Callable[[RuleJob], Writer]


KINDS: dict[registry.Family, Kind] = {
    "in_context": Kind(InContextCorpusJob.from_snakemake, InContextWriter.from_snakemake),
    "trained": Kind(TrainedCorpusJob.from_snakemake, TrainedWriter.from_snakemake),
    "private_selection": Kind(PrivateSelectionCorpusJob.from_snakemake, CorpusTextsWriter.from_snakemake),
}


def kind(method: str) -> Kind:
    return KINDS[registry.method(method).family]


def corpus_job(job: RuleJob) -> CorpusJob:
    """The corpus job of the rule's method, of the type its family writes with."""
    return kind(job.method).corpus_job(job)


@dataclass(frozen=True)
class MauveTextsJob:
    """One text per real test segment MAUVE compares with (`mauve_targets`: all, or `samples` drawn
    once), written by the method from that segment's real code."""

    common: JobCommon
    docs: str
    samples: int | None  # utility.mauve.samples; None: every test segment
    writer: Writer

    @classmethod
    def from_snakemake(cls, job: RuleJob) -> MauveTextsJob:
        return cls(
            JobCommon.from_snakemake(job),
            job.input.docs,
            job.params.mauve_samples,
            kind(job.method).writer(job),
        )

    def plan(self) -> tuple[list[SegmentKey], Plan]:
        """The target segments, and the plan of one generation per target, in their order."""
        codes = self.common.read_codes()
        docs = pd.read_parquet(self.docs)
        targets = mauve_targets(docs, self.samples)
        return targets, self.writer.plan(self.common, codes, segment_texts(docs), targets)

    def run(self) -> pd.DataFrame:
        """The corpus table (`plainsight.generation.corpus.CORPUS_COLUMNS`), each text also naming the
        real test document it was written for (`target_doc_id`, after `segment`)."""
        targets, plan = self.plan()
        frame = self.writer.write(self.common, plan)
        frame.insert(4, "target_doc_id", [targets[g][0] for g in frame["generation_id"]])
        return frame
