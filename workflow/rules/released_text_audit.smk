# The released-text audit of the synthetic corpora (plainsight.audit: released_text_job, nearest,
# released, evidence): per audited run and seed, the nearest real training segments of each
# generation, what the released text alone gives away and each leak measure against its control,
# which the privacy audit table (audit.smk) reads.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.


include: "functions/released_text_audit.smk"


# Every corpus of an audited run, the positive control the audit builds beside them, and the negative
# control (rule generate_zero_learning) that their text attacks are judged against.
AUDITED_CORPORA = [*config["methods"], *AUDIT_CONTROLS]
# The audited methods with a formal (epsilon, delta) claim over their whole corpus (a release-bounding
# mechanism of resources/privacy_provenance.yaml: DP-SGD's, Aug-PE's): the audit tests their leaks
# against it, and the gate's epsilon criterion reads it.
AUDITED_GUARANTEED = PRIVACY_PROVENANCE.guaranteed_methods(config["methods"])
# The audit records of the private-selection corpora (AUDITED_PRIVATE_SELECTION, common.smk):
# their own job per run and seed, with no positive control.
SELECTION_AUDIT = (
    "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}"
)


rule released_text_audit:
    """Every corpus of one run and seed, and the run's positive and negative controls: the nearest real training segments of each generation, what the released text alone gives away, and each leak measure against its held-out control (one embedder load, the real segments embedded once)."""
    input:
        corpora=run_corpora(CORPUS),
        metrics=run_corpora(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        controls=run_corpora(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json"
        ),
        codes=CODES,
        docs=DOCS,
        spans=SPANS,
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
        guaranteed=audited_guarantee_methods,
        metrics=PRIVACY_METRICS,
        verbatim_ngram=AUDIT["verbatim_ngram"],
        bootstrap=AUDIT["bootstrap"],
        split=dataset_split,
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
            codes=CODES,
            docs=DOCS,
            spans=SPANS,
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
            metrics=PRIVACY_METRICS,
            verbatim_ngram=AUDIT["verbatim_ngram"],
            bootstrap=AUDIT["bootstrap"],
            split=dataset_split,
            gate=config["release"]["gate"],
            delta=CONFIG_SETTINGS.dpsgd.delta,
            privacy_unit=CONFIG_SETTINGS.dpsgd.privacy_unit,
            placement=MODEL_PLACEMENT,
            control_rows=False,
        script:
            "../scripts/released_text_audit.py"
