# A dataset's config block and its source files, for rule ingest (data.smk).

import os

from plainsight.data.sources import GENERATED_TAB_FOLDER, TAB_SPLITS, source_files

# Set for the dry run of a cost plan (plainsight.report.plan): a user's source file that is not on
# this machine yet is left out of the DAG's inputs, so a target can be planned before the data arrives.
PLANNING = os.environ.get("PLAINSIGHT_PLANNING") == "1"


def dataset_config(wildcards):
    """The config block (`datasets.<name>`) of a job's dataset."""
    return config["datasets"][wildcards.dataset]


def dataset_split(wildcards):
    """The `split` of a job's dataset: `coin` where its units were drawn into their splits by a coin (the
    text attacks are then judged on their own AUC)."""
    return CONFIG_SETTINGS.datasets[wildcards.dataset].split or "given"


def raw_inputs(wildcards):
    """The user-facing source files of one dataset (`source: generated`: rule generate_tab's output)."""
    dataset = dataset_config(wildcards)
    files = source_files(wildcards.dataset, dataset)
    if PLANNING and dataset["source"] == "path":
        return [path for path in files if os.path.exists(path)]
    return files
