# Synthetic corpora: one Parquet per method and seed.


rule generate_icl:
    """In-context generation (baseline, icl, icl_pe) for one seed."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        pools=config["codes"]["fictional_pools"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet",
    wildcard_constraints:
        method="baseline|icl|icl_pe",
    log:
        "results/logs/generate_icl/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/generate_icl/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    params:
        generation=config["generation"],
        model=model_source(config["model"]["name_or_path"]),
    threads: config["generation"]["threads"]
    resources:
        mem_mb=generation_mem_mb(config["generation"]["max_prompt_tokens"]),
        runtime=icl_generation_runtime,
        gpu=GPUS_PER_JOB,
    script:
        "../../scripts/generate_icl.py"
