"""Rule `release_bundle`: a method's synthetic texts over its seeds, without those `release.drop` leaves
out, and their dataset card (README.md)."""

from dataclasses import replace

import pandas as pd

from plainsight.audit.guarantee import read_guarantee_record
from plainsight.report.release import (
    BundleSettings,
    ReleaseRun,
    SignOff,
    evidence_tables,
    method_verdict,
    write_release,
)
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w = job.wildcards
    run = ReleaseRun(
        w.dataset,
        w.setting,
        w.idset,
        w.method,
        job.params.model,
        job.params.generation,
        BundleSettings.from_config(job.params.release),
        sign_off=SignOff.from_config(job.params.release["sign_off"]),
        config_fingerprint=job.params.config_fingerprint,
    )
    run = replace(
        run,
        evidence=evidence_tables(run, job.input.audit, job.input.utility, job.input.comments),
        verdict=method_verdict(run, job.input.audit),
    )
    frames = {
        name: pd.concat([pd.read_parquet(p) for p in job.input[name]], ignore_index=True)
        for name in ("corpora", "metrics", "summaries")
    }
    write_release(
        run,
        frames,
        pd.read_parquet(job.input.spans),
        pd.read_parquet(job.input.codes),
        [read_guarantee_record(path) for path in job.input.guarantees],
        job.output,
    )


run_rule(main)
