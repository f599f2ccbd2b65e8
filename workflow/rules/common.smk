# What several stages read: the registry's patterns, the config's lists and settings, wildcard
# constraints, the per-dataset files, model and corpus paths, the paper's tables and every table's and
# plot's place. The config's checks and rule all's targets are in the Snakefile; a stage's own names
# in its rule file, its functions in functions/ under its name.

# Only modules free of torch and transformers: the Snakefile parses on a login node without them.
from plainsight.audit.provenance import PROVENANCE, Provenance, mechanism_records
from plainsight.methods import registry
from plainsight.model_settings import is_embedded
from plainsight.report.table_specs import load_table_specs
from plainsight.settings import Settings

# Every block of the config, typed, resolved once: what the jobs and the cost model read.
CONFIG_SETTINGS = Settings.from_config(config)

IN_CONTEXT_METHOD = registry.wildcard_pattern("in_context")
TRAINED_METHOD = registry.wildcard_pattern("trained", variants=False)
PRIVATE_SELECTION_METHOD = registry.wildcard_pattern("private_selection")
# the methods whose corpora the generate rules decode, in shards where configured
DECODED_METHOD = f"{IN_CONTEXT_METHOD}|{TRAINED_METHOD}"
DATASETS = list(config["datasets"])
SETTINGS = config["settings"]
IDENTIFIER_SETS = config["identifier_sets"]
SEEDS = config["seeds"]
AUDIT = config["audit"]
# the privacy metrics' settings as every job that counts leaks reads them
PRIVACY_METRICS = {**config["metrics"], "verbatim_ngram": AUDIT["verbatim_ngram"]}
# which files hold private data and which rules release it under a guarantee (the audit and the bundles)
PRIVACY_PROVENANCE = Provenance.from_yaml(PROVENANCE)


wildcard_constraints:
    dataset="|".join(DATASETS),
    setting="known|unknown",
    idset="direct|quasi|both",
    seed=r"\d+",
    shard=r"\d+",
    split="train|dev|test",


# A dataset's real documents and gold spans (rule ingest), and a run's real control codes (rule
# control_codes): every rule that reads them names them so.
DOCS = "results/{dataset}/docs.parquet"
SPANS = "results/{dataset}/spans.parquet"
CODES = "results/{dataset}/{setting}/{idset}/codes.parquet"


def release_run(wildcards):
    """The run (dataset, setting, identifier set) of a job's wildcards."""
    return {
        "dataset": wildcards.dataset,
        "setting": wildcards.setting,
        "idset": wildcards.idset,
    }


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
MODEL_PLACEMENT = CONFIG_SETTINGS.model.placement()


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


# Training-free private generators (`private_selection`): their corpora, guarantees and privacy
# metrics on the Table 1 run are in results/tables/all, not in rule all. Each method's settings are
# the config block of its name.
PRIVATE_SELECTION = config["private_selection"]
# The private-selection corpora that the released_text_audit rule leaves out (it audits config `methods`);
# their own job per run and seed, with no positive control (it copies an in-context corpus).
AUDITED_PRIVATE_SELECTION = registry.audited_private_selection(CONFIG_SETTINGS)


# Result tables and plots: one folder per dataset, so that the tables of one corpus never overwrite
# another's. Each table is named once here ({dataset} filled by a rule's wildcard or by the run it
# reads); `.csv` and `.md` are added where used.
TABLES = "results/tables/{dataset}"
PLOTS = "results/plots/{dataset}"
PRIVACY_AUDIT_TABLE = f"{TABLES}/privacy_audit"
UTILITY_TABLE = f"{TABLES}/utility"
CANARY_TABLE = f"{TABLES}/canaries"


def dataset_runs(runs, wildcards):
    """The runs (dicts with a dataset) of the dataset of a per-dataset table's wildcards."""
    return [run for run in runs if run["dataset"] == wildcards.dataset]


def utility_plot(plot):
    """A utility plot (utility_lengths, downstream_f1) of one run, with the run's wildcards."""
    return f"{PLOTS}/{plot}_{{setting}}_{{idset}}.png"


def audit_plot(kind):
    """A privacy-audit plot (roc, distances) of one run and seed, with their wildcards."""
    return f"{PLOTS}/privacy_audit_{kind}_{{setting}}_{{idset}}_seed{{seed}}.png"


# The paper's tables (config `tables.paper`; the runs each one reads are in report.smk)
PAPER_TABLES = load_table_specs(config["tables"]["paper"])["tables"]
# The datasets whose runs are audited where a target asks (a review page, a release bundle): `audit.datasets`,
# or every configured dataset where the key is left out, so that a corpus of one's own is audited without
# naming it; and those whose audit tables rule all builds, and whose canary tables results/tables/all
# builds (the listed ones, or Table 1's dataset alone).
AUDITED_DATASETS = CONFIG_SETTINGS.audited_datasets()
RULE_ALL_AUDIT_DATASETS = AUDIT.get("datasets") or [PAPER_TABLES["table1"]["dataset"]]


def paper_table(table):
    """A paper table's path without its suffix, under the dataset its runs read."""
    return f"{TABLES}/{table}".format(dataset=PAPER_TABLES[table]["dataset"])


# Every method side by side (methods_table.smk): the configured methods and the private-selection
# ones on the Table 1 run. Built by results/tables/all.
METHODS_TABLE_RUN = {
    key: PAPER_TABLES["table1"][key] for key in ("dataset", "setting", "idset")
}
METHODS_TABLE = f"{TABLES}/methods".format(**METHODS_TABLE_RUN)
# The Table 1 run with every method, the private-selection ones too: its utility measures, utility
# table and review page (a sub-folder of the run's page). Rule all's hold the configured methods only.
ALL_METHODS_PAGE = "all_methods"
# (method, seed) of the private-selection corpora they add
ALL_METHODS_SELECTION_RUNS = [
    (method, seed)
    for method in AUDITED_PRIVATE_SELECTION
    for seed in PRIVATE_SELECTION["seeds"]
]
ALL_METHODS_UTILITY = f"{TABLES}/utility_all_methods".format(**METHODS_TABLE_RUN)
