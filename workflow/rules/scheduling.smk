# Scheduler resources of the model jobs (mem_mb, runtime in minutes, gpu), from the model size,
# the batch shapes and config["resources"]; the estimates live in plainsight.scheduling.
# Every other rule is cheap and runs on the submit host of a cluster.

import math
import os

import yaml

from plainsight import scheduling as estimates
from plainsight.report.plan import DryRunJob, Planner
from plainsight.generation.memory import cpu_slots
from plainsight.generation.slots import slot_cache_positions

JOB_RESOURCES = config["resources"]
GPUS_PER_JOB = JOB_RESOURCES["gpus_per_job"]
BASE_MODEL = config["model"]["name_or_path"]
with open(JOB_RESOURCES["model_shapes"], encoding="utf-8") as shapes_file:
    MODEL_SHAPES = yaml.safe_load(shapes_file)


def model_parameters(name_or_path):
    """`resources.model_parameters` for `model` when set, else the count from the model's folder,
    its entry in `resources.model_shapes`, or the size in its name."""
    if name_or_path == BASE_MODEL and JOB_RESOURCES["model_parameters"]:
        return JOB_RESOURCES["model_parameters"]
    return estimates.model_parameters(name_or_path, MODEL_SHAPES)


localrules:
    download_tab,
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


# GPU memory of a model job, the cost plan's estimate (plainsight.report.plan); it does not depend on
# the corpus sizes, so this planner counts none. Needs resources.gpu_memory_gb with batch_size auto.
GPU_MEMORY_PLANNER = Planner(config, MODEL_SHAPES, segments=lambda dataset, split: 0)
PLANS_GPU_MEMORY = GPUS_PER_JOB > 0 and (
    config["generation"]["batch_size"] != "auto" or JOB_RESOURCES["gpu_memory_gb"]
)


def gpu_memory_mb(rule_name):
    """`resources.gpu_memory_mb` of a rule's jobs: recorded with each job, and named if it runs out."""

    def estimate(wildcards):
        if not PLANS_GPU_MEMORY:
            return 0
        job = DryRunJob(rule_name, dict(wildcards.items()), {})
        return math.ceil(GPU_MEMORY_PLANNER.estimate(job).gpu_bytes / estimates.MB)

    return estimate


def model_job_mem_mb(
    name_or_path, batch_size, tokens_per_sequence, activation_factor, weight_copies=1
):
    return estimates.memory_mb(
        model_parameters(name_or_path),
        batch_size,
        tokens_per_sequence,
        activation_factor,
        on_gpu=GPUS_PER_JOB > 0,
        headroom=JOB_RESOURCES["memory_headroom"],
        weight_copies=weight_copies,
    )


def generation_mem_mb(prompt_tokens):
    """The batch slots of the job's model (`model_large` for a `.large` method): the KV cache of
    prompts of at most prompt_tokens, plus the new tokens; on a CPU, the weights packed for decoding too.
    """
    generation = config["generation"]
    positions = slot_cache_positions(prompt_tokens, generation["max_new_tokens"])
    weight_copies = 1 if GPUS_PER_JOB > 0 else 2
    return lambda wildcards: model_job_mem_mb(
        variant_model(wildcards),
        cpu_slots(generation["batch_size"]),  # on a GPU the slots hold no host memory
        positions,
        estimates.GENERATION_ACTIVATION_FACTOR,
        weight_copies,
    )


def training_mem_mb():
    training = config["prefix_tuning"]
    return model_job_mem_mb(
        BASE_MODEL,
        training["batch_size"],
        training["num_virtual_tokens"] + training["max_length"],
        estimates.TRAINING_ACTIVATION_FACTOR,
    )


def generation_runtime(generations, tokens_per_generation):
    return estimates.runtime_minutes(
        generations * tokens_per_generation,
        JOB_RESOURCES["generation_tokens_per_second"],
        JOB_RESOURCES["runtime_margin"],
    )


def codes_segments(input):
    """Upper bound on the segments of the job's codes file; Snakemake evaluates it once the file exists."""
    return estimates.segments_upper_bound(os.path.getsize(input.codes) / estimates.MB)


def icl_generation_runtime(wildcards):
    """Each paragraph range gets its generations; a method that blocks values may regenerate each one."""
    generation = config["generation"]
    generations = generation["generations_per_segment"] * len(
        config["datasets"][wildcards.dataset]["segments"]
    )
    attempts = 1 + registry.method(wildcards.method).regenerations(generation)
    return generation_runtime(generations * attempts, generation["max_new_tokens"])


def trained_generation_runtime(wildcards, input):
    """The configured number of generations, or one per fine-tuning sample."""
    generations = config["prefix_tuning"]["generations"] or codes_segments(input)
    return generation_runtime(generations, config["generation"]["max_new_tokens"])


def training_runtime(wildcards, input):
    training = config["prefix_tuning"]
    tokens = (
        codes_segments(input)
        * training["epochs"]
        * (training["num_virtual_tokens"] + training["max_length"])
    )
    return estimates.runtime_minutes(
        tokens,
        JOB_RESOURCES["training_tokens_per_second"],
        JOB_RESOURCES["runtime_margin"],
    )


def perplexity_mem_mb():
    """A fine-tuning batch; full fine-tuning also holds gradients and two Adam moments per weight."""
    perplexity = config["utility"]["perplexity"]
    weight_copies = 4 if perplexity["finetune"] == "full" else 1
    return model_job_mem_mb(
        BASE_MODEL,
        perplexity["batch_size"],
        perplexity["max_length"],
        estimates.TRAINING_ACTIVATION_FACTOR,
        weight_copies,
    )


def perplexity_runtime(wildcards):
    """Fine-tuning on at most one corpus of generations, then scoring as many test tokens again (a bound)."""
    generation, perplexity = config["generation"], config["utility"]["perplexity"]
    generations = max(
        generation["generations_per_segment"]
        * len(config["datasets"][wildcards.dataset]["segments"]),
        config["prefix_tuning"]["generations"] or 0,
    )
    tokens = (perplexity["epochs"] + 1) * generations * generation["max_new_tokens"]
    return estimates.runtime_minutes(
        tokens,
        JOB_RESOURCES["training_tokens_per_second"],
        JOB_RESOURCES["runtime_margin"],
    )


def mauve_texts_runtime(wildcards):
    """One generation per sampled test segment (at most 100 assumed when all are used), maybe regenerated."""
    generation = config["generation"]
    samples = config["utility"]["mauve"]["samples"] or 100
    attempts = 1 + registry.method(wildcards.method).regenerations(generation)
    return generation_runtime(samples * attempts, generation["max_new_tokens"])
