# Privacy audit of the synthetic corpora beyond the leak counts (plainsight.audit: released_text_job,
# nearest, released, evidence, membership, gate, privacy_audit_table): the privacy audit table of each
# audited dataset (PRIVACY_AUDIT_TABLE, common.smk) and its plots. The canaries, which can feed its
# verdict, are in canaries.smk.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.audit import NEGATIVE_CONTROL, POSITIVE_CONTROL


include: "functions/audit.smk"


# The audited runs (config `audit`): every configured method of each run and seed; AUDIT and
# AUDIT_SCORE_RUNS are in common.smk.
AUDIT_RUNS = [
    {"dataset": d, "setting": s, "idset": i, "method": m, "seed": seed}
    for d in AUDIT["datasets"]
    for s in AUDIT["settings"]
    for i in AUDIT["identifier_sets"]
    for m in config["methods"]
    for seed in AUDIT["seeds"]
]
AUDIT_RUN = "results/{dataset}/{setting}/{idset}"
AUDITED_TRAINED = [m for m in config["methods"] if registry.method(m).trained]
# Every corpus of an audited run, the positive control the audit builds beside them, and the negative
# control (rule generate_zero_learning) that their text attacks are judged against.
AUDITED_CORPORA = [*config["methods"], POSITIVE_CONTROL, NEGATIVE_CONTROL]
# The audited methods with a formal (epsilon, delta) claim: the audit tests their leaks against it.
AUDITED_GUARANTEED = [
    m for m in config["methods"] if registry.method(m).differentially_private
]
# The audit records of the private-selection corpora (AUDITED_PRIVATE_SELECTION, common.smk):
# their own job per run and seed, with no positive control.
SELECTION_AUDIT = (
    "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}"
)


rule membership_scores:
    """Token statistics of balanced member (fine-tuning) and held-out segments under the base model and each trained adapter."""
    input:
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        docs="results/{dataset}/docs.parquet",
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


rule released_text_audit:
    """Every corpus of one run and seed, and the run's positive and negative controls: the nearest real training segments of each generation, what the released text alone gives away, and each leak measure against its held-out control (one embedder load, the real segments embedded once)."""
    input:
        corpora=run_corpora(
            "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet"
        ),
        metrics=run_corpora(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        controls=run_corpora(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json"
        ),
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        docs="results/{dataset}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        guarantees=audited_guarantees,
        negative_control=NEGATIVE_CONTROL_CORPUS,
    output:
        nearest=expand(
            "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}_nearest.parquet",
            method=AUDITED_CORPORA,
        ),
        records=expand(
            "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}_released.json",
            method=AUDITED_CORPORA,
        ),
        distances=expand(
            "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}_distances.parquet",
            method=AUDITED_CORPORA,
        ),
    log:
        "results/logs/released_text_audit/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/released_text_audit/{dataset}_{setting}_{idset}_{seed}.tsv"
    conda:
        "../envs/mauve.yaml"
    threads: AUDIT["threads"]
    resources:
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("mauve"),
    params:
        methods=config["methods"],
        guaranteed=AUDITED_GUARANTEED,
        metrics={**config["metrics"], "verbatim_ngram": AUDIT["verbatim_ngram"]},
        verbatim_ngram=AUDIT["verbatim_ngram"],
        bootstrap=AUDIT["bootstrap"],
        gate=config["release"]["gate"],
        delta=CONFIG_SETTINGS.dpsgd.delta,
        privacy_unit=CONFIG_SETTINGS.dpsgd.privacy_unit,
        placement=MODEL_PLACEMENT,
        control_rows=True,
    script:
        "../scripts/released_text_audit.py"


if AUDITED_PRIVATE_SELECTION:

    rule released_text_audit_private_selection:
        """The private-selection corpora of one run and seed, audited as rule released_text_audit audits the configured methods' (against the same negative control, without the controls' rows)."""
        input:
            corpora=expand(CORPUS, method=AUDITED_PRIVATE_SELECTION, allow_missing=True),
            metrics=expand(
                "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
                method=AUDITED_PRIVATE_SELECTION,
                allow_missing=True,
            ),
            controls=expand(
                "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json",
                method=AUDITED_PRIVATE_SELECTION,
                allow_missing=True,
            ),
            codes="results/{dataset}/{setting}/{idset}/codes.parquet",
            docs="results/{dataset}/docs.parquet",
            spans="results/{dataset}/spans.parquet",
            guarantees=[
                expand(guarantee_record_pattern(m), method=m, allow_missing=True)[0]
                for m in AUDITED_PRIVATE_SELECTION
            ],
            negative_control=NEGATIVE_CONTROL_CORPUS,
        output:
            nearest=expand(
                f"{SELECTION_AUDIT}_nearest.parquet", method=AUDITED_PRIVATE_SELECTION
            ),
            records=expand(
                f"{SELECTION_AUDIT}_released.json", method=AUDITED_PRIVATE_SELECTION
            ),
            distances=expand(
                f"{SELECTION_AUDIT}_distances.parquet",
                method=AUDITED_PRIVATE_SELECTION,
            ),
        log:
            "results/logs/released_text_audit_private_selection/{dataset}_{setting}_{idset}_{seed}.log",
        benchmark:
            "results/benchmarks/released_text_audit_private_selection/{dataset}_{setting}_{idset}_{seed}.tsv"
        conda:
            "../envs/mauve.yaml"
        threads: AUDIT["threads"]
        resources:
            gpu=GPUS_PER_JOB,
            gpu_memory_mb=gpu_memory_mb("mauve"),
        params:
            methods=AUDITED_PRIVATE_SELECTION,
            guaranteed=AUDITED_PRIVATE_SELECTION,
            metrics={
                **config["metrics"],
                "verbatim_ngram": AUDIT["verbatim_ngram"],
            },
            verbatim_ngram=AUDIT["verbatim_ngram"],
            bootstrap=AUDIT["bootstrap"],
            gate=config["release"]["gate"],
            delta=CONFIG_SETTINGS.dpsgd.delta,
            privacy_unit=CONFIG_SETTINGS.dpsgd.privacy_unit,
            placement=MODEL_PLACEMENT,
            control_rows=False,
        script:
            "../scripts/released_text_audit.py"


rule privacy_audit_table:
    """The privacy audit of one dataset: one row per audited run and method (and the base model's
    control row)."""
    input:
        released=dataset_audit_files(
            f"{AUDIT_RUN}/audit/{{method}}/seed{{seed}}_released.json", AUDIT_RUNS
        ),
        controls=dataset_audit_files(
            f"{AUDIT_RUN}/audit/{POSITIVE_CONTROL}/seed{{seed}}_released.json",
            AUDIT_SCORE_RUNS,
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
        canaries=[f"{CANARY_TABLE}.csv"] if AUDIT["canaries"]["in_verdict"] else [],
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
        dataset="|".join(AUDIT["datasets"]),
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
