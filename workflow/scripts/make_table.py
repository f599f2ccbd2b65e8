"""Rule `table`: runs over seeds -> the table, its Markdown with notes, and the comparison with the paper."""

from pathlib import Path

import pandas as pd

from plainsight.evaluation.utility import summary_rows
from plainsight.io import read_json
from plainsight.methods.registry import base_method
from plainsight.report.review_comments import review_notes
from plainsight.report.tables import (
    build_table,
    document_warnings,
    dp_notes,
    leak_definitions_note,
    load_table_specs,
    markdown_table,
    paired_notes,
    presidio_note,
    protocol_notes,
    regeneration_notes,
    versus_paper,
    write_table,
)
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
    generations = None
    if job.input.generations:
        generations = pd.concat([pd.read_parquet(p) for p in job.input.generations], ignore_index=True)
        generations["method"] = generations["method"].map(base_method)
    listed = {base_method(m) for m in job.params.methods} | set(summaries["method"])
    methods = {key: name for key, name in specs["methods"].items() if key in listed}
    table = build_table(spec, summaries, methods, generations)
    notes = [*protocol_notes(set(summaries["method"])),
             *leak_definitions_note(table),
             *(regeneration_notes(generations, methods, job.params.max_regenerations)
               if generations is not None else []),
             *document_warnings(table, job.params.documents_warn_below),
             *(paired_notes(generations, spec.get("paired", []), methods) if generations is not None else []),
             *dp_notes([read_json(Path(adapter) / "training.json") for adapter in job.input.dp_adapters]),
             *presidio_note(spec["setting"], job.params.presidio_extra_recognizers),
             *review_notes(reviewed(job), methods)]
    write_table(table, markdown_table(table, spec, notes), versus_paper(table, spec, methods),
                job.output.csv, job.output.markdown, job.output.versus)


def reviewed(job: RuleJob) -> pd.DataFrame:
    """Reviewers' comments on the table's corpora, a model variant shown as its method."""
    paths = [job.input.comments] if isinstance(job.input.comments, str) else list(job.input.comments)
    if not paths:
        return pd.DataFrame(columns=["method"])
    comments = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    comments = comments[comments["method"].isin(job.params.methods)]
    return comments.assign(method=comments["method"].map(base_method))


run_rule(main)
