"""Memory and run-time estimates of the model jobs, for the scheduler (local or SLURM).

Memory: the Python and torch runtime, the weights (float32, as `plainsight.models.load_model`
loads them; twice where CPU decoding packs a copy, `plainsight.generation.packed_linear`) and, when the
job runs on the CPU, activations and KV cache per token of the batch. Per-token memory grows
with layers x hidden size, which across causal LMs from 135M to 8B parameters stays close to
1.45 x sqrt(parameters). The activation factors are calibrated on the embedded SmolLM2-135M
(peak RSS: generation 1.7-2.0 GB with its packed weights, ft_mask 2.6 GB, dpsgd 3.1 GB).

Run time: tokens to produce or train on, divided by a measured throughput, times a margin.
"""

from __future__ import annotations

import json
import math
import re
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


def model_parameters(name_or_path: str) -> int:
    """Parameter count from a model folder's config.json, else from the size in its name (-135M, -1.3B)."""
    config_file = Path(name_or_path) / "config.json"
    if config_file.is_file():
        return _parameters_from_config(json.loads(config_file.read_text(encoding="utf-8")))
    sizes = _SIZE_IN_NAME.findall(Path(name_or_path).name)
    if not sizes:
        raise ValueError(
            f"cannot tell the parameter count of model {name_or_path!r}: set resources.model_parameters")
    number, unit = sizes[-1]
    return round(float(number) * (1e6 if unit.lower() == "m" else 1e9))


def _parameters_from_config(config: dict) -> int:
    """Weights of a decoder-only transformer (embeddings, attention, gated MLP, output head)."""
    hidden = config["hidden_size"]
    heads = config.get("num_attention_heads", 1)
    kv_width = hidden * config.get("num_key_value_heads", heads) // heads
    attention = 2 * hidden * hidden + 2 * hidden * kv_width
    mlp = 3 * hidden * config.get("intermediate_size", 4 * hidden)
    embeddings = config["vocab_size"] * hidden * (1 if config.get("tie_word_embeddings", True) else 2)
    return embeddings + config["num_hidden_layers"] * (attention + mlp)


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
