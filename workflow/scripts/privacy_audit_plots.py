"""Rule `privacy_audit_plots`: the ROC curves of the membership attacks and the closest-record
distances of one run."""

import pandas as pd

from plainsight.report.audit_plots import plot_distances, plot_roc
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    w = job.wildcards
    run = f"{w.dataset.upper()} {w.setting} {w.idset}, seed {w.seed}"
    plot_roc(
        pd.read_parquet(job.input.scores),
        f"{run}: membership inference (members vs held-out)",
        job.output.roc,
    )
    distances = {
        method: pd.read_parquet(path) for method, path in zip(job.params.methods, job.input.distances)
    }
    plot_distances(distances, f"{run}: distance to the closest real record", job.output.distances)


run_rule(main)
