# The files of the methods table (methods_table.smk): its runs' records, formal claims, canary table
# and the benchmarks of the jobs that wrote its corpora.


# The jobs that write a method's corpus, by family: (rule, whether it runs per shard).
CORPUS_JOBS = {
    "in_context": [("generate_icl", True)],
    "trained": [("train_adapter", False), ("generate_trained", True)],
    "private_selection": [("generate_private_selection", False)],
}


def methods_table_canaries():
    """The canary table of the methods table's dataset, where that dataset has a canaried run."""
    return canary_tables([METHODS_TABLE_RUN["dataset"]])


def methods_table_files(pattern):
    """`pattern` for every (method, seed) of the methods table."""
    return [pattern.format(**METHODS_TABLE_RUN, **run) for run in METHODS_TABLE_RUNS]


def methods_table_guarantees():
    """(method, file) of every formal claim of the methods table's runs."""
    return [
        (run["method"], pattern.format(**METHODS_TABLE_RUN, **run))
        for run in METHODS_TABLE_RUNS
        if (pattern := guarantee_record_pattern(run["method"]))
    ]


def methods_table_benchmarks():
    """(method, benchmark file) of every job that wrote a corpus of the methods table, shard by shard."""
    found = []
    for run in METHODS_TABLE_RUNS:
        for rule_name, sharded in CORPUS_JOBS[registry.method(run["method"]).family]:
            suffix = SHARD_SUFFIX if sharded else ""
            pattern = f"results/benchmarks/{rule_name}/{{dataset}}_{{setting}}_{{idset}}_{{method}}_{{seed}}{suffix}.tsv"
            found += [
                (run["method"], pattern.format(**METHODS_TABLE_RUN, **run, shard=shard))
                for shard in (range(GENERATION_SHARDS) if sharded else [0])
            ]
    return found
