# Privacy audit of the synthetic corpora beyond the leak counts, run by run (plainsight.audit:
# released_text_job, nearest, released, evidence, membership, gate): membership scores of the trained
# adapters, and what the released text alone gives away. Their table and plots are in audit_table.smk.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.audit import POSITIVE_CONTROL

# Every (run, method, seed) of config `audit`; AUDIT_SCORE_RUNS (common.smk) are its (run, seed).
AUDIT_RUNS = [
    {"dataset": d, "setting": s, "idset": i, "method": m, "seed": seed}
    for d in AUDIT["datasets"]
    for s in AUDIT["settings"]
    for i in AUDIT["identifier_sets"]
    for m in config["methods"]
    for seed in AUDIT["seeds"]
]
AUDITED_TRAINED = [m for m in config["methods"] if registry.method(m).trained]


def audited_adapters(wildcards):
    """The adapters of the trained methods of one run, in the configured method order."""
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        method=AUDITED_TRAINED,
        **wildcards,
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


# Every corpus of an audited run, and the positive control the audit builds beside them.
AUDITED_CORPORA = [*config["methods"], POSITIVE_CONTROL]
# The audited methods with a formal (epsilon, delta) claim: the audit tests their leaks against it.
AUDITED_GUARANTEED = [
    m for m in config["methods"] if registry.method(m).differentially_private
]


def run_corpora(pattern):
    """An input function: `pattern` (with {method}) for every configured method of one run and seed."""

    def files(wildcards):
        return expand(pattern, method=config["methods"], **wildcards)

    return files


def audited_guarantees(wildcards):
    """The adapters of one run's DP methods: their training.json holds the claim."""
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        method=AUDITED_GUARANTEED,
        **wildcards,
    )


rule released_text_audit:
    """Every corpus of one run and seed, and the run's positive control: the nearest real training segments of each generation, what the released text alone gives away, and each leak measure against its held-out control (one embedder load, the real segments embedded once)."""
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
        delta=config["dpsgd"]["delta"],
        placement=MODEL_PLACEMENT,
        positive_control=True,
    script:
        "../scripts/released_text_audit.py"


def guarantee_record_pattern(method):
    """Where a method's seeds state their formal guarantee: a DP-SGD adapter (its training.json holds
    it) or a private-selection corpus's guarantee record; None for a method without one.
    """
    spec = registry.method(method)
    if spec.differentially_private:
        return "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}"
    if spec.private_selection:
        return "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_privacy.json"
    return None


# The audit records of the private-selection corpora (AUDITED_PRIVATE_SELECTION, common.smk)
SELECTION_AUDIT = (
    "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}"
)


if AUDITED_PRIVATE_SELECTION:

    rule released_text_audit_private_selection:
        """The private-selection corpora of one run and seed, audited as rule released_text_audit audits the configured methods' (no positive control)."""
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
            delta=config["dpsgd"]["delta"],
            placement=MODEL_PLACEMENT,
            positive_control=False,
        script:
            "../scripts/released_text_audit.py"
