# Paper-style result tables: results/tables/{dataset}/{table}.csv, .md and _vs_paper.csv under the
# dataset each table reads; the privacy-utility plot, readable corpus samples, the cost plan of a
# target, and results/tables/all, which builds every table, plot and review page. The methods table
# is in methods_table.smk.

import sys


include: "functions/report.smk"


PRIVACY_UTILITY_PLOT = f"{PLOTS}/privacy_utility.png"


rule table:
    """One result table of the paper, with the paper's numbers beside ours."""
    input:
        summaries=table_inputs,
        generations=table_generations,
        controls=table_controls,
        dp_adapters=table_dp_adapters,
        comments=table_review_comments,
        paper=config["tables"]["paper"],
    output:
        csv=report(
            f"{TABLES}/{{table}}.csv",
            caption="../report/table.rst",
            category="Tables",
            labels={"table": "{table}", "content": "ours"},
        ),
        markdown=f"{TABLES}/{{table}}.md",
        versus=report(
            f"{TABLES}/{{table}}_vs_paper.csv",
            caption="../report/table_vs_paper.rst",
            category="Tables",
            labels={"table": "{table}", "content": "beside the paper"},
        ),
    log:
        "results/logs/table/{dataset}_{table}.log",
    wildcard_constraints:
        table="|".join(PAPER_TABLES),
        dataset="|".join(
            dict.fromkeys(spec["dataset"] for spec in PAPER_TABLES.values())
        ),
    conda:
        "../envs/metrics.yaml"
    params:
        methods=lambda wildcards: table_methods(wildcards.table),
        documents_warn_below=config["metrics"]["documents_warn_below"],
        presidio_extra_recognizers=config["codes"]["presidio"]["extra_recognizers"],
        max_regenerations=config["generation"]["max_regenerations"],
    script:
        "../scripts/make_table.py"


rule all_tables:
    """Every table of the paper, the utility table, the plots and the review pages; the file lists
    what was built."""
    input:
        tables=[f"{paper_table(table)}.csv" for table in PAPER_TABLES],
        plots=expand(PRIVACY_UTILITY_PLOT, dataset=config["plots"]["datasets"]),
        examples=table_examples,
        utility=UTILITY_TABLES,
        utility_plots=UTILITY_PLOTS,
        review=review_pages,
        canaries=canary_tables(RULE_ALL_AUDIT_DATASETS),
        methods=[f"{METHODS_TABLE}.csv", f"{METHODS_TABLE}.md"],
        all_methods=[
            f"{ALL_METHODS_UTILITY}.csv",
            "results/review/{dataset}/{setting}/{idset}/{page}/index.html".format(
                **METHODS_TABLE_RUN, page=ALL_METHODS_PAGE
            ),
        ],
        private_selection=private_selection_outputs(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet"
        ),
        guarantees=private_selection_outputs(
            "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_privacy.json"
        ),
        private_selection_examples=private_selection_outputs(
            "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_examples.md"
        ),
    output:
        "results/tables/all",
    log:
        "results/logs/all_tables.log",
    conda:
        "../envs/metrics.yaml"
    script:
        "../scripts/list_outputs.py"


rule privacy_utility_plot:
    """PIPP against MAUVE and ROUGE-L against perplexity, per method, beside the paper's points."""
    input:
        summaries=expand(
            "results/{{dataset}}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
            setting=config["plots"]["setting"],
            idset=config["plots"]["idset"],
            method=config["methods"],
            seed=SEEDS,
        ),
        generations=expand(
            "results/{{dataset}}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
            setting=config["plots"]["setting"],
            idset=config["plots"]["idset"],
            method=config["methods"],
            seed=SEEDS,
        ),
        utility=expand(
            "results/{{dataset}}/{setting}/{idset}/utility/{method}/seed{seed}.json",
            setting=config["plots"]["setting"],
            idset=config["plots"]["idset"],
            method=config["methods"],
            seed=config["utility"]["seeds"],
        ),
        paper=config["tables"]["paper"],
        measures=privacy_utility_measures,
    output:
        report(
            PRIVACY_UTILITY_PLOT,
            caption="../report/privacy_utility.rst",
            category="Plots",
            labels={"dataset": "{dataset}"},
        ),
    log:
        "results/logs/privacy_utility_plot/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        setting=config["plots"]["setting"],
        idset=config["plots"]["idset"],
        utility_axis=config["plots"]["utility_axis"],
    script:
        "../scripts/plot_privacy_utility.py"


rule corpus_examples:
    """Three generations of one synthetic corpus with their fictional codes and context documents, as Markdown."""
    input:
        CORPUS,
    output:
        "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_examples.md",
    log:
        "results/logs/corpus_examples/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        shown=3,
    script:
        "../scripts/corpus_examples.py"


rule plan:
    """Cost plan of a target before it runs: results/plan/all.md plans rule all,
    results/plan/tables/all.md plans results/tables/all, results/plan/tables/tab/table1.csv.md plans
    results/tables/tab/table1.csv (its jobs per rule from a dry run, GPU-hours, GPU and host memory),
    with its table as TSV beside it; rebuilt when the config changes."""
    output:
        markdown="results/plan/{target}.md",
        table="results/plan/{target}.tsv",
    log:
        "results/logs/plan/{target}.log",
    conda:
        "../envs/generation.yaml"
    params:
        config=config,
        snakefile=workflow.main_snakefile,
        # the interpreter of this Snakemake: the dry run needs Snakemake, which no rule environment has
        snakemake_python=sys.executable,
    script:
        "../scripts/plan.py"
