"""The cost model of the model jobs: one estimate per rule of the work (tokens), the host memory,
the run time and the GPU memory, read by the scheduler (the rules' `resources`,
workflow/rules/scheduling.smk) and by the cost plan (`plainsight.report.plan`). Free of torch and
transformers, so that the Snakefile parses on a login node without them.

Memory: the Python and torch runtime, the weights (float32, as `plainsight.models.load_model`
loads them; twice where CPU decoding packs a copy, `plainsight.generation.packed_linear`) and, when the
job runs on the CPU, activations and KV cache per token of the batch. Per-token memory grows
with layers x hidden size, which across causal LMs from 135M to 8B parameters stays close to
1.45 x sqrt(parameters). The activation factors are calibrated on the embedded SmolLM2-135M
(peak RSS: generation 1.7-2.0 GB with its packed weights, ft_mask 2.6 GB, dpsgd 3.1 GB).

Run time: tokens to produce or train on, divided by a measured throughput, times a margin.

GPU memory (`resources.gpu_memory_mb` and the cost plan): the weights in the job's dtype, plus per job kind
the KV cache of the decoding slots, or the activations a training step keeps for backward
(about 34 bytes per token, hidden unit and layer in 16-bit precision with fused attention, after
Korthikanti et al. 2022), the float32 logits of the loss, and the float32 trainable parameters
with their gradients and Adam moments (per-sample gradients too under DP-SGD).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from plainsight.errors import InputError

MB = 2**20
GIB = 2**30
BYTES_PER_PARAMETER = 4  # float32 weights
RUNTIME_OVERHEAD_MB = 600  # Python, torch, transformers and pandas loaded, before the model
LAYER_WIDTH_PER_SQRT_PARAMETER = 1.45  # layers x hidden size ~ 1.45 x sqrt(parameters)
GENERATION_ACTIVATION_FACTOR = 2  # KV cache (keys and values) plus the current step
TRAINING_ACTIVATION_FACTOR = (
    48  # saved activations, logits of the prefixed and the base pass, per-sample gradients
)
STARTUP_MINUTES = 2  # imports, loading the model, reading the inputs
# Parquet bytes of one control-code row are at least this many (96-100 on the demo data),
# so a codes file's size bounds its number of segments from above.
MIN_CODE_PARQUET_BYTES_PER_SEGMENT = 64
# The scheduler's count of a split's segments before any control codes of the dataset exist and
# without resources.planned_segments (the cost plan asks for planned_segments instead).
ASSUMED_SEGMENTS = 100

_SIZE_IN_NAME = re.compile(r"(\d+(?:\.\d+)?)([mb])(?![a-z])", re.IGNORECASE)


# gpt2-style config keys and their Llama-style names
_CONFIG_ALIASES = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads"}
ACTIVATION_BYTES_PER_TOKEN_UNIT = 34  # saved for backward, per token x hidden unit x layer (16-bit)
TRAINABLE_COPIES = 4  # float32 trainable parameter, gradient and two Adam moments
LORA_WIDTHS_PER_LAYER = 18  # in + out widths of every linear layer of a block, in hidden sizes (gated MLP)
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

# Decoding slots (`plainsight.generation.slots` preallocates every layer's keys and values per slot).
AUTO = "auto"
CPU_AUTO_SLOTS = 4  # `batch_size: auto` on the CPU, where a step is bound by reading the weights
FREE_MEMORY_MARGIN = 0.2  # share of the free GPU memory kept out of the KV cache


@dataclass(frozen=True)
class ModelShape:
    """What the estimates need of a decoder-only transformer."""

    parameters: int
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int

    @classmethod
    def from_config(cls, config: Mapping) -> ModelShape:
        """From transformers config keys (a config.json, or an entry of resources/model_shapes.yaml)."""
        config = {_CONFIG_ALIASES.get(key, key): value for key, value in config.items()}
        hidden, heads = config["hidden_size"], config.get("num_attention_heads", 1)
        head_dim = config.get("head_dim") or hidden // heads
        kv_heads = config.get("num_key_value_heads") or heads
        attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
        # gate, up and down projections; gpt2 and the BERT family: up and down
        gated = config.get("model_type") not in ("gpt2", "bert", "roberta")
        mlp = (3 if gated else 2) * hidden * (config.get("intermediate_size") or 4 * hidden)
        embeddings = (
            (config["vocab_size"] + config.get("n_positions", 0))
            * hidden
            * (1 if config.get("tie_word_embeddings", True) else 2)
        )
        layers = config["num_hidden_layers"]
        return cls(
            embeddings + layers * (attention + mlp), layers, hidden, kv_heads, head_dim, config["vocab_size"]
        )

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.head_dim


def model_shape(name_or_path: str, known_shapes: Mapping[str, Mapping] | None = None) -> ModelShape | None:
    """The shape from a model folder's config.json, else from `known_shapes` by name; None if neither
    has it."""
    config_file = Path(name_or_path) / "config.json"
    if config_file.is_file():
        return ModelShape.from_config(json.loads(config_file.read_text(encoding="utf-8")))
    if known_shapes and name_or_path in known_shapes:
        return ModelShape.from_config(known_shapes[name_or_path])
    return None


def model_parameters(name_or_path: str, known_shapes: Mapping[str, Mapping] | None = None) -> int:
    """Parameter count from `model_shape`, else from the size in the name (-135M, -1.3B)."""
    shape = model_shape(name_or_path, known_shapes)
    if shape is not None:
        return shape.parameters
    sizes = _SIZE_IN_NAME.findall(Path(name_or_path).name)
    if not sizes:
        raise ValueError(
            f"cannot tell the parameter count of model {name_or_path!r}: set resources.model_parameters"
        )
    number, unit = sizes[-1]
    return round(float(number) * (1e6 if unit.lower() == "m" else 1e9))


def memory_mb(
    parameters: int,
    sequences: int,
    tokens_per_sequence: int,
    activation_factor: float,
    on_gpu: bool,
    headroom: float,
    weight_copies: int = 1,
) -> int:
    """Host memory of a model job; on a GPU the activations live in GPU memory. `weight_copies`
    counts what the job holds per weight: gradients and optimizer moments, or packed layers."""
    weights = weight_copies * parameters * BYTES_PER_PARAMETER
    activations = 0.0
    if not on_gpu:
        bytes_per_token = (
            LAYER_WIDTH_PER_SQRT_PARAMETER * math.sqrt(parameters) * BYTES_PER_PARAMETER * activation_factor
        )
        activations = sequences * tokens_per_sequence * bytes_per_token
    return math.ceil(headroom * (RUNTIME_OVERHEAD_MB + (weights + activations) / MB))


def runtime_minutes(tokens: float, tokens_per_second: float, margin: float) -> int:
    return math.ceil(STARTUP_MINUTES + margin * tokens / tokens_per_second / 60)


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, bytes_per_value: int, tokens: int) -> int:
    """Bytes of the keys and values of `tokens` cache positions of one sequence."""
    return layers * kv_heads * head_dim * 2 * bytes_per_value * tokens


def slots_that_fit(free_bytes: int, bytes_per_slot: int, margin: float = FREE_MEMORY_MARGIN) -> int:
    """How many slots of `bytes_per_slot` fit in `free_bytes` less the `margin` share of it."""
    return int(free_bytes * (1 - margin)) // bytes_per_slot


def cpu_slots(batch_size: int | str) -> int:
    """The slots of a job on the CPU: the configured number, or `CPU_AUTO_SLOTS` for `auto`."""
    return CPU_AUTO_SLOTS if batch_size == AUTO else batch_size


def slot_cache_positions(longest_prompt: int, max_new_tokens: int) -> int:
    """Positions per batch slot of the generation KV cache: a live row spans at most the longest prompt
    plus the new tokens; a quarter more lets the window run on for a while before it is copied back
    to the front."""
    span = longest_prompt + max_new_tokens
    return span + span // 4 + 1


def segments_upper_bound(codes_mb: float) -> int:
    """At most this many segments in a control-code Parquet file of this size."""
    return max(1, math.ceil(codes_mb * MB / MIN_CODE_PARQUET_BYTES_PER_SEGMENT))


# --- GPU memory (the cost plan) ------------------------------------------------------------------


def gpu_training_bytes(
    shape: ModelShape,
    dtype_bytes: int,
    sequences: int,
    tokens: int,
    trainable_parameters: int,
    logits_passes: int = 1,
    per_sample_gradients: bool = False,
    frozen_weights: bool = True,
) -> int:
    """One training step: the weights (frozen in `dtype_bytes`, or trained in float32 with gradients
    and Adam moments), the trainable parameters' float32 copies, the activations kept for backward,
    and the float32 log-softmax of `logits_passes` forward passes (2 for ft_mask's base pass)."""
    weights = shape.parameters * (dtype_bytes if frozen_weights else 4 * TRAINABLE_COPIES)
    trainable = trainable_parameters * 4 * (TRAINABLE_COPIES + (sequences if per_sample_gradients else 0))
    positions = sequences * tokens
    activations = positions * shape.hidden * shape.layers * ACTIVATION_BYTES_PER_TOKEN_UNIT * dtype_bytes // 2
    logits = logits_passes * positions * shape.vocab * (dtype_bytes + 4 + 4)
    return weights + trainable + activations + logits


def gpu_generation_bytes(
    shape: ModelShape, dtype_bytes: int, slots: int, positions: int, prefill_tokens: int
) -> int:
    """Decoding: weights, the slots' KV cache, and the transient activations and float32 logits
    of one prompt's prefill."""
    kv = slots * kv_cache_bytes(shape.layers, shape.kv_heads, shape.head_dim, dtype_bytes, positions)
    prefill = prefill_tokens * shape.hidden * 16 * dtype_bytes + slots * shape.vocab * 4 * 2
    return shape.parameters * dtype_bytes + kv + prefill


def prefix_parameters(shape: ModelShape, virtual_tokens: int, projection_hidden: int | None) -> int:
    """Trainable parameters of a prefix: its key/value rows, or the embedding and MLP that make them."""
    rows = shape.layers * 2 * shape.kv_width
    if not projection_hidden:
        return virtual_tokens * rows
    # the embedding (peft's token_dim: the key/value width), then Linear(token_dim, H), Tanh, Linear(H, rows)
    return (
        virtual_tokens * shape.kv_width
        + shape.kv_width * projection_hidden
        + projection_hidden
        + projection_hidden * rows
        + rows
    )


# --- the model jobs of the workflow, rule by rule ------------------------------------------------

GENERATION_RULES = ("generate_icl", "generate_trained", "mauve_texts", "generate_private_selection")
TRAINING_RULES = ("train_adapter", "perplexity", "base_perplexity")
# featurizer, classifier and scoring jobs: MAUVE's, the downstream task's (a fine-tuned encoder, or seconds of
# TF-IDF), and the membership-inference scores (forward passes of the base model and each adapter)
SCORING_RULES = ("mauve", "utility_measures", "membership_scores")
# the canary audit's jobs: three run another rule's script on the canaried set, as costly as that rule's
CANARY_TWINS = {
    "canary_adapter": "train_adapter",
    "canary_generations": "generate_trained",
    "canary_generations_in_context": "generate_icl",
}
# and two pass the canaries through the base model (and a trained method's adapter)
CANARY_SCORING_RULES = ("canary_docs", "canary_attacks")
# forward passes per canary while its suffix is drawn, one per suffix token (resources/canaries.yaml:
# suffix_tokens, 12) and the check; and a canary's tokens with the code prompt it is scored after: bounds
CANARY_SUFFIX_PASSES = 16
CANARY_TOKENS = 80
# the all-methods utility measures: rule utility_measures (`use rule ... with:`) on the private-selection
# corpora too
ALL_METHODS_TWINS = {"utility_measures_all_methods": "utility_measures"}
MODEL_RULES = (
    *GENERATION_RULES,
    *TRAINING_RULES,
    *SCORING_RULES,
    *CANARY_TWINS,
    *ALL_METHODS_TWINS,
    *CANARY_SCORING_RULES,
)


def twin_of(rule: str) -> str:
    """The rule whose work a job does: itself, or the rule a canary or all-methods twin runs."""
    return CANARY_TWINS.get(rule, ALL_METHODS_TWINS.get(rule, rule))


class MethodTraits(Protocol):
    """What the estimates need of a method (`plainsight.methods.registry.Method`)."""

    masked_objective: bool
    differentially_private: bool
    trained: bool
    rewrites_seeds: bool

    def regenerations(self, generation: Mapping) -> int: ...


class MethodRegistry(Protocol):
    """`plainsight.methods.registry` (the module), which this shared module may not import."""

    def method(self, name: str) -> MethodTraits: ...

    def model_config_key(self, name: str) -> str: ...

    def base_method(self, name: str) -> str: ...


@dataclass
class CostModel:
    """Estimates of the model jobs of one config, by rule and wildcards: the work (tokens at the
    configured throughput), the host memory request and the GPU memory. `segments(dataset, split)`
    counts (or bounds) the segments of a split; `methods` is the method registry."""

    config: Mapping
    shapes: Mapping[str, Mapping]
    segments: Callable[[str, str], int]
    methods: MethodRegistry
    notes: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        self.resources = self.config["resources"]
        self.on_gpu = self.resources["gpus_per_job"] > 0
        self.base_model = self.config["model"]["name_or_path"]
        self.dtype_bytes = DTYPE_BYTES.get(
            self.config["model"]["dtype"], 2 if self.on_gpu else 4
        )  # auto: 16-bit on a GPU

    # --- shared pieces ---

    def shape(self, name_or_path: str) -> ModelShape:
        shape = model_shape(name_or_path, self.shapes)
        if shape is None:
            raise ValueError(
                f"no shape for model {name_or_path!r}: add it to resources.model_shapes "
                f"({self.resources['model_shapes']}) or give a folder with its config.json"
            )
        return shape

    def parameters(self, name_or_path: str) -> int:
        """`resources.model_parameters` for `model` when set, else `model_parameters`."""
        if name_or_path == self.base_model and self.resources["model_parameters"]:
            return self.resources["model_parameters"]
        return model_parameters(name_or_path, self.shapes)

    def attempts(self, method: str) -> int:
        return 1 + self.methods.method(method).regenerations(self.config["generation"])

    def model_of(self, method: str) -> str:
        return self.config[self.methods.model_config_key(method)]["name_or_path"]

    def shards(self, wildcards: Mapping[str, str]) -> int:
        return self.config["generation"]["shards"] if "shard" in wildcards else 1

    def slots(self, shape: ModelShape, positions: int, model: str, prompts: int) -> int:
        """Decoding slots: the configured number, or what `batch_size: auto` takes (on a GPU: as many
        as fit the memory the weights leave, at most the job's `prompts`: a freed slot takes the next
        prompt of any group)."""
        generation = self.config["generation"]
        if generation["batch_size"] != AUTO or not self.on_gpu:
            return cpu_slots(generation["batch_size"])
        gpu_gb = self.resources["gpu_memory_gb"]
        if not gpu_gb:
            raise InputError(
                "config",
                "resources.gpu_memory_gb",
                "generation.batch_size: auto on a GPU needs the GPU's memory to plan the slots",
            )
        per_slot = kv_cache_bytes(shape.layers, shape.kv_heads, shape.head_dim, self.dtype_bytes, positions)
        free = gpu_gb * 1e9 - shape.parameters * self.dtype_bytes
        slots = max(1, min(slots_that_fit(free, per_slot), prompts))
        self.notes[f"slots {model}"] = (
            f"`batch_size: auto` takes {slots} slots for {model} on a "
            f"{gpu_gb} GB GPU ({per_slot / GIB:.2f} GiB of KV cache each)"
        )
        return slots

    # --- what each rule's job does ---

    def generation_job(self, rule: str, w: Mapping[str, str]) -> tuple[str, int]:
        """(model, longest prompt in tokens) of a generate job; a trained method's prompt is its prefix
        and code."""
        if rule == "generate_trained":
            prefix = self.config["prefix_tuning"]
            return self.base_model, prefix["num_virtual_tokens"] + prefix["max_length"]
        return self.model_of(w["method"]), self.config["generation"]["max_prompt_tokens"]

    def generations(self, rule: str, w: Mapping[str, str]) -> int:
        """Texts a generate job writes, regenerations included (a bound: each may be regenerated)."""
        generation = self.config["generation"]
        if rule == "generate_icl":
            per_corpus = generation["generations_per_segment"] * len(
                self.config["datasets"][w["dataset"]]["segments"]
            )
            return math.ceil(per_corpus / self.shards(w)) * self.attempts(w["method"])
        if rule == "generate_trained":
            per_corpus = self.config["prefix_tuning"]["generations"] or self.segments(w["dataset"], "train")
            return math.ceil(per_corpus / self.shards(w))
        if rule == "generate_private_selection":
            return self.selection_texts(w)
        samples = self.config["utility"]["mauve"]["samples"] or self.segments(w["dataset"], "test")
        return samples * self.attempts(w["method"])

    def training_batch(self, rule: str) -> tuple[int, int]:
        """(sequences, tokens per sequence) of a training or scoring step."""
        if rule == "train_adapter":
            prefix = self.config["prefix_tuning"]
            return prefix["batch_size"], prefix["num_virtual_tokens"] + prefix["max_length"]
        perplexity = self.config["utility"]["perplexity"]
        return perplexity["batch_size"], perplexity["max_length"]

    def training_tokens(self, rule: str, w: Mapping[str, str]) -> float:
        """Tokens a training job trains on or scores: the adapter's epochs over the fine-tuning segments;
        perplexity's fine-tuning on one corpus (bounded by its generations' tokens), then the test split."""
        dataset = w["dataset"]
        sequences_tokens = self.training_batch(rule)[1]
        if rule == "train_adapter":
            return self.segments(dataset, "train") * self.config["prefix_tuning"]["epochs"] * sequences_tokens
        scoring = self.segments(dataset, "test") * sequences_tokens
        if rule == "base_perplexity":
            return scoring
        return (
            self.config["utility"]["perplexity"]["epochs"]
            * self.corpus_generations(dataset)
            * self.config["generation"]["max_new_tokens"]
            + scoring
        )

    # --- the estimates ---

    def work(self, rule: str, w: Mapping[str, str]) -> tuple[float, float]:
        """(tokens, tokens per second) of a model job."""
        twin = twin_of(rule)
        if twin in GENERATION_RULES:
            tokens = self.generations(twin, w) * self.config["generation"]["max_new_tokens"]
            return tokens + self.surrogate_seconds_as_tokens(twin, w), self.resources[
                "generation_tokens_per_second"
            ]
        if twin in TRAINING_RULES:
            tokens = self.training_tokens(twin, w)
        elif twin == "utility_measures":
            tokens = self.downstream_tokens(w, rule in ALL_METHODS_TWINS)
        elif twin == "membership_scores":
            tokens = self.membership_tokens(w)
        elif twin in CANARY_SCORING_RULES:
            tokens = self.canary_tokens(twin, w)
        else:  # mauve: the featurizer's forward passes over the generated and the real texts
            mauve = self.config["utility"]["mauve"]
            texts = 2 * (mauve["samples"] or self.segments(w["dataset"], "test"))
            tokens = 0 if mauve["featurizer"] == "minilm" else texts * mauve["max_tokens"]
        return tokens, self.resources["training_tokens_per_second"]

    def corpus_generations(self, dataset: str) -> int:
        """Generations of the larger corpus kind: an in-context method's, or a trained method's."""
        generation = self.config["generation"]
        return max(
            generation["generations_per_segment"] * len(self.config["datasets"][dataset]["segments"]),
            self.config["prefix_tuning"]["generations"] or self.segments(dataset, "train"),
        )

    def membership_tokens(self, w: Mapping[str, str]) -> float:
        """Tokens the membership attacks score: balanced members and held-out segments (dev and test; the
        planned sizes name train and test only, so twice the test split), under the base model and each
        trained method's adapter; forward passes only, a third of a training step's work, counted as one."""
        held_out = 2 * self.segments(w["dataset"], "test")
        texts = 2 * min(self.segments(w["dataset"], "train"), held_out)
        models = 1 + sum(self.methods.method(m).trained for m in self.config["methods"])
        return texts * models * self.membership_batch()[1]

    def canary_tokens(self, rule: str, w: Mapping[str, str]) -> float:
        """Tokens the canary jobs pass through a model: `canary_docs` draws every suffix under the base
        model; `canary_attacks` scores every canary under the base model and a trained method's adapter
        (an in-context method's loads no model)."""
        canaries = self.config["audit"]["canaries"]
        count = 2 * canaries["per_repeat"] * len(canaries["repeats"])
        if rule == "canary_docs":
            passes = CANARY_SUFFIX_PASSES
        else:
            passes = 2 if self.methods.method(w["method"]).trained else 0
        return count * passes * CANARY_TOKENS

    def membership_batch(self) -> tuple[int, int]:
        """(sequences, tokens per sequence) of a membership-scoring pass: a training example's length."""
        prefix = self.config["prefix_tuning"]
        return self.config["audit"]["batch_size"], prefix["num_virtual_tokens"] + prefix["max_length"]

    def downstream_tokens(self, w: Mapping[str, str], with_private_selection: bool = False) -> float:
        """The downstream encoder's tokens (0 for TF-IDF + logistic regression, seconds on the CPU):
        fine-tuned on the real training split and on each corpus (methods x utility seeds, and the
        private-selection methods x their seeds where asked), predicting the test split after each (and,
        for silver labels, every corpus); at `model`'s training throughput, an upper bound for a smaller
        encoder."""
        downstream = self.config["utility"]["downstream"]
        if downstream["classifier"] != "encoder":
            return 0
        encoder = downstream["encoder"]
        corpora = len(self.config["methods"]) * len(self.config["utility"]["seeds"])
        if with_private_selection:
            selection = self.config["private_selection"]
            added = [m for m in selection["methods"] if m not in self.config["methods"]]
            corpora += len(added) * len(selection["seeds"])
        generations = corpora * self.corpus_generations(w["dataset"])
        trained = self.segments(w["dataset"], "train") + generations
        predicted = (1 + corpora) * self.segments(w["dataset"], "test") + generations
        return (encoder["epochs"] * trained + predicted) * encoder["max_length"]

    def runtime_minutes(self, rule: str, w: Mapping[str, str], margin: float | None = None) -> int:
        """The scheduler's run time: the work at the throughput, times `resources.runtime_margin`."""
        tokens, tokens_per_second = self.work(rule, w)
        return runtime_minutes(
            tokens, tokens_per_second, self.resources["runtime_margin"] if margin is None else margin
        )

    def hours(self, rule: str, w: Mapping[str, str]) -> float:
        """The plan's hours: the work at the throughput, with no margin."""
        return self.runtime_minutes(rule, w, margin=1.0) / 60

    def host_mb(self, rule: str, w: Mapping[str, str]) -> int:
        """Host memory of a job (`memory_mb`): the batch slots of a generate job (with the packed
        weights on a CPU), or a training step (full fine-tuning also holds gradients and Adam moments)."""
        headroom = self.resources["memory_headroom"]
        rule = twin_of(rule)
        if rule in GENERATION_RULES:
            model, prompt = self.generation_job(rule, w)
            positions = slot_cache_positions(prompt, self.config["generation"]["max_new_tokens"])
            return memory_mb(
                self.parameters(model),
                cpu_slots(self.config["generation"]["batch_size"]),
                positions,
                GENERATION_ACTIVATION_FACTOR,
                self.on_gpu,
                headroom,
                1 if self.on_gpu else 2,
            ) + self.surrogate_host_mb(rule, w)
        if rule in ("membership_scores", *CANARY_SCORING_RULES):
            (sequences, tokens), copies = self.membership_batch(), 1
        elif rule in TRAINING_RULES:
            full = rule != "train_adapter" and self.config["utility"]["perplexity"]["finetune"] == "full"
            (sequences, tokens), copies = self.training_batch(rule), TRAINABLE_COPIES if full else 1
        else:
            raise ValueError(f"rule {rule} requests no host memory of its own")
        return memory_mb(
            self.parameters(self.base_model),
            sequences,
            tokens,
            TRAINING_ACTIVATION_FACTOR,
            self.on_gpu,
            headroom,
            copies,
        )

    def gpu_bytes(self, rule: str, w: Mapping[str, str]) -> int:
        """GPU memory of a job in the job's dtype; 0 for MAUVE's sentence embedder (small, on the CPU)."""
        rule = twin_of(rule)
        if rule in GENERATION_RULES:
            model, prompt = self.generation_job(rule, w)
            shape = self.shape(model)
            positions = slot_cache_positions(prompt, self.config["generation"]["max_new_tokens"])
            slots = self.slots(shape, positions, model, self.generations(rule, w))
            generating = gpu_generation_bytes(shape, self.dtype_bytes, slots, positions, prompt)
            return generating + self.surrogate_gpu_bytes(rule, w)
        if rule in TRAINING_RULES:
            return self.training_gpu_bytes(rule, w)
        if rule in ("membership_scores", *CANARY_SCORING_RULES):
            sequences, tokens = self.membership_batch()
            return gpu_training_bytes(self.shape(self.base_model), self.dtype_bytes, sequences, tokens, 0)
        if rule == "utility_measures":
            downstream = self.config["utility"]["downstream"]
            if downstream["classifier"] != "encoder":
                return 0
            encoder = downstream["encoder"]
            return gpu_training_bytes(
                self.shape(encoder["model"]),
                self.dtype_bytes,
                encoder["batch_size"],
                encoder["max_length"],
                0,
                logits_passes=0,
                frozen_weights=False,
            )
        mauve = self.config["utility"]["mauve"]
        if mauve["featurizer"] == "minilm":
            return 0
        shape = self.shape(mauve["featurizer"])
        return (
            shape.parameters * self.dtype_bytes + mauve["max_tokens"] * shape.hidden * 16 * self.dtype_bytes
        )

    def training_gpu_bytes(self, rule: str, w: Mapping[str, str]) -> int:
        shape = self.shape(self.base_model)
        sequences, tokens = self.training_batch(rule)
        if rule == "train_adapter":
            prefix = self.config["prefix_tuning"]
            method = self.methods.method(w["method"])
            trainable = prefix_parameters(shape, prefix["num_virtual_tokens"], prefix["projection_hidden"])
            return gpu_training_bytes(
                shape,
                self.dtype_bytes,
                sequences,
                tokens,
                trainable,
                logits_passes=2 if method.masked_objective else 1,
                per_sample_gradients=method.differentially_private,
            )
        if rule == "base_perplexity":
            return gpu_training_bytes(shape, self.dtype_bytes, sequences, tokens, 0)
        return self.finetune_gpu_bytes(shape, self.config["utility"]["perplexity"])

    # --- the private-selection jobs: the model's texts, and (RPSG) a surrogate fine-tuned on some ---

    def selection_settings(self, w: Mapping[str, str]) -> Mapping:
        """A private-selection method's config block: the block of its name."""
        return self.config[self.methods.base_method(w["method"])]

    def selection_texts(self, w: Mapping[str, str]) -> int:
        """Texts a private-selection job writes (abstractions counted as long as a text: a bound).
        RPSG: m candidates and two rounds of variations per seed. Aug-PE: per paragraph range, the initial
        samples x (variations + 1), then samples x variations in each round but the last."""
        settings = self.selection_settings(w)
        ranges = len(self.config["datasets"][w["dataset"]]["segments"])
        if self.methods.method(w["method"]).rewrites_seeds:
            train = self.segments(w["dataset"], "train")
            per_range = settings["private_seeds"]
            seeds = train if per_range is None else min(train, per_range * ranges)
            return seeds * (settings["candidates"] + 2)
        samples, variations = settings["samples"], settings["variations"]
        return ranges * samples * (variations + 1 + (settings["rounds"] - 1) * variations)

    def surrogate(self, rule: str, w: Mapping[str, str]) -> Mapping | None:
        """RPSG's surrogate fine-tuning settings for its job; None for every other job."""
        if rule != "generate_private_selection" or not self.methods.method(w["method"]).rewrites_seeds:
            return None
        return self.selection_settings(w)["surrogate"]

    def surrogate_seconds_as_tokens(self, rule: str, w: Mapping[str, str]) -> float:
        """The surrogate's training (epochs over one variant per seed), in new tokens of the job's time."""
        surrogate = self.surrogate(rule, w)
        if surrogate is None:
            return 0.0
        seeds = self.selection_texts(w) / (self.selection_settings(w)["candidates"] + 2)
        trained = (
            surrogate["epochs"]
            * seeds
            * min(surrogate["max_length"], self.config["generation"]["max_new_tokens"])
        )
        return (
            trained
            * self.resources["generation_tokens_per_second"]
            / self.resources["training_tokens_per_second"]
        )

    def surrogate_host_mb(self, rule: str, w: Mapping[str, str]) -> int:
        surrogate = self.surrogate(rule, w)
        if surrogate is None:
            return 0
        return memory_mb(
            self.parameters(self.model_of(w["method"])),
            surrogate["batch_size"],
            surrogate["max_length"],
            TRAINING_ACTIVATION_FACTOR,
            self.on_gpu,
            self.resources["memory_headroom"],
            TRAINABLE_COPIES if surrogate["finetune"] == "full" else 1,
        )

    def surrogate_gpu_bytes(self, rule: str, w: Mapping[str, str]) -> int:
        surrogate = self.surrogate(rule, w)
        if surrogate is None:
            return 0
        return self.finetune_gpu_bytes(self.shape(self.model_of(w["method"])), surrogate)

    def finetune_gpu_bytes(self, shape: ModelShape, settings: Mapping) -> int:
        """A fine-tuning step of a `utility.perplexity`-like block: every weight, or LoRA adapters."""
        full = settings["finetune"] == "full"
        lora = 0 if full else settings["lora_rank"] * shape.layers * LORA_WIDTHS_PER_LAYER * shape.hidden
        return gpu_training_bytes(
            shape,
            self.dtype_bytes,
            settings["batch_size"],
            settings["max_length"],
            lora,
            frozen_weights=not full,
        )
