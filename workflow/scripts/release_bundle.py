"""Rule `release_bundle`: the custodian's part of a bundle (custodian/): the evidence card (EVIDENCE.md) of
a method's data file (rule `release_data`: the rows `release.drop` kept over its seeds), the verdict of
their own audit (verdict.json), the summary a custodian signs (SUMMARY.md) and their run's utility table
(utility.csv)."""

from dataclasses import replace

import pandas as pd

from plainsight.audit.guarantee import read_bundle_accounting, read_guarantee_record
from plainsight.audit.protection import UNIT_COLUMNS, unit_sizes
from plainsight.io import read_json
from plainsight.methods import registry
from plainsight.report.release import (
    bundle_frames,
    evidence_tables,
    method_verdict,
    shipped_verdict,
    write_release,
)
from plainsight.report.release_run import BundleSettings, ReleaseRun
from plainsight.report.review_comments import read_comments
from plainsight.report.sign_off import read_sign_offs
from plainsight.report.summary import utility_rows
from plainsight.report.table_specs import load_table_specs
from plainsight.report.utility_table import run_utility_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w, files = job.wildcards, job.input
    audit = read_json(files.audit)
    run = ReleaseRun(
        w.dataset,
        w.setting,
        w.idset,
        w.method,
        job.params.model,
        job.params.generation,
        BundleSettings.from_config(job.params.release),
        verdict=shipped_verdict(audit, files.audit),
        sign_offs=read_sign_offs(job.params.release["sign_off"]),
        config_fingerprint=job.params.config_fingerprint,
        audit=audit,
        units=unit_sizes(pd.read_parquet(files.docs, columns=list(UNIT_COLUMNS))),
        privacy_accounting=read_bundle_accounting(files.provenance, job.params.mechanisms, files.mechanisms),
    )
    utility = run_utility_table([files.utility], load_table_specs(files.paper)["methods"])
    run = replace(
        run,
        evidence=evidence_tables(run, files.run_audit, files.comments),
        before_filter=method_verdict(run, files.run_audit),
        utility=utility_rows(utility, run.keys, registry.base_method(w.method)),
    )
    frames = bundle_frames(files, utility, read_comments(files.comments))
    paths = {
        "bundle": files.data,
        **{name: job.output[name] for name in ("card", "verdict", "summary", "utility")},
    }
    write_release(run, frames, [read_guarantee_record(path) for path in files.guarantees], paths)


run_rule(main)
