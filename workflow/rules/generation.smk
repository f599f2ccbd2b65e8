# Synthetic corpora: one Parquet per method and seed (or its shards: GENERATED in common.smk).

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.audit import NEGATIVE_CONTROL
from plainsight.generation.params import generation_params
from plainsight.methods.trained import prompting_method


include: "functions/generation.smk"


# what in-context methods draw fictional values from besides the pools (codes.surrogates)
SURROGATE_LISTS = (
    config["codes"]["surrogate_lists"]
    if config["codes"]["surrogates"] == "format_preserving"
    else []
)
# The audit's negative control: a corpus written without private data, per audited run and seed. One job,
# not sharded: it writes as many texts as one trained method's corpus.
NEGATIVE_CONTROL_CORPUS = (
    "results/{dataset}/{setting}/{idset}/synthetic/"
    f"{NEGATIVE_CONTROL}/seed{{seed}}.parquet"
)


rule generate_icl:
    """A corpus of an in-context method for one seed (a `.large` method runs with `model_large`)."""
    input:
        docs=DOCS,
        spans=SPANS,
        codes=CODES,
        pools=config["codes"]["fictional_pools"],
        lists=SURROGATE_LISTS,
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        GENERATED,
    log:
        f"results/logs/generate_icl/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{SHARD_SUFFIX}.log",
    benchmark:
        f"results/benchmarks/generate_icl/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{SHARD_SUFFIX}.tsv"
    wildcard_constraints:
        method=IN_CONTEXT_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("generate_icl"),
        runtime=runtime("generate_icl"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("generate_icl"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), CONFIG_SETTINGS, "corpus"
        ),
        shard=generation_shard,
        surrogates=config["codes"]["surrogates"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule generate_trained:
    """A synthetic corpus from a trained adapter, one fictional code per prompt (a guaranteed method's from its released codes)."""
    input:
        unpack(trained_code_tables),
        adapter="results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        model=model_input(config["model"]["name_or_path"]),
    output:
        GENERATED,
    log:
        f"results/logs/generate_trained/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{SHARD_SUFFIX}.log",
    benchmark:
        f"results/benchmarks/generate_trained/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{SHARD_SUFFIX}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
    priority: 1
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("generate_trained"),
        runtime=runtime("generate_trained"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("generate_trained"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), CONFIG_SETTINGS, "corpus"
        ),
        shard=generation_shard,
        generations=config["prefix_tuning"]["generations"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule generate_zero_learning:
    """The audit's negative control for one seed: the base model, with no adapter and no real text in its prompts, writing one text per fictional code of the trained plan (as many as a trained method's corpus)."""
    input:
        codes=CODES,
        fictional="results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        NEGATIVE_CONTROL_CORPUS,
    log:
        "results/logs/generate_zero_learning/{dataset}_{setting}_{idset}_{seed}.log",
    benchmark:
        "results/benchmarks/generate_zero_learning/{dataset}_{setting}_{idset}_{seed}.tsv"
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("generate_zero_learning"),
        runtime=runtime("generate_zero_learning"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("generate_zero_learning"),
    params:
        generation=generation_params(
            registry.method(prompting_method()), CONFIG_SETTINGS, "corpus"
        ),
        generations=config["prefix_tuning"]["generations"],
        label=NEGATIVE_CONTROL,
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_zero_learning.py"


rule generate_private_selection:
    """A corpus of a training-free private generator for one seed (a `.large` method runs with
    `model_large`), and the record of its privacy guarantee: what it covers and what it does not.
    """
    input:
        docs=DOCS,
        codes=CODES,
        prompts=config["private_selection"]["prompts"],
        pii=selection_pii,
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        corpus=CORPUS,
        guarantee="results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_privacy.json",
    log:
        "results/logs/generate_private_selection/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/generate_private_selection/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=PRIVATE_SELECTION_METHOD,
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("generate_private_selection"),
        runtime=runtime("generate_private_selection"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("generate_private_selection"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), CONFIG_SETTINGS, "corpus"
        ),
        settings=selection_settings,
        embedder=config["private_selection"]["embedder"],
        dataset_format=lambda wildcards: config["datasets"][wildcards.dataset]["format"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_private_selection.py"


if GENERATION_SHARDS > 1:

    rule concat_shards:
        """One corpus from its shards, in generation order: the same table one job would write."""
        input:
            expand(GENERATED, shard=range(GENERATION_SHARDS), allow_missing=True),
        output:
            CORPUS,
        log:
            "results/logs/concat_shards/{dataset}_{setting}_{idset}_{method}_{seed}.log",
        wildcard_constraints:
            method=DECODED_METHOD,
        localrule: True
        conda:
            "../envs/generation.yaml"
        script:
            "../scripts/concat_shards.py"
