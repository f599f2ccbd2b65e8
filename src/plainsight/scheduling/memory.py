"""Host and GPU memory of a model job, from the model's shape and the batch.

Host memory: the Python and torch runtime, the weights (float32, as `plainsight.models.load_model`
loads them; twice where CPU decoding packs a copy, `plainsight.generation.packed_linear`) and, when the
job runs on the CPU, activations and KV cache per token of the batch. Per-token memory grows
with layers x hidden size, which across causal LMs from 135M to 8B parameters stays close to
1.45 x sqrt(parameters). The activation factors are calibrated on the embedded SmolLM2-135M
(peak RSS: generation 1.7-2.0 GB with its packed weights, ft_mask 2.6 GB, dpsgd 3.1 GB).

GPU memory (`resources.gpu_memory_mb` and the cost plan): the weights in the job's dtype, plus per job kind
the KV cache of the decoding slots, or the activations a training step keeps for backward
(about 34 bytes per token, hidden unit and layer in 16-bit precision with fused attention, after
Korthikanti et al. 2022), the float32 logits of the loss, and the float32 trainable parameters
with their gradients and Adam moments (per-sample gradients too under DP-SGD).
"""

from __future__ import annotations

import math

from plainsight.scheduling.decoding_slots import kv_cache_bytes
from plainsight.scheduling.model_shape import ModelShape

MB = 2**20
GIB = 2**30
BYTES_PER_PARAMETER = 4  # float32 weights
RUNTIME_OVERHEAD_MB = 600  # Python, torch, transformers and pandas loaded, before the model
LAYER_WIDTH_PER_SQRT_PARAMETER = 1.45  # layers x hidden size ~ 1.45 x sqrt(parameters)
GENERATION_ACTIVATION_FACTOR = 2  # KV cache (keys and values) plus the current step
TRAINING_ACTIVATION_FACTOR = (
    48  # saved activations, logits of the prefixed and the base pass, per-sample gradients
)

ACTIVATION_BYTES_PER_TOKEN_UNIT = 34  # saved for backward, per token x hidden unit x layer (16-bit)
TRAINABLE_COPIES = 4  # float32 trainable parameter, gradient and two Adam moments
LORA_WIDTHS_PER_LAYER = 18  # in + out widths of every linear layer of a block, in hidden sizes (gated MLP)
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


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
