# Trained methods: an adapter per method and seed, then a synthetic corpus written from fictional codes.


rule train_adapter:
    """Prefix tuning (ft), prefix tuning with the privacy mask (ft_mask), or DP-SGD (dpsgd)."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        directory("results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}"),
    wildcard_constraints:
        method="ft|ft_mask|dpsgd",
    log:
        "results/logs/train_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/train_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    params:
        # Without `generations`: how many documents an adapter writes does not change the adapter.
        training={k: v for k, v in config["prefix_tuning"].items() if k != "generations"},
        dpsgd=config["dpsgd"],
        # Not an output: Snakemake deletes a failed job's outputs, and a rerun resumes from here.
        checkpoints="results/{dataset}/{setting}/{idset}/checkpoints/{method}/seed{seed}",
        model=model_source(config["model"]["name_or_path"]),
    threads: config["prefix_tuning"]["threads"]
    resources:
        mem_mb=training_mem_mb(),
        runtime=training_runtime,
        gpu=GPUS_PER_JOB,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/train_adapter.py"


rule generate_trained:
    """A synthetic corpus from a trained adapter, one fictional code per prompt."""
    input:
        adapter="results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        fictional="results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        GENERATED,
    wildcard_constraints:
        method="ft|ft_mask|dpsgd",
    log:
        "results/logs/generate_trained/{dataset}_{setting}_{idset}_{method}_{seed}" + SHARD_SUFFIX + ".log",
    benchmark:
        "results/benchmarks/generate_trained/{dataset}_{setting}_{idset}_{method}_{seed}" + SHARD_SUFFIX + ".tsv"
    params:
        generation=config["generation"],
        shard=generation_shard,
        generations=config["prefix_tuning"]["generations"],
        model=model_source(config["model"]["name_or_path"]),
    threads: config["generation"]["threads"]
    resources:
        mem_mb=generation_mem_mb(config["prefix_tuning"]["num_virtual_tokens"] + config["prefix_tuning"]["max_length"]),
        runtime=trained_generation_runtime,
        gpu=GPUS_PER_JOB,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/generate_trained.py"
