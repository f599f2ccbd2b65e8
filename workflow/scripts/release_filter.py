"""Rule `release_filter`: what one seed of a bundle ships, decided once: its kept rows, and the filter's
record of every generation (its leak flags, the drop rule, whether it is left out)."""

import pandas as pd

from plainsight.audit.guarantee import read_guarantee_record
from plainsight.report.release_filter import write_kept
from plainsight.report.release_run import BundleSettings, bundle_drop
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    frames = [pd.read_parquet(job.input[name]) for name in ("corpus", "metrics", "spans", "codes")]
    records = [read_guarantee_record(path) for path in job.input.guarantees]
    drop = bundle_drop(BundleSettings.from_config(job.params.release), records)
    write_kept(*frames, drop, {"kept": job.output.kept, "filter": job.output.filtered})


run_rule(main)
