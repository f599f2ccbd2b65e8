# The privacy audit table (results/tables/privacy_audit), from the audit records of every audited
# run and the canary table where it feeds the verdict, and the audit's plots of each run.

from plainsight.audit import POSITIVE_CONTROL

AUDIT_RUN = "results/{dataset}/{setting}/{idset}"


# what the methods table, the review pages and the release bundles read their verdicts from
def run_audit_table(wildcards):
    """The privacy audit table, where the run (dataset, setting, identifier set) is audited (`audit`)."""
    audited = (
        wildcards.dataset in config["audit"]["datasets"]
        and wildcards.setting in config["audit"]["settings"]
        and wildcards.idset in config["audit"]["identifier_sets"]
    )
    return ["results/tables/privacy_audit.csv"] if audited else []


rule privacy_audit_table:
    """The privacy audit: one row per run and method (and the base model's control row)."""
    input:
        released=[
            f"{AUDIT_RUN}/audit/{{method}}/seed{{seed}}_released.json".format(**run)
            for run in AUDIT_RUNS
        ],
        controls=[
            f"{AUDIT_RUN}/audit/{POSITIVE_CONTROL}/seed{{seed}}_released.json".format(
                **run
            )
            for run in AUDIT_SCORE_RUNS
        ],
        summaries=[
            f"{AUDIT_RUN}/metrics/{{method}}/seed{{seed}}_summary.parquet".format(
                **run
            )
            for run in AUDIT_RUNS
        ],
        scores=[
            f"{AUDIT_RUN}/audit/membership/seed{{seed}}_scores.parquet".format(**run)
            for run in AUDIT_SCORE_RUNS
        ],
        paper=config["tables"]["paper"],
        canaries=(
            ["results/tables/canaries.csv"] if AUDIT["canaries"]["in_verdict"] else []
        ),
    output:
        csv=report(
            "results/tables/privacy_audit.csv",
            caption="../report/privacy_audit.rst",
            category="Tables",
            labels={"table": "privacy_audit", "content": "ours"},
        ),
        markdown="results/tables/privacy_audit.md",
    log:
        "results/logs/privacy_audit_table.log",
    conda:
        "../envs/metrics.yaml"
    params:
        runs=AUDIT_RUNS,
        score_runs=AUDIT_SCORE_RUNS,
        bootstrap=AUDIT["bootstrap"],
        verbatim_ngram=AUDIT["verbatim_ngram"],
        gate=config["release"]["gate"],
    script:
        "../scripts/privacy_audit_table.py"


def audited_distances(wildcards):
    """The closest-record distances of every method of one audited run."""
    return expand(
        "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_distances.parquet",
        method=config["methods"],
        **wildcards,
    )


rule privacy_audit_plots:
    """ROC curves of the membership attacks and the closest-record distances of one audited run."""
    input:
        scores=f"{AUDIT_RUN}/audit/membership/seed{{seed}}_scores.parquet",
        distances=audited_distances,
    output:
        roc=report(
            "results/plots/privacy_audit_roc_{dataset}_{setting}_{idset}_seed{seed}.png",
            caption="../report/privacy_audit_roc.rst",
            category="Privacy audit",
            labels={
                "plot": "membership ROC",
                "run": "{dataset} {setting} {idset} seed {seed}",
            },
        ),
        distances=report(
            "results/plots/privacy_audit_distances_{dataset}_{setting}_{idset}_seed{seed}.png",
            caption="../report/privacy_audit_distances.rst",
            category="Privacy audit",
            labels={
                "plot": "closest record",
                "run": "{dataset} {setting} {idset} seed {seed}",
            },
        ),
    log:
        "results/logs/privacy_audit_plots/{dataset}_{setting}_{idset}_{seed}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        methods=config["methods"],
    script:
        "../scripts/privacy_audit_plots.py"
