# Data layer: source files -> one row per segment (docs) and per gold mention (spans).


include: "functions/data.smk"


rule download_tab:
    """Fetch the official TAB files for users with internet (config source: github)."""
    output:
        "results/downloads/tab/echr_{split}.json",
    log:
        "results/logs/download_tab/{split}.log",
    conda:
        "../envs/data.yaml"
    params:
        url="https://raw.githubusercontent.com/NorskRegnesentral/text-anonymization-benchmark/master/echr_{split}.json",
    script:
        "../scripts/download_tab.py"


rule generate_tab:
    """Write a fictional TAB corpus of the configured size with the demo generator (config source:
    generated), from the demo's seed: the same sizes give the same files."""
    output:
        expand(
            f"{GENERATED_TAB_FOLDER}/echr_{{split}}.json",
            split=TAB_SPLITS,
            allow_missing=True,
        ),
    log:
        "results/logs/generate_tab/{dataset}.log",
    conda:
        "../envs/data.yaml"
    params:
        documents=lambda wildcards: dataset_config(wildcards)["documents"],
    script:
        "../scripts/generate_tab.py"


rule ingest:
    """Validate, segment and tabulate one dataset."""
    input:
        raw_inputs,
    output:
        docs=DOCS,
        spans=SPANS,
    log:
        "results/logs/ingest/{dataset}.log",
    conda:
        "../envs/data.yaml"
    params:
        dataset=dataset_config,
        on_invalid=config["on_invalid_record"],
        placeholder_types=config["codes"]["mimic_placeholder_types"],
    script:
        "../scripts/ingest.py"
