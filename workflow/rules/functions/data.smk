# The source files of a dataset, for rule ingest (data.smk).

import os

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
