# Every method side by side (plainsight.report.methods_table): the configured methods and the
# private-selection ones on the Table 1 run (METHODS_TABLE_RUN, common.smk) at the audit seeds. Built
# by results/tables/all.

from types import SimpleNamespace


include: "functions/methods_table.smk"


# (method, seed) of every corpus in the table
METHODS_TABLE_RUNS = [
    {"method": m, "seed": seed}
    for m in [*config["methods"], *AUDITED_PRIVATE_SELECTION]
    for seed in AUDIT["seeds"]
]


rule methods_table:
    """Every method of the Table 1 run side by side: leak against its control, PIPP, the released-text
    audit, utility, formal and empirical epsilon, verdict and cost."""
    input:
        controls=methods_table_files(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json"
        ),
        released=methods_table_files(
            "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_released.json"
        ),
        summaries=methods_table_files(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet"
        ),
        mauves=methods_table_files(
            "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve.json"
        ),
        corpora=methods_table_files(CORPUS),
        guarantees=[path for _, path in methods_table_guarantees()],
        benchmarks=[path for _, path in methods_table_benchmarks()],
        utility=f"{ALL_METHODS_UTILITY}.csv",
        canaries=methods_table_canaries(),
        audit=run_audit_table(SimpleNamespace(**METHODS_TABLE_RUN)),
        docs=DOCS.format(**METHODS_TABLE_RUN),
        paper=config["tables"]["paper"],
    output:
        csv=report(
            f"{METHODS_TABLE}.csv",
            caption="../report/methods_table.rst",
            category="Tables",
            labels={"table": "methods", "content": "ours"},
        ),
        markdown=f"{METHODS_TABLE}.md",
    log:
        "results/logs/methods_table.log",
    conda:
        "../envs/metrics.yaml"
    params:
        run=METHODS_TABLE_RUN,
        runs=METHODS_TABLE_RUNS,
        guaranteed=[method for method, _ in methods_table_guarantees()],
        benchmarked=[method for method, _ in methods_table_benchmarks()],
        gate=config["release"]["gate"],
    script:
        "../scripts/methods_table.py"
