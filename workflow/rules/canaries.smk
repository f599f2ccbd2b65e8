# Canaries in the released text (plainsight.audit.canaries): a corpus sentence with a suffix at a
# target perplexity, each candidate included by a fair coin (a single-insertion one as a training
# document of its own, a multi-insertion one in training segments); each method writes its own canary
# corpus (its adapter trained, its prompts filled, on that set), never Table 1's. The attacks on those
# corpora and the canary table are in canary_attacks.smk.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.generation.params import generation_params
from plainsight.training.params import training_params

CANARIES = AUDIT["canaries"]
# the canaried set of one audited run and seed, with each method's adapter, corpus and attack scores
CANARY_RUN = "results/{dataset}/{setting}/{idset}/canaries/seed{seed}"
# the run's docs and codes with the canaries in
CANARY_DOCS = f"{CANARY_RUN}/docs.parquet"
CANARY_CODES = f"{CANARY_RUN}/codes.parquet"


rule canary_docs:
    """Canaries, each a training sentence and a suffix at the target perplexity under the base model, each included by a fair coin: a single-insertion one as a training document (and privacy unit) of its own, added to the docs and codes; a multi-insertion one into `repeats` training segments of distinct documents; and the canary persons, each included by a fair coin as the documents of one privacy unit of its own."""
    input:
        docs=DOCS,
        codes=CODES,
        design=CANARIES["file"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        docs=CANARY_DOCS,
        codes=CANARY_CODES,
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
        delta=CONFIG_SETTINGS.dpsgd.delta,
        privacy_unit=CONFIG_SETTINGS.dpsgd.privacy_unit,
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/canary_docs.py"


rule canary_adapter:
    """A trained method's adapter, trained as rule train_adapter trains it, on the canaried set."""
    input:
        docs=CANARY_DOCS,
        spans=SPANS,
        codes=CANARY_CODES,
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
            registry.method(wildcards.method), config["prefix_tuning"], DP_TRAINING
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
        codes=CODES,
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
            registry.method(wildcards.method), CONFIG_SETTINGS, "corpus"
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
        docs=CANARY_DOCS,
        spans=SPANS,
        codes=CANARY_CODES,
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
            registry.method(wildcards.method), CONFIG_SETTINGS, "corpus"
        ),
        shard={"index": 0, "count": 1},
        surrogates=config["codes"]["surrogates"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"
