"""Rules `released_text_audit` (every corpus of one run and seed, and its positive control) and
`released_text_audit_private_selection` (the private-selection corpora, no positive control): audited from
the released text alone."""

import pandas as pd
import torch

from plainsight.audit.corpora import RunInputs, Thresholds, write_run_audit
from plainsight.audit.released import ReleaseSettings
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
    write_run_audit(
        job.input.corpora,
        job.input.metrics,
        job.input.controls,
        job.params.methods,
        inputs,
        ReleaseSettings(job.params.verbatim_ngram, job.params.bootstrap, job.seed, features),
        Thresholds.from_gate(job.params.gate),
        job.params.delta or 1e-5,
        {"nearest": job.output.nearest, "records": job.output.records, "distances": job.output.distances},
        dict(zip(job.params.guaranteed, job.input.guarantees)),
        job.params.positive_control,
    )


run_rule(main)
