# The public part of a release bundle: its data file and its public card, each written by a rule of its
# own so that the provenance check (plainsight.audit.provenance) can follow what reaches them: a method
# whose formal guarantee bounds its release ships its corpora as written, untouched by any filter that
# reads private data, and a card written from them, the mechanisms' records and the config alone. The
# custodian's part (rule release_bundle) holds the evidence computed on the private corpus.


include: "functions/release_data.smk"


rule release_data:
    """A bundle's data file: the kept rows of every seed, or the corpora as written for a method whose formal guarantee bounds its release while `release.drop_guaranteed` is none (the filter then drops nothing)."""
    input:
        rows=release_data_rows,
    output:
        "results/release/{dataset}/{setting}/{idset}/{method}/synthetic.jsonl",
    log:
        "results/logs/release_data/{dataset}_{setting}_{idset}_{method}.log",
    conda:
        "../envs/metrics.yaml"
    script:
        "../scripts/release_data.py"


rule release_card:
    """A bundle's public card (README.md): its data file's settings, seeds and size, its formal guarantee as the mechanisms' own records state it with their composition, and the custodian's sign-off of its texts (NOT FOR RELEASE without one); nothing read from the private corpus, not even the verdict."""
    input:
        data="results/release/{dataset}/{setting}/{idset}/{method}/synthetic.jsonl",
        guarantees=release_guarantees,
        mechanisms=release_mechanism_records,
        provenance=PROVENANCE,
    output:
        "results/release/{dataset}/{setting}/{idset}/{method}/README.md",
    log:
        "results/logs/release_card/{dataset}_{setting}_{idset}_{method}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        release=RELEASE_SETTINGS,
        model=variant_model,
        generation=release_generation_settings,
        mechanisms=release_mechanism_names,
        unconfigured_training=release_unconfigured_training,
    script:
        "../scripts/release_card.py"
