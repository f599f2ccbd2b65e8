"""Rule `methods_table`: every method of the Table 1 run side by side -> methods.{csv,md} in
results/tables/{dataset} of that run."""

from plainsight.audit.criteria import Gate
from plainsight.report.methods_table import MethodsTableFiles, write_methods_table
from plainsight.report.table_specs import load_table_specs
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    inputs, params = job.input, job.params
    files = MethodsTableFiles(
        params.runs,
        inputs.controls,
        inputs.released,
        inputs.summaries,
        inputs.mauves,
        inputs.corpora,
        list(zip(params.guaranteed, inputs.guarantees)),
        list(zip(params.benchmarked, inputs.benchmarks)),
        inputs.utility,
        inputs.canaries,
        inputs.audit,
        inputs.docs,
    )
    write_methods_table(
        files,
        params.run,
        Gate.from_config(params.gate),
        load_table_specs(inputs.paper)["methods"],
        {"csv": job.output.csv, "markdown": job.output.markdown},
    )


run_rule(main)
