"""Rules `released_text_audit` (every corpus of one run and seed, and its positive and negative controls)
and `released_text_audit_private_selection` (the private-selection corpora, without the controls' rows):
audited from the released text alone, the text attacks against the run's negative control."""

import pandas as pd
import torch

from plainsight.audit.criteria import Gate
from plainsight.audit.released import TextAuditSettings
from plainsight.audit.released_text_job import (
    AuditOutputs,
    CorpusFiles,
    Judging,
    RunInputs,
    records_by_method,
    released_delta,
    write_run_audit,
)
from plainsight.evaluation.features import FeatureSettings
from plainsight.models import resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    torch.set_num_threads(job.threads)
    device, dtype = resolve_placement(job.params.placement)
    features = FeatureSettings(device=device, dtype=dtype)
    inputs = RunInputs(
        *(pd.read_parquet(job.input[name]) for name in ("codes", "docs", "spans")),
        job.wildcards.idset,
        job.params.metrics,
        job.input.codes,
    )
    guarantees = records_by_method(job.params.guaranteed, job.input.guarantees)
    corpora = [
        CorpusFiles(method, *files, guarantees.get(method, ()))
        for method, *files in zip(
            job.params.methods, job.input.corpora, job.input.metrics, job.input.controls
        )
    ]
    write_run_audit(
        corpora,
        inputs,
        TextAuditSettings(
            job.params.verbatim_ngram, job.params.bootstrap, job.seed, features, job.params.split
        ),
        Judging(
            Gate.from_config(job.params.gate),
            released_delta(inputs, job.params.delta, job.params.privacy_unit),
        ),
        AuditOutputs(job.output.nearest, job.output.records, job.output.distances),
        job.params.control_rows,
        job.input.negative_control,
    )


run_rule(main)
