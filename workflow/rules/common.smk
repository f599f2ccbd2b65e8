# Shared wildcard constraints and input helpers; method names come from the method registry.

import os
import sys
from pathlib import Path

import yaml

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.generation.params import generation_params
from plainsight.data.generic import check_known_setting
from plainsight.audit import POSITIVE_CONTROL
from plainsight.methods import registry
from plainsight.model_settings import check_placement, is_embedded
from plainsight.report.table_specs import table_settings
from plainsight.training.params import training_params

for method_name in config["methods"]:
    registry.method(
        method_name
    )  # an unknown name stops here, with the known ones listed

IN_CONTEXT_METHOD = registry.wildcard_pattern("in_context")
TRAINED_METHOD = registry.wildcard_pattern("trained", variants=False)
PRIVATE_SELECTION_METHOD = registry.wildcard_pattern("private_selection")
# the methods whose corpora the generate rules decode, in shards where configured
DECODED_METHOD = f"{IN_CONTEXT_METHOD}|{TRAINED_METHOD}"
DATASETS = list(config["datasets"])
SETTINGS = config["settings"]
IDENTIFIER_SETS = config["identifier_sets"]
SEEDS = config["seeds"]

# a generic corpus without spans has no known private values: `known` on it stops here
check_known_setting(config["datasets"], SETTINGS)


wildcard_constraints:
    dataset="|".join(DATASETS),
    setting="known|unknown",
    idset="direct|quasi|both",
    seed=r"\d+",
    shard=r"\d+",
    split="train|dev|test",


def dataset_config(wildcards):
    return config["datasets"][wildcards.dataset]


# Set for the dry run of a cost plan (plainsight.report.plan): a user's source file that is not on
# this machine yet is left out of the DAG's inputs, so a target can be planned before the data arrives.
PLANNING = os.environ.get("PLAINSIGHT_PLANNING") == "1"


def raw_inputs(wildcards):
    """The user-facing source files of one dataset."""
    dataset = dataset_config(wildcards)
    if PLANNING and dataset["source"] == "path":
        return [path for path in user_source_files(dataset) if os.path.exists(path)]
    return user_source_files(dataset)


def user_source_files(dataset):
    if dataset["format"] == "tab":
        folder = {
            "demo": "resources/demo/tab",
            "github": "results/downloads/tab",
            "path": dataset.get("path"),
        }[dataset["source"]]
        return [f"{folder}/echr_{split}.json" for split in ("train", "dev", "test")]
    if dataset["source"] == "demo":
        return ["resources/demo/mimic/NOTEEVENTS.csv"]
    return [dataset["path"]]


# Models


def model_source(name_or_path):
    """What a job loads: the converted folder of an embedded model, else the id or path itself."""
    if is_embedded(name_or_path):
        return f"results/models/base/{name_or_path}"
    return name_or_path


def model_input(name_or_path):
    """The converted folder as a job input, so it is built first; nothing for hub ids."""
    return [model_source(name_or_path)] if is_embedded(name_or_path) else []


def variant_model(wildcards):
    """The model a method runs with: `model`, or `model_large` for a `.large` method variant."""
    return config[registry.model_config_key(wildcards.method)]["name_or_path"]


# Where every model job runs, as configured: each job resolves `auto` on its own machine, so a job
# reruns when the setting changes, not when it runs on another machine.
MODEL_PLACEMENT = {key: config["model"][key] for key in ("device", "dtype")}
# what in-context methods draw fictional values from besides the pools (codes.surrogates)
SURROGATE_LISTS = (
    config["codes"]["surrogate_lists"]
    if config["codes"]["surrogates"] == "format_preserving"
    else []
)
if check_placement(MODEL_PLACEMENT) and config["resources"]["gpus_per_job"] == 0:
    # the jobs run here on a named CUDA device: one that is not visible stops the run now
    from plainsight.models import resolve_placement

    resolve_placement(MODEL_PLACEMENT)


# Control codes


def code_sources(wildcards):
    """Where a setting's private values come from: gold spans (known) or Presidio (unknown)."""
    if wildcards.setting == "known":
        return f"results/{wildcards.dataset}/spans.parquet"
    return f"results/{wildcards.dataset}/unknown/detected.parquet"


# Synthetic corpora and their shards. With one shard the generate rules write the corpus itself;
# with more, each job writes one shard and concat_shards joins them. Shard files are kept (not
# temp): a lost corpus is joined again without generating again. The shard count is in their
# name, so shards written with another count are never mixed in.

CORPUS = "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}.parquet"
GENERATION_SHARDS = config["generation"]["shards"]
SHARD = (
    "results/{dataset}/{setting}/{idset}/synthetic/{method}/shards/"
    f"seed{{seed}}_shard{{shard}}of{GENERATION_SHARDS}.parquet"
)
GENERATED = CORPUS if GENERATION_SHARDS == 1 else SHARD
SHARD_SUFFIX = (
    "" if GENERATION_SHARDS == 1 else "_shard{shard}"
)  # in log and benchmark names


def generation_shard(wildcards):
    """Which shard of its corpus a generate job writes (index 0-based)."""
    return {"index": int(getattr(wildcards, "shard", 0)), "count": GENERATION_SHARDS}


# Training-free private generators (`private_selection`): their corpora, guarantees and privacy
# metrics on the Table 1 run are in results/tables/all, not in rule all. Each method's settings are
# the config block of its name.

PRIVATE_SELECTION = config["private_selection"]
registry.check_family(
    PRIVATE_SELECTION["methods"], "private_selection", "private_selection.methods"
)


def private_selection_outputs(pattern):
    """`pattern` for every private-selection method and seed on the Table 1 run."""
    return expand(
        pattern,
        **{key: PAPER_TABLES["table1"][key] for key in ("dataset", "setting", "idset")},
        method=PRIVATE_SELECTION["methods"],
        seed=PRIVATE_SELECTION["seeds"],
    )


def selection_settings(wildcards):
    """The config block of a private-selection method: the block of its name."""
    return config[registry.base_method(wildcards.method)]


def selection_pii(wildcards):
    """The PII patterns a seed-rewriting method redacts with; nothing for the others."""
    if registry.method(wildcards.method).rewrites_seeds:
        return selection_settings(wildcards)["pii_patterns"]
    return []


def selection_corpus(wildcards):
    """A private-selection method's corpus, from which its MAUVE texts are taken; nothing for the others."""
    if registry.method(wildcards.method).private_selection:
        return CORPUS.format(**wildcards)
    return []


# Evaluation


def trained_adapter(wildcards):
    """The adapter a trained method writes with; nothing for in-context methods."""
    if registry.method(wildcards.method).trained:
        return "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}".format(
            **wildcards
        )
    return []


# Tables

PAPER_TABLES = yaml.safe_load(open(config["tables"]["paper"], encoding="utf-8"))[
    "tables"
]


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


# Utility table: its runs, and the synthetic corpora of one run

UTILITY_RUNS = config["utility"]["runs"]
UTILITY_MEASURES = [
    "results/{dataset}/{setting}/{idset}/utility/measures.parquet".format(**run)
    for run in UTILITY_RUNS
]
UTILITY_PLOTS = [
    f"results/plots/{plot}_{run['dataset']}_{run['setting']}_{run['idset']}.png"
    for run in UTILITY_RUNS
    for plot in ("utility_lengths", "downstream_f1")
]


def utility_corpus_keys(with_private_selection=False):
    """(method, seed) of every corpus a utility run reads, in the config's order; with the
    private-selection methods at their own seeds (the only corpora they write) when asked.
    """
    keys = [
        {"method": method, "seed": seed}
        for method in config["methods"]
        for seed in config["utility"]["seeds"]
    ]
    if with_private_selection:
        keys += [
            {"method": method, "seed": seed}
            for method, seed in ALL_METHODS_SELECTION_RUNS
        ]
    return keys


def utility_corpora(wildcards):
    return [CORPUS.format(**wildcards, **key) for key in utility_corpus_keys()]


def all_methods_utility_corpora(wildcards):
    return [
        CORPUS.format(**wildcards, **key)
        for key in utility_corpus_keys(with_private_selection=True)
    ]


def privacy_utility_measures(wildcards):
    """The utility measures of the plotted run, where the plot's utility axis is the downstream F1."""
    if config["plots"]["utility_axis"] != "downstream_f1":
        return []
    return "results/{dataset}/{setting}/{idset}/utility/measures.parquet".format(
        dataset=wildcards.dataset,
        setting=config["plots"]["setting"],
        idset=config["plots"]["idset"],
    )


# Release bundles


def release_seeds(method):
    """The seeds a method's bundle holds: `private_selection.seeds` for a private-selection method (the
    only corpora it writes), else `seeds`."""
    if registry.method(method).private_selection:
        return PRIVATE_SELECTION["seeds"]
    return SEEDS


def release_runs(pattern):
    """`pattern` filled for every seed of a bundle's dataset, setting, identifier set and method."""

    def runs(wildcards):
        return expand(pattern, seed=release_seeds(wildcards.method), **wildcards)

    return runs


def release_run(wildcards):
    return {
        "dataset": wildcards.dataset,
        "setting": wildcards.setting,
        "idset": wildcards.idset,
    }


def run_audit_table(wildcards):
    """The privacy audit table, where the run (dataset, setting, identifier set) is audited (`audit`)."""
    audited = (
        wildcards.dataset in config["audit"]["datasets"]
        and wildcards.setting in config["audit"]["settings"]
        and wildcards.idset in config["audit"]["identifier_sets"]
    )
    return ["results/tables/privacy_audit.csv"] if audited else []


def release_audit_tables(wildcards):
    """Where a bundle's verdict comes from: the privacy audit table; for a private-selection method on
    the Table 1 run, the methods table (the same gate on its audit record)."""
    selected = registry.method(wildcards.method).private_selection
    if selected and release_run(wildcards) == METHODS_TABLE_RUN:
        return ["results/tables/methods.csv"]
    return run_audit_table(wildcards)


# The generation settings a bundle's card states: the decoding settings of the methods that decode
# from prompts, or a private-selection method's own block (one level of nesting flattened).
RELEASE_GENERATION_SETTINGS = (
    "generations_per_segment",
    "context_documents",
    "max_new_tokens",
    "temperature",
    "top_p",
    "blocking",
    "max_regenerations",
)


def release_generation_settings(wildcards):
    if not registry.method(wildcards.method).private_selection:
        return {key: config["generation"][key] for key in RELEASE_GENERATION_SETTINGS}
    flat = {}
    for key, value in selection_settings(wildcards).items():
        if isinstance(value, dict):
            flat.update({f"{key}.{inner}": v for inner, v in value.items()})
        else:
            flat[key] = value
    return flat


def release_utility_table(wildcards):
    """The utility table, where the bundle's run is measured (`utility.runs`); the all-methods one for
    a private-selection method."""
    if registry.method(wildcards.method).private_selection:
        return [f"{ALL_METHODS_UTILITY}.csv"]
    return (
        ["results/tables/utility.csv"]
        if release_run(wildcards) in config["utility"]["runs"]
        else []
    )


def release_comments(wildcards):
    """Reviewers' comments on the bundle's run, where its review page has comment files: the
    all-methods page's for a private-selection method (the only page that shows it)."""
    subject = (wildcards.dataset, wildcards.setting, wildcards.idset)
    page = (
        ALL_METHODS_PAGE if registry.method(wildcards.method).private_selection else ""
    )
    if subject not in review_subjects() or not review_comment_files(wildcards, page):
        return []
    folder = "results/review/{dataset}/{setting}/{idset}".format(
        **release_run(wildcards)
    )
    return [str(Path(folder, page, "comments.parquet"))]


def guarantee_record_pattern(method):
    """Where a method's seeds state their formal guarantee: a DP-SGD adapter (its training.json holds
    it) or a private-selection corpus's guarantee record; None for a method without one.
    """
    spec = registry.method(method)
    if spec.differentially_private:
        return "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}"
    if spec.private_selection:
        return "results/{dataset}/{setting}/{idset}/synthetic/{method}/seed{seed}_privacy.json"
    return None


def release_guarantees(wildcards):
    """The guarantee records of a bundle's seeds; nothing for a method without one."""
    pattern = guarantee_record_pattern(wildcards.method)
    return release_runs(pattern)(wildcards) if pattern else []


# Review pages


def review_subjects():
    """(dataset, setting, idset) of every privacy table: each gets a review page."""
    subjects = {
        (spec["dataset"], spec["setting"], spec["idset"])
        for table, spec in PAPER_TABLES.items()
        if is_privacy_table(table)
    }
    return sorted(subjects)


def review_runs_all_methods(wildcards):
    """The corpora of the all-methods review page: the review page's, then every private-selection
    corpus of its run (those exist on the Table 1 run only)."""
    runs = review_runs(wildcards)
    if release_run(wildcards) == METHODS_TABLE_RUN:
        runs += [
            (method, int(seed))
            for method, seed in ALL_METHODS_SELECTION_RUNS
            if config["review"]["seeds"] is None or seed in config["review"]["seeds"]
        ]
    return runs


def review_runs(wildcards):
    """(method, seed) of the corpora a review page shows: those the privacy tables of its dataset,
    setting and identifier set read, without model variants; else every method and seed.
    """
    runs = set()
    for table, spec in PAPER_TABLES.items():
        subject = (spec["dataset"], spec["setting"], spec["idset"])
        if is_privacy_table(table) and subject == (
            wildcards.dataset,
            wildcards.setting,
            wildcards.idset,
        ):
            methods = [m for m in table_methods(table) if registry.base_method(m) == m]
            runs.update((m, int(s)) for m in methods for s in table_seeds(table))
    if not runs:
        runs = {(m, int(s)) for m in config["methods"] for s in SEEDS}
    if config["review"]["seeds"] is not None:
        runs = {(m, s) for m, s in runs if s in config["review"]["seeds"]}
    order = {m: n for n, m in enumerate(config["methods"])}
    return sorted(runs, key=lambda run: (order.get(run[0], len(order)), run[1]))


def review_files(pattern, runs=review_runs):
    """An input function: `pattern` (with {method} and {seed}) for every corpus of a review page
    (`runs`: its (method, seed) pairs)."""

    def files(wildcards):
        return [
            pattern.format(
                dataset=wildcards.dataset,
                setting=wildcards.setting,
                idset=wildcards.idset,
                method=method,
                seed=seed,
            )
            for method, seed in runs(wildcards)
        ]

    return files


def review_pages(_wildcards=None):
    return [
        f"results/review/{dataset}/{setting}/{idset}/index.html"
        for dataset, setting, idset in review_subjects()
    ]


def review_comment_files(wildcards, page=""):
    """The comment files reviewers placed for one page (`page`: its sub-folder, "" for the main one)."""
    folder = Path(config["review"]["comments_dir"]) / wildcards.dataset
    return sorted(
        str(path)
        for path in (folder / wildcards.setting / wildcards.idset / page).glob("*.json")
    )


def all_methods_comment_files(wildcards):
    return review_comment_files(wildcards, ALL_METHODS_PAGE)


def table_review_comments(wildcards):
    """The reviewers' comments of a privacy table's corpora, for its notes."""
    if not is_privacy_table(wildcards.table):
        return []
    spec = PAPER_TABLES[wildcards.table]
    return f"results/review/{spec['dataset']}/{spec['setting']}/{spec['idset']}/comments.parquet"


# Privacy audit: the audited runs, and their adapters and distances

AUDIT = config["audit"]
AUDITED_TRAINED = [m for m in config["methods"] if registry.method(m).trained]
# Every corpus of an audited run, and the positive control the audit builds beside them.
AUDITED_CORPORA = [*config["methods"], POSITIVE_CONTROL]


# The audited methods with a formal (epsilon, delta) claim: the audit tests their leaks against it.
AUDITED_GUARANTEED = [
    m for m in config["methods"] if registry.method(m).differentially_private
]


def audited_guarantees(wildcards):
    """The adapters of one run's DP methods: their training.json holds the claim."""
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        method=AUDITED_GUARANTEED,
        **wildcards,
    )


def run_corpora(pattern):
    """An input function: `pattern` (with {method}) for every configured method of one run and seed."""

    def files(wildcards):
        return expand(pattern, method=config["methods"], **wildcards)

    return files


def audited_adapters(wildcards):
    """The adapters of the trained methods of one run, in the configured method order."""
    return expand(
        "results/{dataset}/{setting}/{idset}/models/{method}/seed{seed}",
        method=AUDITED_TRAINED,
        **wildcards,
    )


AUDIT_RUNS = [
    {"dataset": d, "setting": s, "idset": i, "method": m, "seed": seed}
    for d in AUDIT["datasets"]
    for s in AUDIT["settings"]
    for i in AUDIT["identifier_sets"]
    for m in config["methods"]
    for seed in AUDIT["seeds"]
]
AUDIT_SCORE_RUNS = [
    {"dataset": d, "setting": s, "idset": i, "seed": seed}
    for d in AUDIT["datasets"]
    for s in AUDIT["settings"]
    for i in AUDIT["identifier_sets"]
    for seed in AUDIT["seeds"]
]
AUDIT_RUN = "results/{dataset}/{setting}/{idset}"
AUDIT_PLOTS = [
    f"results/plots/privacy_audit_{kind}_{run['dataset']}_{run['setting']}_{run['idset']}_seed{run['seed']}.png"
    for run in AUDIT_SCORE_RUNS
    for kind in ("roc", "distances")
]


def audited_distances(wildcards):
    """The closest-record distances of every method of one audited run."""
    return expand(
        "results/{dataset}/{setting}/{idset}/audit/{method}/seed{seed}_distances.parquet",
        method=config["methods"],
        **wildcards,
    )


# Canaries in the released text (plainsight.audit.canaries, canary_attacks, canary_table): a corpus
# sentence with a suffix at a target perplexity, half of them inserted into training segments; each
# method writes its own canary corpus (its adapter trained, its prompts filled, on that set), never
# Table 1's. results/tables/canaries, built by results/tables/all, not by rule all.

CANARIES = AUDIT["canaries"]
CANARY_RUN = "results/{dataset}/{setting}/{idset}/canaries/seed{seed}"
CANARY_RUNS = AUDIT_RUNS


def canary_adapter_input(wildcards):
    """A trained method's canary adapter and the base model, for the likelihood-ratio attack."""
    if not registry.method(wildcards.method).trained:
        return {}
    return {
        "adapter": "{run}/models/{method}".format(
            run=CANARY_RUN.format(**wildcards), method=wildcards.method
        ),
        "model": model_input(config["model"]["name_or_path"]),
    }


def canary_dp_record(run):
    """The training.json of a run's DP-SGD canary adapter (its accountant's claim); '' for other methods."""
    if not registry.method(run["method"]).differentially_private:
        return ""
    return "{run}/models/{method}/training.json".format(
        run=CANARY_RUN.format(**run), method=run["method"]
    )


# The private-selection corpora that the released_text_audit rule leaves out (it audits config `methods`);
# their own job per run and seed, with no positive control (it copies an in-context corpus).
AUDITED_PRIVATE_SELECTION = [
    m for m in PRIVATE_SELECTION["methods"] if m not in config["methods"]
]
SELECTION_AUDIT = (
    "results/{{dataset}}/{{setting}}/{{idset}}/audit/{method}/seed{{seed}}"
)


# Every method side by side (plainsight.report.methods_table): the configured methods and the
# private-selection ones on the Table 1 run at the audit seeds. Built by results/tables/all.
METHODS_TABLE_RUN = {
    key: PAPER_TABLES["table1"][key] for key in ("dataset", "setting", "idset")
}
METHODS_TABLE_RUNS = [
    {"method": m, "seed": seed}
    for m in [*config["methods"], *AUDITED_PRIVATE_SELECTION]
    for seed in AUDIT["seeds"]
]
# The Table 1 run with every method, the private-selection ones too: its utility measures, utility
# table and review page (a sub-folder of the run's page). Rule all's hold the configured methods only.
ALL_METHODS_PAGE = "all_methods"
# (method, seed) of the private-selection corpora they add
ALL_METHODS_SELECTION_RUNS = [
    (method, seed)
    for method in AUDITED_PRIVATE_SELECTION
    for seed in PRIVATE_SELECTION["seeds"]
]
ALL_METHODS_UTILITY = "results/tables/utility_all_methods"
ALL_METHODS_MEASURES = (
    "results/{dataset}/{setting}/{idset}/utility/all_methods_measures.parquet".format(
        **METHODS_TABLE_RUN
    )
)
# The jobs that write a method's corpus, by family: (rule, whether it runs per shard).
CORPUS_JOBS = {
    "in_context": [("generate_icl", True)],
    "trained": [("train_adapter", False), ("generate_trained", True)],
    "private_selection": [("generate_private_selection", False)],
}


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
