# Control codes: real codes per segment (gold or Presidio) and fictional codes per seed.


include: "functions/codes.smk"


rule detect_presidio:
    """Unknown setting: every value Presidio finds, mapped to the TAB categories."""
    input:
        docs=DOCS,
        entity_map=config["codes"]["presidio"]["entity_map"],
    output:
        "results/{dataset}/unknown/detected.parquet",
    log:
        "results/logs/detect_presidio/{dataset}.log",
    conda:
        "../envs/data.yaml"
    params:
        presidio=config["codes"]["presidio"],
    script:
        "../scripts/detect_presidio.py"


rule control_codes:
    """One real control code per segment for a setting and an identifier set."""
    input:
        docs=DOCS,
        values=code_sources,
    output:
        CODES,
    log:
        "results/logs/control_codes/{dataset}_{setting}_{idset}.log",
    conda:
        "../envs/data.yaml"
    script:
        "../scripts/control_codes.py"


rule fictional_codes:
    """A fictional code per segment: same types and counts, values that look like no real value (paper pools, or
    format-preserving surrogates)."""
    input:
        codes=CODES,
        spans=SPANS,
        pools=config["codes"]["fictional_pools"],
        lists=config["codes"]["surrogate_lists"],
    output:
        "results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
    log:
        "results/logs/fictional_codes/{dataset}_{setting}_{idset}_{seed}.log",
    conda:
        "../envs/data.yaml"
    params:
        surrogates=config["codes"]["surrogates"],
    script:
        "../scripts/fictional_codes.py"


rule codes:
    """Every code artifact: all datasets, settings, identifier sets and seeds."""
    input:
        expand(
            "results/{dataset}/{setting}/{idset}/fictional/seed{seed}.parquet",
            dataset=DATASETS,
            setting=SETTINGS,
            idset=IDENTIFIER_SETS,
            seed=SEEDS,
        ),
