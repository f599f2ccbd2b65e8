# Utility of each synthetic corpus: perplexity of a model fine-tuned on it, and MAUVE against real text.


def trained_adapter(wildcards):
    from plainsight.methods.trained import TRAINED_METHODS
    from plainsight.methods.registry import base_method

    if base_method(wildcards.method) in TRAINED_METHODS:
        return "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}".format(**wildcards)
    return []


rule perplexity:
    """Fine-tune a fresh copy of the configured model on one synthetic corpus; perplexity on the real test split."""
    input:
        corpus="results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet",
        docs="results/{dataset}/docs.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_perplexity.json",
    log:
        "results/logs/perplexity/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/perplexity/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    params:
        perplexity=config["utility"]["perplexity"],
        model=model_source(config["model"]["name_or_path"]),
    threads: config["utility"]["threads"]
    resources:
        mem_mb=perplexity_mem_mb(),
        runtime=perplexity_runtime,
        gpu=GPUS_PER_JOB,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/perplexity.py"


rule base_perplexity:
    """The configured model's own perplexity on the real test split: the reference row of the utility table."""
    input:
        docs="results/{dataset}/docs.parquet",
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/utility/base_model_perplexity.json",
    log:
        "results/logs/base_perplexity/{dataset}.log",
    params:
        perplexity=config["utility"]["perplexity"],
        model=model_source(config["model"]["name_or_path"]),
    threads: config["utility"]["threads"]
    resources:
        mem_mb=perplexity_mem_mb(),
        runtime=perplexity_runtime,
        gpu=GPUS_PER_JOB,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/perplexity.py"


rule mauve_texts:
    """One text per real test segment, written by the method from that segment's real control code."""
    input:
        docs="results/{dataset}/docs.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        adapter=trained_adapter,
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve_texts.parquet",
    log:
        "results/logs/mauve_texts/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/mauve_texts/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    params:
        generation=config["generation"],
        samples=config["utility"]["mauve"]["samples"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
    threads: config["generation"]["threads"]
    resources:
        mem_mb=generation_mem_mb(config["generation"]["max_prompt_tokens"]),
        runtime=mauve_texts_runtime,
        gpu=GPUS_PER_JOB,
    conda:
        "../../envs/generation.yaml"
    script:
        "../../scripts/mauve_texts.py"


rule mauve:
    """MAUVE between the method's texts and the real test segments they were written for."""
    input:
        texts="results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve_texts.parquet",
        docs="results/{dataset}/docs.parquet",
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve.json",
    log:
        "results/logs/mauve/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    params:
        mauve=config["utility"]["mauve"],
    threads: config["utility"]["threads"]
    conda:
        "../../envs/mauve.yaml"
    script:
        "../../scripts/mauve_score.py"


rule utility:
    """Perplexity and MAUVE of one synthetic corpus, in one record."""
    input:
        perplexity="results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_perplexity.json",
        mauve="results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve.json",
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}.json",
    log:
        "results/logs/utility/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/utility.py"
