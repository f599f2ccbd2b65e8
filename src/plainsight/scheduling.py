"""Memory and run-time estimates of the model jobs, for the scheduler (local or SLURM).

Memory: the Python and torch runtime, the weights (float32, as `plainsight.models.load_model`
loads them; twice where CPU decoding packs a copy, `plainsight.generation.packed_linear`) and, when the
job runs on the CPU, activations and KV cache per token of the batch. Per-token memory grows
with layers x hidden size, which across causal LMs from 135M to 8B parameters stays close to
1.45 x sqrt(parameters). The activation factors are calibrated on the embedded SmolLM2-135M
(peak RSS: generation 1.7-2.0 GB with its packed weights, ft_mask 2.6 GB, dpsgd 3.1 GB).

Run time: tokens to produce or train on, divided by a measured throughput, times a margin.

GPU memory (the cost plan, `plainsight.report.plan`): the weights in the job's dtype, plus per job kind
the KV cache of the decoding slots, or the activations a training step keeps for backward
(about 34 bytes per token, hidden unit and layer in 16-bit precision with fused attention, after
Korthikanti et al. 2022), the float32 logits of the loss, and the float32 trainable parameters
with their gradients and Adam moments (per-sample gradients too under DP-SGD).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

MB = 2**20
BYTES_PER_PARAMETER = 4  # float32 weights
RUNTIME_OVERHEAD_MB = 600  # Python, torch, transformers and pandas loaded, before the model
LAYER_WIDTH_PER_SQRT_PARAMETER = 1.45  # layers x hidden size ~ 1.45 x sqrt(parameters)
GENERATION_ACTIVATION_FACTOR = 2  # KV cache (keys and values) plus the current step
TRAINING_ACTIVATION_FACTOR = 48  # saved activations, logits of the prefixed and the base pass, per-sample gradients
STARTUP_MINUTES = 2  # imports, loading the model, reading the inputs
# Parquet bytes of one control-code row are at least this many (96-100 on the demo data),
# so a codes file's size bounds its number of segments from above.
MIN_CODE_PARQUET_BYTES_PER_SEGMENT = 64

_SIZE_IN_NAME = re.compile(r"(\d+(?:\.\d+)?)([mb])(?![a-z])", re.IGNORECASE)


# gpt2-style config keys and their Llama-style names
_CONFIG_ALIASES = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads"}
ACTIVATION_BYTES_PER_TOKEN_UNIT = 34  # saved for backward, per token x hidden unit x layer (16-bit)
TRAINABLE_COPIES = 4  # float32 trainable parameter, gradient and two Adam moments


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
    def from_config(cls, config: Mapping) -> "ModelShape":
        """From transformers config keys (a config.json, or an entry of resources/model_shapes.yaml)."""
        config = {_CONFIG_ALIASES.get(key, key): value for key, value in config.items()}
        hidden, heads = config["hidden_size"], config.get("num_attention_heads", 1)
        head_dim = config.get("head_dim") or hidden // heads
        kv_heads = config.get("num_key_value_heads") or heads
        attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
        # gate, up and down projections; gpt2 and the BERT family: up and down
        gated = config.get("model_type") not in ("gpt2", "bert", "roberta")
        mlp = (3 if gated else 2) * hidden * (config.get("intermediate_size") or 4 * hidden)
        embeddings = (config["vocab_size"] + config.get("n_positions", 0)) * hidden \
            * (1 if config.get("tie_word_embeddings", True) else 2)
        layers = config["num_hidden_layers"]
        return cls(embeddings + layers * (attention + mlp), layers, hidden, kv_heads, head_dim,
                   config["vocab_size"])

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.head_dim


def model_shape(name_or_path: str, known_shapes: Mapping[str, Mapping] | None = None) -> ModelShape | None:
    """The shape from a model folder's config.json, else from `known_shapes` by name; None if neither has it."""
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
            f"cannot tell the parameter count of model {name_or_path!r}: set resources.model_parameters")
    number, unit = sizes[-1]
    return round(float(number) * (1e6 if unit.lower() == "m" else 1e9))


def memory_mb(parameters: int, sequences: int, tokens_per_sequence: int, activation_factor: float,
              on_gpu: bool, headroom: float, weight_copies: int = 1) -> int:
    """Host memory of a model job; on a GPU the activations live in GPU memory. `weight_copies`
    counts what the job holds per weight: gradients and optimizer moments, or packed layers."""
    weights = weight_copies * parameters * BYTES_PER_PARAMETER
    activations = 0.0
    if not on_gpu:
        bytes_per_token = LAYER_WIDTH_PER_SQRT_PARAMETER * math.sqrt(parameters) * BYTES_PER_PARAMETER * activation_factor
        activations = sequences * tokens_per_sequence * bytes_per_token
    return math.ceil(headroom * (RUNTIME_OVERHEAD_MB + (weights + activations) / MB))


def runtime_minutes(tokens: float, tokens_per_second: float, margin: float) -> int:
    return math.ceil(STARTUP_MINUTES + margin * tokens / tokens_per_second / 60)


def segments_upper_bound(codes_mb: float) -> int:
    """At most this many segments in a control-code Parquet file of this size."""
    return max(1, math.ceil(codes_mb * MB / MIN_CODE_PARQUET_BYTES_PER_SEGMENT))


# --- GPU memory (the cost plan) ------------------------------------------------------------------

def gpu_training_bytes(shape: ModelShape, dtype_bytes: int, sequences: int, tokens: int,
                       trainable_parameters: int, logits_passes: int = 1, per_sample_gradients: bool = False,
                       frozen_weights: bool = True) -> int:
    """One training step: the weights (frozen in `dtype_bytes`, or trained in float32 with gradients
    and Adam moments), the trainable parameters' float32 copies, the activations kept for backward,
    and the float32 log-softmax of `logits_passes` forward passes (2 for ft_mask's base pass)."""
    weights = shape.parameters * (dtype_bytes if frozen_weights else 4 * TRAINABLE_COPIES)
    trainable = trainable_parameters * 4 * (TRAINABLE_COPIES + (sequences if per_sample_gradients else 0))
    positions = sequences * tokens
    activations = positions * shape.hidden * shape.layers * ACTIVATION_BYTES_PER_TOKEN_UNIT * dtype_bytes // 2
    logits = logits_passes * positions * shape.vocab * (dtype_bytes + 4 + 4)
    return weights + trainable + activations + logits


def prefix_parameters(shape: ModelShape, virtual_tokens: int, projection_hidden: int | None) -> int:
    """Trainable parameters of a prefix: its key/value rows, or the embedding and MLP that make them."""
    rows = shape.layers * 2 * shape.kv_width
    if not projection_hidden:
        return virtual_tokens * rows
    # the embedding (peft's token_dim: the key/value width), then Linear(token_dim, H), Tanh, Linear(H, rows)
    return (virtual_tokens * shape.kv_width + shape.kv_width * projection_hidden + projection_hidden
            + projection_hidden * rows + rows)
