"""Rule `release_audit`: the audit of what a release bundle ships, every seed's kept generations against
the run's controls, judged by the release gate."""

import pandas as pd
import torch

from plainsight.audit.criteria import Gate
from plainsight.audit.guarantee import read_guarantee_record
from plainsight.audit.released import TextAuditSettings
from plainsight.audit.released_text_job import Judging, RunInputs, released_delta
from plainsight.evaluation.features import FeatureSettings
from plainsight.models import resolve_placement
from plainsight.report.bundle_audit import Bundle, BundleAuditFiles, CanaryFiles, write_bundle_audit
from plainsight.report.release_run import BundleSettings, bundle_drop
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    torch.set_num_threads(job.threads)
    device, dtype = resolve_placement(job.params.placement)
    files, params, w = job.input, job.params, job.wildcards
    inputs = RunInputs(
        *(pd.read_parquet(files[name]) for name in ("codes", "docs", "spans")),
        w.idset,
        params.metrics,
        files.codes,
    )
    canaries = CanaryFiles(
        files.canary_attacks, files.canary_designs, params.canary_claims, params.canary_guesses
    )
    write_bundle_audit(
        Bundle(w.dataset, w.setting, w.idset, w.method),
        BundleAuditFiles(
            params.seeds,
            files.kept,
            files.negative_controls,
            files.guarantees,
            files.scores,
            [files.utility],
            files.paper,
            canaries,
            bundle_drop(
                BundleSettings.from_config(params.release),
                [read_guarantee_record(path) for path in files.guarantees],
            ),
        ),
        inputs,
        TextAuditSettings(
            params.verbatim_ngram,
            params.bootstrap,
            1,
            FeatureSettings(device=device, dtype=dtype),
            params.split,
        ),
        Judging(Gate.from_config(params.gate), released_delta(inputs, params.delta, params.privacy_unit)),
        job.output[0],
    )


run_rule(main)
