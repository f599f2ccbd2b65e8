# The utility table of the configured runs (config `utility.runs`) and its plots, and the utility
# table of every method on the Table 1 run.

# the utility measures of every configured run, and of the Table 1 run with every method
UTILITY_MEASURES = [
    "results/{dataset}/{setting}/{idset}/utility/measures.parquet".format(**run)
    for run in UTILITY_RUNS
]
ALL_METHODS_MEASURES = (
    "results/{dataset}/{setting}/{idset}/utility/all_methods_measures.parquet".format(
        **METHODS_TABLE_RUN
    )
)


rule utility_table:
    """Utility of every synthetic corpus of the configured runs: downstream scores against the real
    ceiling, control-code adherence, diversity and FID."""
    input:
        measures=UTILITY_MEASURES,
        paper=config["tables"]["paper"],
    output:
        csv=report(
            "results/tables/utility.csv",
            caption="../report/utility_table.rst",
            category="Tables",
            labels={"table": "utility", "content": "ours"},
        ),
        markdown=report(
            "results/tables/utility.md",
            caption="../report/utility_table.rst",
            category="Tables",
            labels={"table": "utility", "content": "Markdown with notes"},
        ),
    log:
        "results/logs/utility_table.log",
    conda:
        "../envs/metrics.yaml"
    params:
        methods=config["methods"],
        classifier=config["utility"]["downstream"]["classifier"],
    script:
        "../scripts/make_utility_table.py"


use rule utility_table as utility_table_all_methods with:
    input:
        measures=[ALL_METHODS_MEASURES],
        paper=config["tables"]["paper"],
    output:
        csv=report(
            f"{ALL_METHODS_UTILITY}.csv",
            caption="../report/utility_table.rst",
            category="Tables",
            labels={"table": "utility, every method", "content": "ours"},
        ),
        markdown=f"{ALL_METHODS_UTILITY}.md",
    log:
        "results/logs/utility_table_all_methods.log",
    params:  # merged into the parent rule's params by name
        methods=[*config["methods"], *AUDITED_PRIVATE_SELECTION],


rule utility_plots:
    """Length distributions of one run's corpora and the real text; downstream macro-F1 per method
    against the real ceiling."""
    input:
        measures="results/{dataset}/{setting}/{idset}/utility/measures.parquet",
        corpora=utility_corpora,
        docs="results/{dataset}/docs.parquet",
        paper=config["tables"]["paper"],
    output:
        lengths=report(
            "results/plots/utility_lengths_{dataset}_{setting}_{idset}.png",
            caption="../report/utility_lengths.rst",
            category="Plots",
            labels={"plot": "lengths", "run": "{dataset} {setting} {idset}"},
        ),
        downstream=report(
            "results/plots/downstream_f1_{dataset}_{setting}_{idset}.png",
            caption="../report/downstream_f1.rst",
            category="Plots",
            labels={"plot": "downstream F1", "run": "{dataset} {setting} {idset}"},
        ),
    log:
        "results/logs/utility_plots/{dataset}_{setting}_{idset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        methods=config["methods"],
    script:
        "../scripts/plot_utility.py"
