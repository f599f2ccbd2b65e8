# Scheduler resources of the model jobs (mem_mb, runtime in minutes, gpu, gpu_memory_mb), from the
# cost model of plainsight.scheduling, the one the cost plan (plainsight.report.plan) reads too.
# Every other rule is cheap and runs on the submit host of a cluster.

import errno
import glob
import math
import os

import yaml

from plainsight import scheduling

JOB_RESOURCES = config["resources"]
GPUS_PER_JOB = JOB_RESOURCES["gpus_per_job"]
MODEL_ID = config["model"]["name_or_path"]
with open(JOB_RESOURCES["model_shapes"], encoding="utf-8") as shapes_file:
    MODEL_SHAPES = yaml.safe_load(shapes_file)


localrules:
    download_tab,
    generate_tab,
    ingest,
    detect_presidio,
    control_codes,
    fictional_codes,
    codes,
    convert_embedded_model,
    privacy_metrics,
    table,
    utility,
    privacy_utility_plot,
    corpus_examples,
    utility_table,
    utility_plots,
    all_tables,
    plan,
    all,


# GPU memory needs resources.gpu_memory_gb when the slots are `auto`; without it, none is requested.
PLANS_GPU_MEMORY = GPUS_PER_JOB > 0 and (
    config["generation"]["batch_size"] != "auto" or JOB_RESOURCES["gpu_memory_gb"]
)


def job_segments(input):
    """Segments of a split as the scheduler counts them, once the job's inputs exist: at most the bound
    of the job's control codes (or the dataset's largest built ones) by file size, else
    `resources.planned_segments`, else `scheduling.ASSUMED_SEGMENTS`."""

    def count(dataset, split):
        missing = [path for path in input if not os.path.exists(path)]
        if missing:  # Snakemake shows <TBD> and asks again when the job's inputs exist
            raise FileNotFoundError(errno.ENOENT, "not built yet", missing[0])
        codes = (
            [input.codes]
            if "codes" in input.keys()
            else glob.glob(CODES.format(dataset=dataset, setting="*", idset="*"))
        )
        if codes:
            largest = max(os.path.getsize(path) for path in codes)
            return scheduling.segments_upper_bound(largest / scheduling.MB)
        planned = (JOB_RESOURCES["planned_segments"] or {}).get(dataset, {})
        return planned.get(split, scheduling.ASSUMED_SEGMENTS)

    return count


def job_costs(input=None):
    return scheduling.CostModel(
        CONFIG_SETTINGS, MODEL_SHAPES, job_segments(input or {}), registry
    )


def runtime(rule_name):
    """`resources.runtime` of a rule's jobs (minutes); evaluated once the job's inputs exist."""
    return lambda wildcards, input: job_costs(input).runtime_minutes(
        rule_name, dict(wildcards.items())
    )


def mem_mb(rule_name):
    """`resources.mem_mb` of a rule's jobs: host memory, from the model and the batch shapes."""
    return lambda wildcards: job_costs().host_mb(rule_name, dict(wildcards.items()))


def gpu_memory_mb(rule_name):
    """`resources.gpu_memory_mb` of a rule's jobs: recorded with each job, and named if it runs out."""

    def estimate(wildcards):
        if not PLANS_GPU_MEMORY:
            return 0
        return math.ceil(
            job_costs().gpu_bytes(rule_name, dict(wildcards.items())) / scheduling.MB
        )

    return estimate
