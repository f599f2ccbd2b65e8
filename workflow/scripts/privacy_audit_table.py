"""Rule `privacy_audit_table`: results/tables/{dataset}/privacy_audit.{csv,md}, one row per run and method."""

from plainsight.audit.criteria import Gate
from plainsight.audit.privacy_audit_table import AuditTableFiles, build_privacy_audit
from plainsight.report.privacy_audit_markdown import write_privacy_audit
from plainsight.report.table_specs import load_table_specs
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    params, files = job.params, job.input
    table = build_privacy_audit(
        AuditTableFiles(
            files.released,
            params.runs,
            files.summaries,
            files.scores,
            params.score_runs,
            files.controls,
            files.canaries,
            files.utility,
            files.negative_controls,
        ),
        load_table_specs(files.paper)["methods"],
        params.bootstrap,
        Gate.from_config(params.gate),
    )
    write_privacy_audit(table, params.verbatim_ngram, job.output.csv, job.output.markdown)


run_rule(main)
