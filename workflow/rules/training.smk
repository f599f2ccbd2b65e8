# Trained methods: one adapter per method and seed, fitted on (real code, document) pairs.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.training.params import training_params


rule train_adapter:
    """The adapter of a trained method: prefix tuning, with or without the privacy mask, or DP-SGD."""
    input:
        docs=DOCS,
        spans=SPANS,
        codes=CODES,
        pools=config["codes"]["fictional_pools"],
        model=model_input(config["model"]["name_or_path"]),
    output:
        directory("results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}"),
    log:
        "results/logs/train_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/train_adapter/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    wildcard_constraints:
        method=TRAINED_METHOD,
    # The longest chain of a run (adapter, corpus, metrics; the adapters' membership scores) goes
    # first: the in-context corpora, short jobs with nothing after them but their metrics, fill the
    # cores at the end instead of leaving one idle behind the last adapter.
    priority: 2
    conda:
        "../envs/generation.yaml"
    threads: config["prefix_tuning"]["threads"]
    resources:
        mem_mb=mem_mb("train_adapter"),
        runtime=runtime("train_adapter"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("train_adapter"),
    params:
        # Only what the adapter depends on: a setting of another method retrains nothing here.
        training=lambda wildcards: training_params(
            registry.method(wildcards.method), config["prefix_tuning"], DP_TRAINING
        ),
        # Not an output: Snakemake deletes a failed job's outputs, and a rerun resumes from here.
        checkpoints="results/{dataset}/{setting}/{idset}/checkpoints/{method}/seed{seed}",
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/train_adapter.py"
