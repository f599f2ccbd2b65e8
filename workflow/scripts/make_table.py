"""Rule `table`: runs over seeds -> the table, its Markdown and the comparison with the paper."""

import pandas as pd

from plainsight.evaluation.utility import summary_rows
from plainsight.methods.registry import base_method
from plainsight.report.tables import build_table, load_table_specs, markdown_table, versus_paper, write_table
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    specs = load_table_specs(job.input.paper)
    spec = specs["tables"][job.wildcards.table]
    paths = list(job.input.summaries)
    settings = spec["setting"] if isinstance(spec["setting"], list) else [spec["setting"]]
    frames = [pd.read_parquet(p) for p in paths if p.endswith(".parquet")]
    records = [p for p in paths if p.endswith(".json")]
    if records:
        frames.append(summary_rows(records, settings))
    summaries = pd.concat(frames, ignore_index=True)
    summaries["method"] = summaries["method"].map(base_method)  # a model variant shows as its method
    listed = {base_method(m) for m in job.params.methods} | set(summaries["method"])
    methods = {key: name for key, name in specs["methods"].items() if key in listed}
    table = build_table(spec, summaries, methods)
    write_table(table, markdown_table(table, spec), versus_paper(table, spec, methods),
                job.output.csv, job.output.markdown, job.output.versus)


run_rule(main)
