"""Rule `table`: runs over seeds -> the table, its Markdown and the comparison with the paper."""

import pandas as pd

from plainsight.evaluation.utility import summary_rows
from plainsight.logs import run_step
from plainsight.methods.registry import base_method
from plainsight.report.tables import build_table, load_table_specs, markdown_table, versus_paper, write_table


def main():
    specs = load_table_specs(snakemake.input.paper)  # noqa: F821
    spec = specs["tables"][snakemake.wildcards.table]  # noqa: F821
    paths = list(snakemake.input.summaries)  # noqa: F821
    settings = spec["setting"] if isinstance(spec["setting"], list) else [spec["setting"]]
    frames = [pd.read_parquet(p) for p in paths if p.endswith(".parquet")]
    records = [p for p in paths if p.endswith(".json")]
    if records:
        frames.append(summary_rows(records, settings))
    summaries = pd.concat(frames, ignore_index=True)
    summaries["method"] = summaries["method"].map(base_method)  # a model variant shows as its method
    listed = {base_method(m) for m in snakemake.params.methods} | set(summaries["method"])  # noqa: F821
    methods = {key: name for key, name in specs["methods"].items() if key in listed}
    table = build_table(spec, summaries, methods)
    write_table(table, markdown_table(table, spec), versus_paper(table, spec, methods),
                snakemake.output.csv, snakemake.output.markdown, snakemake.output.versus)  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
