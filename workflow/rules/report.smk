# The paper's result tables (results/tables/{table}.csv, .md and _vs_paper.csv), readable samples
# of their corpora, the cost plan of a target, and results/tables/all, which builds every table, plot
# and review page.

import sys

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.report.table_specs import table_settings

# The runs, methods and seeds each table of PAPER_TABLES reads


def table_seeds(table):
    """Seeds of a table: `utility.seeds` for utility tables; `tables.seeds.<table>` where the paper
    reports a single run; else `seeds`."""
    if PAPER_TABLES[table].get("source") == "utility":
        return config["utility"]["seeds"]
    return config["tables"]["seeds"].get(table, SEEDS)


def table_methods(table):
    """The method keys (with the table's model variant, if any) whose runs a table reads."""
    spec = PAPER_TABLES[table]
    listed = [
        m for m in config["methods"] if m in spec.get("methods", config["methods"])
    ]
    return [registry.with_variant(m, spec.get("model")) for m in listed]


def table_runs(table, pattern):
    """`pattern` filled for every run (setting, method, seed) a table reads."""
    spec = PAPER_TABLES[table]
    return expand(
        pattern,
        dataset=spec["dataset"],
        setting=table_settings(spec["setting"]),
        idset=spec["idset"],
        method=table_methods(table),
        seed=table_seeds(table),
    )


def is_privacy_table(table):
    return PAPER_TABLES[table].get("source", "privacy") == "privacy"


def table_inputs(wildcards):
    """The runs' summaries: privacy summaries, or utility records and the base model's reference."""
    if is_privacy_table(wildcards.table):
        return table_runs(
            wildcards.table,
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
        )
    dataset = PAPER_TABLES[wildcards.table]["dataset"]
    return table_runs(
        wildcards.table,
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}.json",
    ) + [f"results/{dataset}/utility/base_model_perplexity.json"]


def table_generations(wildcards):
    """The per-generation metrics of a privacy table's runs, for pooled intervals and paired tests."""
    if not is_privacy_table(wildcards.table):
        return []
    return table_runs(
        wildcards.table,
        "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
    )


def table_controls(wildcards):
    """The held-out control counts of a privacy table's runs, for the phantom shares of its notes."""
    if not is_privacy_table(wildcards.table):
        return []
    return table_runs(
        wildcards.table,
        "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json",
    )


def table_dp_adapters(wildcards):
    """The adapters of a table's differentially private runs: their training.json holds the guarantee."""
    spec = PAPER_TABLES[wildcards.table]
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        dataset=spec["dataset"],
        setting=table_settings(spec["setting"]),
        idset=spec["idset"],
        method=[
            m
            for m in table_methods(wildcards.table)
            if registry.method(m).differentially_private
        ],
        seed=table_seeds(wildcards.table),
    )


def table_review_comments(wildcards):
    """The reviewers' comments of a privacy table's corpora, for its notes."""
    if not is_privacy_table(wildcards.table):
        return []
    spec = PAPER_TABLES[wildcards.table]
    return f"results/review/{spec['dataset']}/{spec['setting']}/{spec['idset']}/comments.parquet"


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
            "results/tables/{table}.csv",
            caption="../report/table.rst",
            category="Tables",
            labels={"table": "{table}", "content": "ours"},
        ),
        markdown="results/tables/{table}.md",
        versus=report(
            "results/tables/{table}_vs_paper.csv",
            caption="../report/table_vs_paper.rst",
            category="Tables",
            labels={"table": "{table}", "content": "beside the paper"},
        ),
    log:
        "results/logs/table/{table}.log",
    wildcard_constraints:
        table="|".join(PAPER_TABLES),
    conda:
        "../envs/metrics.yaml"
    params:
        methods=lambda wildcards: table_methods(wildcards.table),
        documents_warn_below=config["metrics"]["documents_warn_below"],
        presidio_extra_recognizers=config["codes"]["presidio"]["extra_recognizers"],
        max_regenerations=config["generation"]["max_regenerations"],
    script:
        "../scripts/make_table.py"


rule corpus_examples:
    """Three generations of one synthetic corpus with their fictional codes and context documents, as Markdown."""
    input:
        "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet",
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
    """Cost plan of a target before it runs: results/plan/tables/all.md plans results/tables/all,
    results/plan/tables/table1.csv.md plans results/tables/table1.csv (its jobs per rule from a dry
    run, GPU-hours, GPU and host memory); rebuilt when the config changes."""
    output:
        "results/plan/{target}.md",
    log:
        "results/logs/plan/{target}.log",
    conda:
        "../envs/generation.yaml"
    params:
        target="results/{target}",
        config=config,
        snakefile=workflow.main_snakefile,
        # the interpreter of this Snakemake: the dry run needs Snakemake, which no rule environment has
        snakemake_python=sys.executable,
    script:
        "../scripts/plan.py"


# What results/tables/all builds besides the tables: every privacy table's corpus samples and review
# page, and the private-selection corpora on the Table 1 run


def table_examples(_wildcards):
    """A readable sample of every synthetic corpus a privacy table reads."""
    paths = []
    for table, spec in PAPER_TABLES.items():
        if spec.get("source", "privacy") == "privacy":
            paths += expand(
                "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_examples.md",
                dataset=spec["dataset"],
                setting=spec["setting"],
                idset=spec["idset"],
                method=table_methods(table),
                seed=table_seeds(table),
            )
    return sorted(set(paths))


def review_subjects():
    """(dataset, setting, idset) of every privacy table: each gets a review page."""
    subjects = {
        (spec["dataset"], spec["setting"], spec["idset"])
        for table, spec in PAPER_TABLES.items()
        if is_privacy_table(table)
    }
    return sorted(subjects)


def review_pages(_wildcards=None):
    return [
        f"results/review/{dataset}/{setting}/{idset}/index.html"
        for dataset, setting, idset in review_subjects()
    ]


def private_selection_outputs(pattern):
    """`pattern` for every private-selection method and seed on the Table 1 run."""
    return expand(
        pattern,
        **{key: PAPER_TABLES["table1"][key] for key in ("dataset", "setting", "idset")},
        method=PRIVATE_SELECTION["methods"],
        seed=PRIVATE_SELECTION["seeds"],
    )


rule all_tables:
    """Every table of the paper, the utility table, the plots and the review pages; the file lists
    what was built."""
    input:
        tables=expand("results/tables/{table}.csv", table=PAPER_TABLES),
        plots=expand(
            "results/plots/privacy_utility_{dataset}.png",
            dataset=config["plots"]["datasets"],
        ),
        examples=table_examples,
        utility="results/tables/utility.csv",
        utility_plots=UTILITY_PLOTS,
        review=review_pages,
        canaries="results/tables/canaries.csv",
        methods=["results/tables/methods.csv", "results/tables/methods.md"],
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
