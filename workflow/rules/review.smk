# Review pages: every corpus of a run's privacy tables with its flags, nearest real segments and
# reviewers' comments (results/review/{dataset}/{setting}/{idset}), and the comments as one table.


include: "functions/review.smk"


rule review_page:
    """The review page of one dataset, setting and identifier set: every corpus of its tables with its
    flags, highlighted values, nearest real segments, the real units its generations link, an entity
    lookup and comments (static, file://); each method's audit verdict where the run is audited, or
    with review.release_summaries its release bundle's summary, as the bundle's SUMMARY.md says it.
    """
    input:
        corpora=review_files(CORPUS),
        metrics=review_files(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        nearest=review_files(
            "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_nearest.parquet"
        ),
        docs=DOCS,
        spans=SPANS,
        paper=config["tables"]["paper"],
        audit=run_audit_table,
        utility=review_utility,
        comments=review_page_comments,
        # each method's bundle summary (review.release_summaries): what its SUMMARY.md is built from
        release_audits=review_release_files(RELEASE_AUDIT),
        release_kept=review_release_files(RELEASE_KEPT),
        release_metrics=review_release_files(RELEASE_METRICS),
        release_guarantees=lambda wildcards: [
            path for _, path in review_release_guarantees(wildcards)
        ],
        release_utility=review_release_utility,
        frontier=review_frontier,
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
        # the person view links units as rule privacy_metrics does
        metrics=PRIVACY_METRICS,
        release=RELEASE_SETTINGS,
        release_runs=review_release_runs,
        release_guarantees=lambda wildcards: [
            method for method, _ in review_release_guarantees(wildcards)
        ],
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
        docs=DOCS,
        spans=SPANS,
        paper=config["tables"]["paper"],
        # the methods table's verdicts first: the audit table's override them where it has the method
        audit=lambda wildcards: [f"{METHODS_TABLE}.csv", *run_audit_table(wildcards)],
        utility=all_methods_utility,
        comments=all_methods_page_comments,
        release_audits=review_release_files(RELEASE_AUDIT, review_runs_all_methods),
        release_kept=review_release_files(RELEASE_KEPT, review_runs_all_methods),
        release_metrics=review_release_files(RELEASE_METRICS, review_runs_all_methods),
        release_guarantees=lambda wildcards: [
            path
            for _, path in review_release_guarantees(
                wildcards, review_runs_all_methods
            )
        ],
        release_utility=lambda wildcards: review_release_utility(
            wildcards, review_runs_all_methods
        ),
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
        release_runs=lambda wildcards: review_release_runs(
            wildcards, review_runs_all_methods
        ),
        release_guarantees=lambda wildcards: [
            method
            for method, _ in review_release_guarantees(
                wildcards, review_runs_all_methods
            )
        ],


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
