"""Rule `privacy_audit_table`: results/tables/privacy_audit.{csv,md}, one row per run and method."""

from plainsight.audit.gate import Gate
from plainsight.audit.table import build_privacy_audit, write_privacy_audit
from plainsight.report.tables import load_table_specs
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    params = job.params
    table = build_privacy_audit(
        job.input.released,
        params.runs,
        job.input.summaries,
        job.input.scores,
        params.score_runs,
        load_table_specs(job.input.paper)["methods"],
        params.bootstrap,
        job.input.controls,
        Gate.from_config(params.gate),
        job.input.canaries,
    )
    write_privacy_audit(table, params.verbatim_ngram, job.output.csv, job.output.markdown)


run_rule(main)
