# Privacy audit of the synthetic corpora beyond the leak counts: the real training segments nearest
# to each generation (plainsight.evaluation.nearest).


rule nearest_documents:
    """The three real training segments nearest to each generation: MiniLM cosine and longest shared word n-gram."""
    input:
        corpus=CORPUS,
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        docs="results/{dataset}/docs.parquet",
    output:
        "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_nearest.parquet",
    log:
        "results/logs/nearest_documents/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    conda:
        "../envs/mauve.yaml"
    threads: config["utility"]["threads"]
    resources:
        gpu=GPUS_PER_JOB,
        gpu_memory_mb=gpu_memory_mb("mauve"),
    params:
        placement=MODEL_PLACEMENT,
    script:
        "../scripts/nearest_documents.py"
