# Privacy audit of the synthetic corpora beyond the leak counts (plainsight.audit: membership, evidence,
# gate, privacy_audit_table): the membership scores of the trained adapters, the privacy audit table of
# each audited dataset (PRIVACY_AUDIT_TABLE, common.smk) and its plots. The released-text audit that
# the table reads is in released_text_audit.smk; the canaries, which can feed its verdict, are in
# canaries.smk and canary_attacks.smk.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.audit import NEGATIVE_CONTROL, POSITIVE_CONTROL, control_corpora

# The controls each audited run's audit writes beside its methods' corpora: the positive control only
# where an in-context method gives it a corpus to copy.
AUDIT_CONTROLS = control_corpora(
    any(registry.method(m).in_context for m in config["methods"])
)


include: "functions/audit.smk"


# The audited runs (config `audit`): every configured method of each run and seed. AUDIT is in
# common.smk; AUDIT_SCORE_RUNS, the runs without their methods, is among rule all's targets.
AUDIT_RUNS = [
    {"dataset": d, "setting": s, "idset": i, "method": m, "seed": seed}
    for d in AUDITED_DATASETS
    for s in AUDIT["settings"]
    for i in AUDIT["identifier_sets"]
    for m in config["methods"]
    for seed in AUDIT["seeds"]
]
AUDIT_RUN = "results/{dataset}/{setting}/{idset}"
# the audited runs whose method writes a canary corpus (canaries.smk): the decoded methods; a
# private-selection method's canaries are not built, and a dataset without such a run has no canary table
CANARY_RUNS = [
    run for run in AUDIT_RUNS if not registry.method(run["method"]).private_selection
]
CANARIED_DATASETS = sorted({run["dataset"] for run in CANARY_RUNS})
AUDITED_TRAINED = [m for m in config["methods"] if registry.method(m).trained]


rule membership_scores:
    """Token statistics of balanced member (fine-tuning) and held-out segments under the base model and each trained adapter."""
    input:
        codes=CODES,
        docs=DOCS,
        adapters=audited_adapters,
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/audit/membership/seed{seed}_scores.parquet",
    log:
        "results/logs/membership_scores/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/membership_scores/{dataset}_{setting}_{idset}_{seed}.tsv"
    priority: 1
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        mem_mb=mem_mb("membership_scores"),
        runtime=runtime("membership_scores"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("membership_scores"),
    params:
        methods=AUDITED_TRAINED,
        max_length=config["prefix_tuning"]["max_length"],
        batch_size=AUDIT["batch_size"],
        min_k=AUDIT["min_k"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/membership_scores.py"


rule privacy_audit_table:
    """The privacy audit of one dataset: one row per audited run and method (and the base model's
    control row)."""
    input:
        released=dataset_audit_files(
            f"{AUDIT_RUN}/audit/{{method}}/seed{{seed}}_released.json", AUDIT_RUNS
        ),
        controls=dataset_audit_files(
            f"{AUDIT_RUN}/audit/{POSITIVE_CONTROL}/seed{{seed}}_released.json",
            AUDIT_SCORE_RUNS if POSITIVE_CONTROL in AUDIT_CONTROLS else [],
        ),
        negative_controls=dataset_audit_files(
            f"{AUDIT_RUN}/audit/{NEGATIVE_CONTROL}/seed{{seed}}_released.json",
            AUDIT_SCORE_RUNS,
        ),
        summaries=dataset_audit_files(
            f"{AUDIT_RUN}/metrics/{{method}}/seed{{seed}}_summary.parquet", AUDIT_RUNS
        ),
        scores=dataset_audit_files(
            f"{AUDIT_RUN}/audit/membership/seed{{seed}}_scores.parquet",
            AUDIT_SCORE_RUNS,
        ),
        paper=config["tables"]["paper"],
        canaries=verdict_canary_table,
        utility=audited_utility,
    output:
        csv=report(
            f"{PRIVACY_AUDIT_TABLE}.csv",
            caption="../report/privacy_audit.rst",
            category="Tables",
            labels={
                "table": "privacy_audit",
                "content": "ours",
                "dataset": "{dataset}",
            },
        ),
        markdown=f"{PRIVACY_AUDIT_TABLE}.md",
    log:
        "results/logs/privacy_audit_table/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(AUDITED_DATASETS),
    conda:
        "../envs/metrics.yaml"
    params:
        runs=lambda wildcards: dataset_runs(AUDIT_RUNS, wildcards),
        score_runs=lambda wildcards: dataset_runs(AUDIT_SCORE_RUNS, wildcards),
        bootstrap=AUDIT["bootstrap"],
        verbatim_ngram=AUDIT["verbatim_ngram"],
        gate=config["release"]["gate"],
    script:
        "../scripts/privacy_audit_table.py"


rule privacy_audit_plots:
    """ROC curves of the membership attacks and the closest-record distances of one audited run."""
    input:
        scores=f"{AUDIT_RUN}/audit/membership/seed{{seed}}_scores.parquet",
        distances=audited_distances,
    output:
        roc=report(
            audit_plot("roc"),
            caption="../report/privacy_audit_roc.rst",
            category="Privacy audit",
            labels={
                "plot": "membership ROC",
                "run": "{dataset} {setting} {idset} seed {seed}",
            },
        ),
        distances=report(
            audit_plot("distances"),
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
