# Paper-style result tables: results/tables/{table}.csv, .md and _vs_paper.csv.

from types import SimpleNamespace


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
            "results/plots/privacy_utility_{dataset}.png",
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


rule release_bundle:
    """A method's synthetic texts alone (no real text, no context ids) and its dataset card."""
    input:
        corpora=release_runs(CORPUS),
        metrics=release_runs(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        summaries=release_runs(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet"
        ),
        spans="results/{dataset}/spans.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        guarantees=release_guarantees,
        audit=release_audit_tables,
        utility=release_utility_table,
        comments=release_comments,
    output:
        bundle="results/release/{dataset}/{setting}/{idset}/{method}/synthetic.jsonl",
        card="results/release/{dataset}/{setting}/{idset}/{method}/README.md",
    log:
        "results/logs/release_bundle/{dataset}_{setting}_{idset}_{method}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        release={key: config["release"][key] for key in ("drop", "license", "language")},
        model=variant_model,
        generation=release_generation_settings,
    script:
        "../scripts/release_bundle.py"


rule review_page:
    """The review page of one dataset, setting and identifier set: every corpus of its tables with its
    flags, highlighted values, nearest real segments, an entity lookup and comments (static, file://);
    each method's audit verdict where the run is audited.
    """
    input:
        corpora=review_files(CORPUS),
        metrics=review_files(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        nearest=review_files(
            "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_nearest.parquet"
        ),
        docs="results/{dataset}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        paper=config["tables"]["paper"],
        audit=run_audit_table,
    output:
        index="results/review/{dataset}/{setting}/{idset}/index.html",
        data=directory("results/review/{dataset}/{setting}/{idset}/data"),
    log:
        "results/logs/review_page/{dataset}_{setting}_{idset}.log",
    benchmark:
        "results/benchmarks/review_page/{dataset}_{setting}_{idset}.tsv"
    conda:
        "../envs/metrics.yaml"
    params:
        runs=review_runs,
        partial_leak_min_letters=config["metrics"]["partial_leak_min_letters"],
    script:
        "../scripts/review_page.py"


use rule review_page as review_page_all_methods with:
    input:
        corpora=review_files(CORPUS, review_runs_all_methods),
        metrics=review_files(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
            review_runs_all_methods,
        ),
        nearest=review_files(
            "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_nearest.parquet",
            review_runs_all_methods,
        ),
        docs="results/{dataset}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        paper=config["tables"]["paper"],
        # the methods table's verdicts first: the audit table's override them where it has the method
        audit=lambda wildcards: [
            "results/tables/methods.csv",
            *run_audit_table(wildcards),
        ],
    output:
        index=f"results/review/{{dataset}}/{{setting}}/{{idset}}/{ALL_METHODS_PAGE}/index.html",
        data=directory(
            f"results/review/{{dataset}}/{{setting}}/{{idset}}/{ALL_METHODS_PAGE}/data"
        ),
    log:
        "results/logs/review_page_all_methods/{dataset}_{setting}_{idset}.log",
    benchmark:
        "results/benchmarks/review_page_all_methods/{dataset}_{setting}_{idset}.tsv"
    params:  # merged into the parent rule's params by name
        runs=review_runs_all_methods,


rule review_comments:
    """Comment files exported from a review page ({comments_dir}/{dataset}/{setting}/{idset}/*.json)
    -> one table; a file for other corpora, or a malformed one, stops the job naming it.
    """
    input:
        comments=review_comment_files,
        corpora=review_files(CORPUS),
    output:
        "results/review/{dataset}/{setting}/{idset}/comments.parquet",
    log:
        "results/logs/review_comments/{dataset}_{setting}_{idset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        runs=review_runs,
    script:
        "../scripts/review_comments.py"


use rule review_comments as review_comments_all_methods with:
    input:
        comments=all_methods_comment_files,
        corpora=review_files(CORPUS, review_runs_all_methods),
    output:
        f"results/review/{{dataset}}/{{setting}}/{{idset}}/{ALL_METHODS_PAGE}/comments.parquet",
    log:
        "results/logs/review_comments_all_methods/{dataset}_{setting}_{idset}.log",
    params:
        runs=review_runs_all_methods,
