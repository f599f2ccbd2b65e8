# Release bundles: a method's synthetic texts alone and their dataset card, with the verdict, the
# guarantee, the utility and the reviewers' comments of its run (results/release).


include: "functions/release.smk"


rule release_bundle:
    """A method's synthetic texts alone (no real text, no context ids) and its dataset card."""
    input:
        corpora=release_runs(CORPUS),
        metrics=release_runs(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet"
        ),
        summaries=release_runs(
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet"
        ),
        spans="results/{dataset}/spans.parquet",
        codes="results/{dataset}/{setting}/{idset}/codes.parquet",
        guarantees=release_guarantees,
        audit=release_audit_tables,
        utility=release_utility_table,
        comments=release_comments,
    output:
        bundle="results/release/{dataset}/{setting}/{idset}/{method}/synthetic.jsonl",
        card="results/release/{dataset}/{setting}/{idset}/{method}/README.md",
        verdict="results/release/{dataset}/{setting}/{idset}/{method}/verdict.json",
    log:
        "results/logs/release_bundle/{dataset}_{setting}_{idset}_{method}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        release={
            key: config["release"][key]
            for key in ("drop", "drop_guaranteed", "license", "language", "sign_off")
        },
        config_fingerprint=CONFIG_FINGERPRINT,
        model=variant_model,
        generation=release_generation_settings,
    script:
        "../scripts/release_bundle.py"
