# Shared wildcard constraints and input helpers.

DATASETS = list(config["datasets"])
SETTINGS = config["settings"]
IDENTIFIER_SETS = config["identifier_sets"]
SEEDS = config["seeds"]


wildcard_constraints:
    dataset="|".join(DATASETS),
    setting="known|unknown",
    idset="direct|quasi|both",
    seed=r"\d+",
    shard=r"\d+",
    split="train|dev|test",


def dataset_config(wildcards):
    return config["datasets"][wildcards.dataset]


def raw_inputs(wildcards):
    """The user-facing source files of one dataset."""
    dataset = dataset_config(wildcards)
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
