# Synthetic corpora: one Parquet per method and seed.

CORPUS = "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet"
GENERATION_SHARDS = config["generation"]["shards"]
# With one shard the generate rules (here and in training.smk) write the corpus itself; with more,
# each job writes one shard and concat_shards joins them. Shard files are kept (not temp): a lost
# corpus is joined again without generating again. The shard count is in their name, so shards
# written with another count are never mixed in.
SHARD = ("results/{dataset}/{setting}/{idset}/synthetic/{method}/shards/seed{seed}_shard{shard}of"
         f"{GENERATION_SHARDS}.parquet")
GENERATED = CORPUS if GENERATION_SHARDS == 1 else SHARD
SHARD_SUFFIX = "" if GENERATION_SHARDS == 1 else "_shard{shard}"  # in log and benchmark names


def generation_shard(wildcards):
    """Which shard of its corpus a generate job writes (index 0-based)."""
    return {"index": int(getattr(wildcards, "shard", 0)), "count": GENERATION_SHARDS}


rule generate_icl:
    """In-context generation (baseline, icl, icl_pe; with `model_large` as icl.large etc.) for one seed."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        GENERATED,
    wildcard_constraints:
        method=r"(baseline|icl|icl_pe)(\.large)?",  # .large: with `model_large` (see variants.py)
    log:
        "results/logs/generate_icl/{dataset}_{setting}_{idset}_{method}_{seed}" + SHARD_SUFFIX + ".log",
    benchmark:
        "results/benchmarks/generate_icl/{dataset}_{setting}_{idset}_{method}_{seed}" + SHARD_SUFFIX + ".tsv"
    params:
        generation=config["generation"],
        shard=generation_shard,
        model=lambda wildcards: model_source(variant_model(wildcards)),
    threads: config["generation"]["threads"]
    resources:
        mem_mb=generation_mem_mb(config["generation"]["max_prompt_tokens"]),
        runtime=icl_generation_runtime,
        gpu=GPUS_PER_JOB,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/generate_icl.py"


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
            "../../envs/generation.yaml"
        script:
            "../../scripts/concat_shards.py"
