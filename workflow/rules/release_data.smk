# The public part of a release bundle: its data file, written by a rule of its own so that the provenance
# check (plainsight.audit.provenance) can follow what reaches it: a method whose formal guarantee bounds
# its release ships its corpora as written, untouched by any filter that reads private data.


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
