"""Rule `release_code_patterns`: the distribution a guaranteed method's code patterns are drawn from, and
the record of the mechanism that released it."""

import pandas as pd

from plainsight.codes.released_codes import ReleasedCodeSettings, release_patterns
from plainsight.io import write_json, write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    settings = ReleasedCodeSettings.from_config(job.params.released)
    private = settings.source == "histogram"
    w = job.wildcards
    weights, record = release_patterns(
        pd.read_parquet(job.input.codes) if private else None,
        pd.read_parquet(job.input.docs) if private else None,
        settings,
        job.params.dpsgd,
        int(job.params.ranges),
        (w.dataset, w.setting, w.idset, w.method),
    )
    write_parquet(weights, job.output.weights)
    write_json(record, job.output.record)


run_rule(main)
