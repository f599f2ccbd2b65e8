# The adapters and distances of an audited run (audit.smk), the files of one dataset's privacy audit
# table, and that table where a run is audited, which the methods table, review pages and release
# bundles read.


def audited_adapters(wildcards):
    """The adapters of the trained methods of one run, in the configured method order."""
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        method=AUDITED_TRAINED,
        **wildcards,
    )


def audited_distances(wildcards):
    """The closest-record distances of every method of one audited run."""
    return expand(
        "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_distances.parquet",
        method=config["methods"],
        **wildcards,
    )


def dataset_audit_files(pattern, runs):
    """An input function: `pattern` filled for every run of `runs` on the table's dataset."""

    def files(wildcards):
        return [pattern.format(**run) for run in dataset_runs(runs, wildcards)]

    return files


def canary_tables(datasets):
    """The canary table of each of `datasets` that has a canaried run (CANARIED_DATASETS)."""
    return [
        f"{CANARY_TABLE}.csv".format(dataset=d)
        for d in datasets
        if d in CANARIED_DATASETS
    ]


def verdict_canary_table(wildcards):
    """The dataset's canary table, where the verdict reads it (`audit.canaries.in_verdict`)."""
    return canary_tables([wildcards.dataset]) if AUDIT["canaries"]["in_verdict"] else []


def audited_utility(wildcards):
    """The dataset's utility table, where it measures one of its audited runs: each verdict line says
    whether the corpus is fit to release as text."""
    measured = any(
        {key: run[key] for key in ("dataset", "setting", "idset")} in UTILITY_RUNS
        for run in dataset_runs(AUDIT_RUNS, wildcards)
    )
    return (
        [f"{UTILITY_TABLE}.csv".format(dataset=wildcards.dataset)] if measured else []
    )


def run_audit_table(wildcards):
    """The privacy audit table of the run's dataset, where the run (dataset, setting, identifier set) is
    audited (`audit`)."""
    audited = (
        wildcards.dataset in AUDITED_DATASETS
        and wildcards.setting in config["audit"]["settings"]
        and wildcards.idset in config["audit"]["identifier_sets"]
    )
    return (
        [f"{PRIVACY_AUDIT_TABLE}.csv".format(dataset=wildcards.dataset)]
        if audited
        else []
    )
