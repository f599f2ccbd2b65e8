# Synthetic corpora: one Parquet per method and seed (or its shards, see common.smk).


rule generate_icl:
    """A corpus of an in-context method for one seed (a `.large` method runs with `model_large`)."""
    input:
        docs="results/{dataset}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
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
            registry.method(wildcards.method), config["generation"], "corpus"
        ),
        shard=generation_shard,
        surrogates=config["codes"]["surrogates"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


rule generate_trained:
    """A synthetic corpus from a trained adapter, one fictional code per prompt."""
    input:
        adapter="results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        fictional="results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        GENERATED,
    log:
        f"results/logs/generate_trained/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{SHARD_SUFFIX}.log",
    benchmark:
        f"results/benchmarks/generate_trained/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{SHARD_SUFFIX}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
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
            registry.method(wildcards.method), config["generation"], "corpus"
        ),
        shard=generation_shard,
        generations=config["prefix_tuning"]["generations"],
        model=lambda wildcards: model_source(BASE_MODEL),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/generate_corpus.py"


if GENERATION_SHARDS > 1:

    rule concat_shards:
        """One corpus from its shards, in generation order: the same table one job would write."""
        input:
            expand(GENERATED, shard=range(GENERATION_SHARDS), allow_missing=True),
        output:
            CORPUS,
        log:
            "results/logs/concat_shards/{dataset}_{setting}_{idset}_{method}_{seed}.log",
        localrule: True
        conda:
            "../envs/generation.yaml"
        script:
            "../scripts/concat_shards.py"
