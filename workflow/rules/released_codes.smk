# Control codes of a method with a formal guarantee (DP-SGD): patterns released by a DP mechanism, or drawn
# from a prior that reads no private data, with values from the fictional pools as they are
# (codes.released; docs/methods-and-metrics.md#privacy-accounting).


include: "functions/released_codes.smk"


rule release_code_patterns:
    """The distribution a guaranteed method's code patterns are drawn from, and the record of its mechanism: a Gaussian histogram over privacy units for `codes.released.budget_share` of the method's epsilon, or the prior."""
    input:
        unpack(released_pattern_inputs),
    output:
        weights=f"{RELEASED_PATTERNS}.parquet",
        record=f"{RELEASED_PATTERNS}.json",
    log:
        "results/logs/release_code_patterns/{dataset}_{setting}_{idset}_{method}.log",
    wildcard_constraints:
        method=TRAINED_METHOD,
    # a histogram of a few thousand cells: as light as rule fictional_codes, local as it is
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        released=config["codes"]["released"],
        # what the mechanism reads of DP-SGD's block: a change elsewhere reruns the training alone
        dpsgd={
            key: config["dpsgd"][key] for key in ("epsilon", "delta", "privacy_unit")
        },
        ranges=lambda wildcards: len(dataset_config(wildcards)["segments"]),
    script:
        "../scripts/release_code_patterns.py"


rule released_codes:
    """A seed's codes drawn from the released patterns (post-processing), filled with values from the fictional pools as they are."""
    input:
        weights=f"{RELEASED_PATTERNS}.parquet",
        record=f"{RELEASED_PATTERNS}.json",
        pools=config["codes"]["fictional_pools"],
    output:
        RELEASED_CODES_TABLE,
    log:
        "results/logs/released_codes/{dataset}_{setting}_{idset}_{method}_{seed}.log",
    wildcard_constraints:
        method=TRAINED_METHOD,
    # a histogram of a few thousand cells: as light as rule fictional_codes, local as it is
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        generations=config["prefix_tuning"]["generations"],
    script:
        "../scripts/released_codes.py"
