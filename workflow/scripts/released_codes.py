"""Rule `released_codes`: a seed's codes drawn from the released patterns, with values from the fictional
pools as they are."""

import pandas as pd

from plainsight.codes.fictional import FictionalPools
from plainsight.codes.released_codes import PatternDomain, codes_to_draw, released_codes_table
from plainsight.io import read_json, write_parquet
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    record = read_json(job.input.record)
    weights = pd.read_parquet(job.input.weights)["weight"].to_numpy()
    table = released_codes_table(
        weights,
        PatternDomain(record["ranges"], record["max_count"]),
        FictionalPools.from_yaml(job.input.pools),
        codes_to_draw(record, job.params.generations),
        int(job.wildcards.seed),
    )
    write_parquet(table, job.output[0])


run_rule(main)
