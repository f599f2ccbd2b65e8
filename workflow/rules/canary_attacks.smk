# The attacks on each method's canary corpus and the canary table of each audited dataset
# (plainsight.audit: canary_attacks, canary_table; CANARY_TABLE, common.smk), built by
# results/tables/all, and by rule all only where the verdict reads it (`audit.canaries.in_verdict`).
# The canaried sets and their corpora are in canaries.smk.

from pathlib import Path


include: "functions/canary_attacks.smk"


rule canary_attacks:
    """Each canary's scores under the attacks on one method's canary corpus: an n-gram model of the corpus and the longest shared word run; for a trained method also the adapter's likelihood ratio against the base model; and each canary person's most details in one generation."""
    input:
        unpack(canary_adapter_input),
        canaries=f"{CANARY_RUN}/canaries.json",
        corpus=f"{CANARY_RUN}/synthetic/{{method}}.parquet",
    output:
        canaries=f"{CANARY_RUN}/{{method}}_attacks.parquet",
        persons=f"{CANARY_RUN}/{{method}}_person_attacks.parquet",
    log:
        "results/logs/canary_attacks/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_attacks/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=registry.wildcard_pattern(),
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        mem_mb=mem_mb("canary_attacks"),
        runtime=runtime("canary_attacks"),
        gpu=lambda wildcards: (
            GPUS_PER_JOB if registry.method(wildcards.method).trained else 0
        ),
        gpu_memory_mb=gpu_memory_mb("canary_attacks"),
    params:
        ngram={"order": CANARIES["ngram_order"], "add_k": CANARIES["ngram_add_k"]},
        batch_size=AUDIT["batch_size"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/canary_attacks.py"


rule canary_table:
    """Per audited run of one dataset, method, attack and insertion count: the one-run epsilon lower bound (per unit for single-insertion canaries, per group for the others) from guesses fixed in advance, beside the most they could show and DP-SGD's claim; AUC and TPR at 1% and 10% FPR; the plot of AUC against insertions; per method, the canary persons' per-person bound."""
    input:
        attacks=dataset_audit_files(
            f"{CANARY_RUN}/{{method}}_attacks.parquet", CANARY_RUNS
        ),
        persons=dataset_audit_files(
            f"{CANARY_RUN}/{{method}}_person_attacks.parquet", CANARY_RUNS
        ),
        canaries=dataset_audit_files(f"{CANARY_RUN}/canaries.json", CANARY_RUNS),
        adapters=lambda wildcards: [
            str(Path(canary_dp_record(run)).parent)
            for run in dataset_runs(CANARY_RUNS, wildcards)
            if canary_dp_record(run)
        ],
    output:
        csv=report(
            f"{CANARY_TABLE}.csv",
            caption="../report/canaries.rst",
            category="Tables",
            labels={"table": "canaries", "content": "ours", "dataset": "{dataset}"},
        ),
        markdown=f"{CANARY_TABLE}.md",
        plot=report(
            f"{PLOTS}/canaries_auc.png",
            caption="../report/canaries_auc.rst",
            category="Privacy audit",
            labels={"plot": "canary AUC", "run": "every audited run of {dataset}"},
        ),
    log:
        "results/logs/canary_table/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(AUDITED_DATASETS),
    conda:
        "../envs/metrics.yaml"
    params:
        runs=lambda wildcards: dataset_runs(CANARY_RUNS, wildcards),
        dp_records=lambda wildcards: [
            canary_dp_record(run) or None
            for run in dataset_runs(CANARY_RUNS, wildcards)
        ],
        bootstrap=AUDIT["bootstrap"],
        guesses=CANARIES["guesses"],
    script:
        "../scripts/canary_table.py"
