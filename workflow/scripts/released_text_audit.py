"""Rule `released_text_audit`: what a reader of one synthetic corpus alone learns about the real documents."""

import logging

import pandas as pd
import torch

from plainsight.audit.released import ReleaseSettings, audit_record, released_text_audit
from plainsight.evaluation.features import FeatureSettings
from plainsight.io import write_json, write_parquet
from plainsight.methods.registry import method
from plainsight.models import resolve_placement
from plainsight.snakemake_job import RuleJob, run_rule

log = logging.getLogger("plainsight")


def main(job: RuleJob) -> None:
    torch.set_num_threads(job.threads)
    device, dtype = resolve_placement(job.params.placement)
    settings = ReleaseSettings(
        job.params.verbatim_ngram, job.params.bootstrap, job.seed, FeatureSettings(device=device, dtype=dtype)
    )
    inputs = {
        name: pd.read_parquet(getattr(job.input, name))
        for name in ("corpus", "codes", "docs", "spans", "nearest")
    }
    audit, distances = released_text_audit(
        inputs["corpus"],
        inputs["codes"],
        inputs["docs"],
        inputs["spans"],
        inputs["nearest"],
        method(job.method),
        settings,
        files={"codes": job.input.codes, "corpus": job.input.corpus},
    )
    log.info("released-text audit: %s", audit)
    write_parquet(distances, job.output.distances)
    write_json({"method": job.method, "seed": job.seed, **audit_record(audit)}, job.output.record)


run_rule(main)
