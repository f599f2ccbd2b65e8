# The runs, methods and seeds each paper table reads (report.smk), what results/tables/all builds
# besides the tables, and the utility measures of the privacy-utility plot.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.report.table_specs import table_settings


def table_seeds(table):
    """Seeds of a table: `utility.seeds` for utility tables; `tables.seeds.<table>` where the paper
    reports a single run; else `seeds`."""
    if PAPER_TABLES[table].get("source") == "utility":
        return config["utility"]["seeds"]
    return config["tables"]["seeds"].get(table, SEEDS)


def table_methods(table):
    """The method keys (with the table's model variant, if any) whose runs a table reads."""
    spec = PAPER_TABLES[table]
    listed = [
        m for m in config["methods"] if m in spec.get("methods", config["methods"])
    ]
    return [registry.with_variant(m, spec.get("model")) for m in listed]


def table_runs(table, pattern):
    """`pattern` filled for every run (setting, method, seed) a table reads."""
    spec = PAPER_TABLES[table]
    return expand(
        pattern,
        dataset=spec["dataset"],
        setting=table_settings(spec["setting"]),
        idset=spec["idset"],
        method=table_methods(table),
        seed=table_seeds(table),
    )


def is_privacy_table(table):
    return PAPER_TABLES[table].get("source", "privacy") == "privacy"


def table_inputs(wildcards):
    """The runs' summaries: privacy summaries, or utility records and the base model's reference."""
    dataset = PAPER_TABLES[wildcards.table]["dataset"]
    if wildcards.dataset != dataset:
        raise ValueError(
            f"{wildcards.table} reads dataset {dataset}: it is {paper_table(wildcards.table)}.csv"
        )
    if is_privacy_table(wildcards.table):
        return table_runs(
            wildcards.table,
            "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_summary.parquet",
        )
    dataset = PAPER_TABLES[wildcards.table]["dataset"]
    return table_runs(
        wildcards.table,
        "results/{dataset}/{setting}/{idset}/utility/{method}/seed{seed}.json",
    ) + [f"results/{dataset}/utility/base_model_perplexity.json"]


def table_generations(wildcards):
    """The per-generation metrics of a privacy table's runs, for pooled intervals and paired tests."""
    if not is_privacy_table(wildcards.table):
        return []
    return table_runs(
        wildcards.table,
        "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}.parquet",
    )


def table_controls(wildcards):
    """The held-out control counts of a privacy table's runs, for the phantom shares of its notes."""
    if not is_privacy_table(wildcards.table):
        return []
    return table_runs(
        wildcards.table,
        "results/{dataset}/{setting}/{idset}/metrics/{method}/seed{seed}_control.json",
    )


def table_dp_adapters(wildcards):
    """The adapters of a table's differentially private runs: their training.json holds the guarantee."""
    spec = PAPER_TABLES[wildcards.table]
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        dataset=spec["dataset"],
        setting=table_settings(spec["setting"]),
        idset=spec["idset"],
        method=[
            m
            for m in table_methods(wildcards.table)
            if registry.method(m).differentially_private
        ],
        seed=table_seeds(wildcards.table),
    )


def table_review_comments(wildcards):
    """The reviewers' comments of a privacy table's corpora, for its notes."""
    if not is_privacy_table(wildcards.table):
        return []
    spec = PAPER_TABLES[wildcards.table]
    return f"results/review/{spec['dataset']}/{spec['setting']}/{spec['idset']}/comments.parquet"


def table_examples(_wildcards):
    """A readable sample of every synthetic corpus a privacy table reads."""
    paths = []
    for table, spec in PAPER_TABLES.items():
        if spec.get("source", "privacy") == "privacy":
            paths += expand(
                "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_examples.md",
                dataset=spec["dataset"],
                setting=spec["setting"],
                idset=spec["idset"],
                method=table_methods(table),
                seed=table_seeds(table),
            )
    return sorted(set(paths))


def review_subjects():
    """(dataset, setting, idset) of every privacy table: each gets a review page."""
    subjects = {
        (spec["dataset"], spec["setting"], spec["idset"])
        for table, spec in PAPER_TABLES.items()
        if is_privacy_table(table)
    }
    return sorted(subjects)


def review_pages(_wildcards=None):
    return [
        f"results/review/{dataset}/{setting}/{idset}/index.html"
        for dataset, setting, idset in review_subjects()
    ]


def private_selection_outputs(pattern):
    """`pattern` for every private-selection method and seed on the Table 1 run."""
    return expand(
        pattern,
        **{key: PAPER_TABLES["table1"][key] for key in ("dataset", "setting", "idset")},
        method=PRIVATE_SELECTION["methods"],
        seed=PRIVATE_SELECTION["seeds"],
    )


def privacy_utility_measures(wildcards):
    """The utility measures of the plotted run, where the plot's utility axis is the downstream F1."""
    if config["plots"]["utility_axis"] != "downstream_f1":
        return []
    return "results/{dataset}/{setting}/{idset}/utility/measures.parquet".format(
        dataset=wildcards.dataset,
        setting=config["plots"]["setting"],
        idset=config["plots"]["idset"],
    )
