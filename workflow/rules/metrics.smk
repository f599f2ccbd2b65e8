# Privacy metrics per generation, and a summary per paragraph range and overall.


rule privacy_metrics:
    """PIPP, ELP, partial leaks and ROUGE of one synthetic corpus (in-context or fine-tuning definitions)."""
    input:
        corpus="results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        docs="results/{dataset}/docs.parquet",
        spans="results/{dataset}/spans.parquet",
    output:
        generations="results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
        summary="results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
    log:
        "results/logs/privacy_metrics/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    params:
        metrics=config["metrics"],
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/privacy_metrics.py"
