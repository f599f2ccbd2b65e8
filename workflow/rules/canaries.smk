# Canaries in the released text (plainsight.audit.canaries, canary_attacks, canary_table): a corpus
# sentence with a suffix at a target perplexity, each candidate included by a fair coin (a
# single-insertion one as a training document of its own, a multi-insertion one in training segments);
# each method writes its own canary corpus (its adapter trained, its prompts filled, on that set),
# never Table 1's. The canary table of each audited dataset (CANARY_TABLE, common.smk), built by
# results/tables/all, and by rule all only where the verdict reads it (`audit.canaries.in_verdict`).

from pathlib import Path

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.generation.params import generation_params
from plainsight.training.params import training_params


include: "functions/canaries.smk"


CANARIES = AUDIT["canaries"]
# the canaried set of one audited run and seed, with each method's adapter, corpus and attack scores
CANARY_RUN = "results/{dataset}/{setting}/{idset}/canaries/seed{seed}"
CANARY_RUNS = AUDIT_RUNS


rule canary_docs:
    """Canaries, each a training sentence and a suffix at the target perplexity under the base model, each included by a fair coin: a single-insertion one as a training document (and privacy unit) of its own, added to the docs and codes; a multi-insertion one into `repeats` training segments of distinct documents; and the canary persons, each included by a fair coin as the documents of one privacy unit of its own."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        design=CANARIES["file"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        docs=f"{CANARY_RUN}/docs.parquet",
        codes=f"{CANARY_RUN}/codes.parquet",
        canaries=f"{CANARY_RUN}/canaries.json",
    log:
        "results/logs/canary_docs/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_docs/{dataset}_{setting}_{idset}_{seed}.tsv"
    conda:
        "../envs/generation.yaml"
    threads: AUDIT["threads"]
    resources:
        mem_mb=mem_mb("canary_docs"),
        runtime=runtime("canary_docs"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_docs"),
    params:
        plan={key: CANARIES[key] for key in ("single", "per_repeat", "repeats")},
        persons=CANARIES["persons"],
        context_documents=config["generation"]["context_documents"],
        dp={key: config["dpsgd"][key] for key in ("delta", "privacy_unit")},
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/canary_docs.py"


rule canary_adapter:
    """A trained method's adapter, trained as rule train_adapter trains it, on the canaried set."""
    input:
        docs=f"{CANARY_RUN}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        codes=f"{CANARY_RUN}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        directory(f"{CANARY_RUN}/models/{{method}}"),
    log:
        "results/logs/canary_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["prefix_tuning"]["threads"]
    resources:
        mem_mb=mem_mb("canary_adapter"),
        runtime=runtime("canary_adapter"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_adapter"),
    params:
        training=lambda wildcards: training_params(
            registry.method(wildcards.method), config["prefix_tuning"], config["dpsgd"]
        ),
        checkpoints=f"{CANARY_RUN}/checkpoints/{{method}}",
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/train_adapter.py"


rule canary_generations:
    """The canary adapter's corpus, written as rule generate_trained writes a trained method's."""
    input:
        adapter=f"{CANARY_RUN}/models/{{method}}",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        fictional="results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        f"{CANARY_RUN}/synthetic/{{method}}.parquet",
    log:
        "results/logs/canary_generations/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_generations/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("canary_generations"),
        runtime=runtime("canary_generations"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_generations"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), config, "corpus"
        ),
        shard={"index": 0, "count": 1},
        generations=config["prefix_tuning"]["generations"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule canary_generations_in_context:
    """An in-context method's corpus on the canaried set, written as rule generate_icl writes it: its prompts show the member canaries of their context documents."""
    input:
        docs=f"{CANARY_RUN}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        codes=f"{CANARY_RUN}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        lists=SURROGATE_LISTS,
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        f"{CANARY_RUN}/synthetic/{{method}}.parquet",
    log:
        "results/logs/canary_generations_in_context/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/canary_generations_in_context/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=IN_CONTEXT_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("canary_generations_in_context"),
        runtime=runtime("canary_generations_in_context"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("canary_generations_in_context"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), config, "corpus"
        ),
        shard={"index": 0, "count": 1},
        surrogates=config["codes"]["surrogates"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


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
        dataset="|".join(AUDIT["datasets"]),
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
