# Privacy metrics per generation, and a summary per paragraph range and overall; the utility of
# each corpus (perplexity, MAUVE) and of each run's corpora together (downstream task and more).

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.generation.params import generation_params


include: "functions/evaluation.smk"


rule privacy_metrics:
    """PIPP, ELP, partial leaks and ROUGE of one synthetic corpus (in-context or fine-tuning definitions), each leak measure beside its held-out control."""
    input:
        corpus=CORPUS,
        codes=CODES,
        docs=DOCS,
        spans=SPANS,
    output:
        generations="results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
        summary="results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
        control="results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json",
    log:
        "results/logs/privacy_metrics/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        metrics=PRIVACY_METRICS,
    script:
        "../scripts/privacy_metrics.py"


rule perplexity:
    """Fine-tune a fresh copy of the configured model on one synthetic corpus; perplexity on the real test split."""
    input:
        corpus=CORPUS,
        docs=DOCS,
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_perplexity.json",
    log:
        "results/logs/perplexity/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/perplexity/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    conda:
        "../envs/generation.yaml"
    threads: config["utility"]["threads"]
    resources:
        mem_mb=mem_mb("perplexity"),
        runtime=runtime("perplexity"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("perplexity"),
    params:
        perplexity=config["utility"]["perplexity"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/perplexity.py"


rule base_perplexity:
    """The configured model's own perplexity on the real test split: the reference row of the utility table."""
    input:
        docs=DOCS,
        model=model_input(config["model"]["name_or_path"]),
    output:
        "results/{dataset}/utility/base_model_perplexity.json",
    log:
        "results/logs/base_perplexity/{dataset}.log",
    conda:
        "../envs/generation.yaml"
    threads: config["utility"]["threads"]
    resources:
        mem_mb=mem_mb("base_perplexity"),
        runtime=runtime("base_perplexity"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("base_perplexity"),
    params:
        perplexity=config["utility"]["perplexity"],
        model=lambda wildcards: model_source(MODEL_ID),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/perplexity.py"


rule mauve_texts:
    """One text per real test segment, written by the method from that segment's real control code."""
    input:
        docs=DOCS,
        codes=CODES,
        adapter=trained_adapter,
        corpus=selection_corpus,
        model=lambda wildcards: model_input(variant_model(wildcards)),
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve_texts.parquet",
    log:
        "results/logs/mauve_texts/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    benchmark:
        "results/benchmarks/mauve_texts/{dataset}_{setting}_{idset}_{method}_{seed}.tsv"
    conda:
        "../envs/generation.yaml"
    threads: config["generation"]["threads"]
    resources:
        mem_mb=mem_mb("mauve_texts"),
        runtime=runtime("mauve_texts"),
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("mauve_texts"),
    params:
        generation=lambda wildcards: generation_params(
            registry.method(wildcards.method), CONFIG_SETTINGS, "mauve"
        ),
        mauve_samples=config["utility"]["mauve"]["samples"],
        model=lambda wildcards: model_source(variant_model(wildcards)),
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/mauve_texts.py"


rule mauve:
    """MAUVE between the method's texts and the real test segments they were written for."""
    input:
        texts="results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve_texts.parquet",
        docs=DOCS,
    output:
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}_mauve.json",
    log:
        "results/logs/mauve/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    conda:
        "../envs/mauve.yaml"
    threads: config["utility"]["threads"]
    resources:
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("mauve"),
    params:
        mauve=config["utility"]["mauve"],
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/mauve_score.py"


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
        "../envs/metrics.yaml"
    script:
        "../scripts/utility.py"


rule utility_measures:
    """Downstream task (train on synthetic, test on real), control-code adherence, diversity and FID
    of every synthetic corpus of one run, beside the real corpus."""
    input:
        corpora=utility_corpora,
        docs=DOCS,
        codes=CODES,
    output:
        "results/{dataset}/{setting}/{idset}/utility/measures.parquet",
    log:
        "results/logs/utility_measures/{dataset}_{setting}_{idset}.log",
    benchmark:
        "results/benchmarks/utility_measures/{dataset}_{setting}_{idset}.tsv"
    conda:
        "../envs/mauve.yaml"
    threads: config["utility"]["threads"]
    resources:
        gpu=(
            GPUS_PER_JOB
            if config["utility"]["downstream"]["classifier"] == "encoder"
            else 0
        ),
        gpu_memory_mb=gpu_memory_mb("utility_measures"),
    params:
        corpus_keys=utility_corpus_keys(),
        downstream=config["utility"]["downstream"],
        # FID on MAUVE's real sample, with the embedded featurizer: only the keys it reads, so that a
        # change of MAUVE's own settings (its resamples) leaves these measures current
        mauve={
            key: config["utility"]["mauve"][key] for key in ("samples", "max_tokens")
        },
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/utility_measures.py"


use rule utility_measures as utility_measures_all_methods with:
    input:
        corpora=all_methods_utility_corpora,
        docs=DOCS,
        codes=CODES,
    output:
        "results/{dataset}/{setting}/{idset}/utility/all_methods_measures.parquet",
    log:
        "results/logs/utility_measures_all_methods/{dataset}_{setting}_{idset}.log",
    benchmark:
        "results/benchmarks/utility_measures_all_methods/{dataset}_{setting}_{idset}.tsv"
    params:  # merged into the parent rule's params by name
        corpus_keys=utility_corpus_keys(with_private_selection=True),
