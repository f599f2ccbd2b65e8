# Every method side by side on the Table 1 run (plainsight.report.methods_table): the configured
# methods and the private-selection ones at the audit seeds, in results/tables/methods.

from types import SimpleNamespace

METHODS_TABLE_RUNS = [
    {"method": m, "seed": seed}
    for m in [*config["methods"], *AUDITED_PRIVATE_SELECTION]
    for seed in AUDIT["seeds"]
]
# The jobs that write a method's corpus, by family: (rule, whether it runs per shard).
CORPUS_JOBS = {
    "in_context": [("generate_icl", True)],
    "trained": [("train_adapter", False), ("generate_trained", True)],
    "private_selection": [("generate_private_selection", False)],
}


def methods_table_files(pattern):
    """`pattern` for every (method, seed) of the methods table."""
    return [pattern.format(**METHODS_TABLE_RUN, **run) for run in METHODS_TABLE_RUNS]


def methods_table_guarantees():
    """(method, file) of every formal claim of the methods table's runs."""
    return [
        (run["method"], pattern.format(**METHODS_TABLE_RUN, **run))
        for run in METHODS_TABLE_RUNS
        if (pattern := guarantee_record_pattern(run["method"]))
    ]


def methods_table_benchmarks():
    """(method, benchmark file) of every job that wrote a corpus of the methods table, shard by shard."""
    found = []
    for run in METHODS_TABLE_RUNS:
        for rule_name, sharded in CORPUS_JOBS[registry.method(run["method"]).family]:
            suffix = SHARD_SUFFIX if sharded else ""
            pattern = f"results/benchmarks/{rule_name}/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{suffix}.tsv"
            found += [
                (run["method"], pattern.format(**METHODS_TABLE_RUN, **run, shard=shard))
                for shard in (range(GENERATION_SHARDS) if sharded else [0])
            ]
    return found


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
        canaries="results/tables/canaries.csv",
        audit=run_audit_table(SimpleNamespace(**METHODS_TABLE_RUN)),
        paper=config["tables"]["paper"],
    output:
        csv=report(
            "results/tables/methods.csv",
            caption="../report/methods_table.rst",
            category="Tables",
            labels={"table": "methods", "content": "ours"},
        ),
        markdown="results/tables/methods.md",
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
