# The utility table of each dataset of the configured runs (config `utility.runs`) and their plots, and
# the utility table of every method on the Table 1 run.

# the utility measures of a run, and of the Table 1 run with every method
UTILITY_MEASURES = "results/{dataset}/{setting}/{idset}/utility/measures.parquet"
ALL_METHODS_MEASURES = (
    "results/{dataset}/{setting}/{idset}/utility/all_methods_measures.parquet".format(
        **METHODS_TABLE_RUN
    )
)


rule utility_table:
    """Utility of every synthetic corpus of the configured runs of one dataset: downstream scores against
    the real ceiling, control-code adherence, diversity and FID."""
    input:
        measures=lambda wildcards: [
            UTILITY_MEASURES.format(**run)
            for run in dataset_runs(UTILITY_RUNS, wildcards)
        ],
        paper=config["tables"]["paper"],
    output:
        csv=report(
            f"{UTILITY_TABLE}.csv",
            caption="../report/utility_table.rst",
            category="Tables",
            labels={"table": "utility", "content": "ours", "dataset": "{dataset}"},
        ),
        markdown=report(
            f"{UTILITY_TABLE}.md",
            caption="../report/utility_table.rst",
            category="Tables",
            labels={
                "table": "utility",
                "content": "Markdown with notes",
                "dataset": "{dataset}",
            },
        ),
    log:
        "results/logs/utility_table/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(UTILITY_DATASETS),
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
        measures=UTILITY_MEASURES,
        corpora=utility_corpora,
        docs=DOCS,
        paper=config["tables"]["paper"],
    output:
        lengths=report(
            utility_plot("utility_lengths"),
            caption="../report/utility_lengths.rst",
            category="Plots",
            labels={"plot": "lengths", "run": "{dataset} {setting} {idset}"},
        ),
        downstream=report(
            utility_plot("downstream_f1"),
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
