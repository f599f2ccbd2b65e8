# Pictures: the privacy-utility trade-off per dataset; a readable sample of every synthetic corpus.


rule privacy_utility_plot:
    """PIPP against MAUVE and ROUGE-L against perplexity, per method, beside the paper's points."""
    input:
        summaries=expand("results/{{dataset}}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
                         setting=config["plots"]["setting"], idset=config["plots"]["idset"],
                         method=config["methods"], seed=SEEDS),
        utility=expand("results/{{dataset}}/{setting}/{idset}/utility/{method}/seed{seed}.json",
                       setting=config["plots"]["setting"], idset=config["plots"]["idset"],
                       method=config["methods"], seed=config["utility"]["seeds"]),
        paper=config["tables"]["paper"],
    output:
        report("results/plots/privacy_utility_{dataset}.png", caption="../report/privacy_utility.rst",
               category="Plots", labels={"dataset": "{dataset}"}),
    log:
        "results/logs/privacy_utility_plot/{dataset}.log",
    params:
        setting=config["plots"]["setting"],
        idset=config["plots"]["idset"],
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/plot_privacy_utility.py"


rule corpus_examples:
    """Three generations of one synthetic corpus with their fictional codes and context documents, as Markdown."""
    input:
        "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet",
    output:
        "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_examples.md",
    log:
        "results/logs/corpus_examples/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    params:
        shown=3,
    conda:
        "../../envs/metrics.yaml"
    script:
        "../../scripts/corpus_examples.py"
