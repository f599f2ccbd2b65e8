"""Host and GPU memory of a model job, from the model's shape and the batch.

Host memory: the Python and torch runtime, the weights (float32, as `plainsight.models.load_model`
loads them; twice where CPU decoding packs a copy, `plainsight.generation.packed_linear`) and, when the
job runs on the CPU, activations and KV cache per token of the batch. Per-token memory grows
with layers x hidden size, which across causal LMs from 135M to 8B parameters stays close to
1.45 x sqrt(parameters). The activation factors are calibrated on the embedded SmolLM2-135M
(peak RSS: generation 1.7-2.0 GB with its packed weights, ft_mask's prefix training 2.6 GB).
A prefix-training job on the CPU of a model of known shape holds one `training_step_bytes` step in
host memory instead: the runtime and that step (`cpu_training_mb`).

Training memory (`training_step_bytes`: GPU memory, and host memory of a prefix-training job on the CPU):
the weights in the job's dtype, the activations a training step keeps for backward (about 34 bytes per
token, hidden unit and layer in 16-bit precision with fused attention, after Korthikanti et al. 2022),
the float32 rows of the loss (ft_mask: the base pass's too, and its KL rows), and the float32 trainable
parameters with their gradients and Adam moments. DP-SGD's step holds a Poisson batch of privacy units,
each with all its sequences (`dp_batch_sequences`), and a float32 per-sample gradient of every trainable
parameter per sequence (Opacus's `grad_sample`). With `prefix_tuning.physical_batch_size` a step passes in
micro-batches and holds the activations and per-sample gradients of the largest one only
(`physical_batch_sequences`).

Measured against the estimate (in brackets, before the headroom): peak RSS (getrusage, one thread,
float32) of the embedded SmolLM2-135M's steps on sequences of 128 tokens, 20 virtual tokens and
`projection_hidden` 512: ft with 4 sequences 2,107 MB (2,201), ft_mask 2,611 (2,756), DP-SGD with 4, 8
and 16 sequences 2,238 (2,293), 3,358 (3,381) and 5,279 (5,557), and a DP-SGD step of 11 TAB documents,
two sequences each, after two smaller steps 7,003 (7,190). With a physical batch (prefix rows without the
MLP, batches of 8, docs/performance.md): ft 2,904 (3,110) whole and 1,604 (1,615) two sequences a pass;
DP-SGD with a Poisson batch of 16 sequences 4,711 (5,117) whole and 1,740 (1,617) one document a pass
(the headroom takes up the whole batch's tensors and Opacus's sums). Peak GPU memory on one H100 at the
Sheared-LLaMA-1.3B shape in bfloat16 (batch 8, examples of up to 412 tokens with the prefix, no MLP):
ft 9.5 GB (10.0), ft_mask 12.4 (12.9), DP-SGD 21.8 (28.0 for its Poisson bound of 28 sequences).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from plainsight.scheduling.decoding_slots import kv_cache_bytes
from plainsight.scheduling.model_shape import ModelShape

MB = 2**20
GIB = 2**30
BYTES_PER_PARAMETER = 4  # float32 weights
RUNTIME_OVERHEAD_MB = 600  # Python, torch, transformers and pandas loaded, before the model
LAYER_WIDTH_PER_SQRT_PARAMETER = 1.45  # layers x hidden size ~ 1.45 x sqrt(parameters)
GENERATION_ACTIVATION_FACTOR = 2  # KV cache (keys and values) plus the current step
TRAINING_ACTIVATION_FACTOR = (
    48  # saved activations and the logits of a training or scoring step, when no shape says more
)

ACTIVATION_BYTES_PER_TOKEN_UNIT = 34  # saved for backward, per token x hidden unit x layer (16-bit)
TRAINABLE_COPIES = 4  # float32 trainable parameter, gradient and two Adam moments
LOSS_ROW_BYTES = 8  # per vocabulary entry and pass: the loss's float32 logits rows and their log-softmax
KL_ROW_BYTES = 8  # per vocabulary entry: the masked objective's float32 KL rows (base probabilities, terms)
# A DP-SGD step's units: this quantile of the Poisson count of its batch (`dp_batch_sequences`)
DP_BATCH_QUANTILE = 0.98
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


def cpu_training_mb(step_bytes: int, headroom: float) -> int:
    """Host memory of a training job on the CPU: the runtime and one step (`training_step_bytes`)."""
    return math.ceil(headroom * (RUNTIME_OVERHEAD_MB + step_bytes / MB))


def poisson_quantile(mean: float, probability: float) -> int:
    """The smallest k with P(X <= k) >= `probability` for X ~ Poisson(`mean`) (terms in log space, so a
    large mean does not underflow)."""
    if mean <= 0 or not 0 < probability < 1:
        raise ValueError(
            f"a Poisson quantile needs a positive mean and a probability in (0, 1), not {mean}, {probability}"
        )
    k, cumulative = 0, 0.0
    while True:
        cumulative += math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
        if cumulative >= probability:
            return k
        k += 1


def dp_batch_sequences(batch_units: int, sequences_per_unit: int) -> int:
    """The sequences one DP-SGD step holds, a bound. Poisson sampling draws each privacy unit with
    probability `batch_units` / units, so a batch's unit count is binomial with mean `batch_units`, its
    tail below that of Poisson(`batch_units`), and each unit brings all its sequences (per-unit clipping
    sums them). The bound takes the count's `DP_BATCH_QUANTILE` quantile: 9 units for 4, 14 for 8. The
    embedded default's three runs (16 steps each) drew at most 7, 11 and 7 units of 4 expected; a job's
    headroom takes up the rarer batches (the 11 units' step: 7.0 GB against a request of 7.6)."""
    if batch_units < 1 or sequences_per_unit < 1:
        raise ValueError(
            f"a DP-SGD batch needs a unit of a sequence or more, not {batch_units} x {sequences_per_unit}"
        )
    return poisson_quantile(batch_units, DP_BATCH_QUANTILE) * sequences_per_unit


def physical_batch_sequences(
    batch_sequences: int, physical_batch_size: int | None, sequences_per_unit: int = 1
) -> int:
    """The sequences one forward and backward pass of a training step holds: the whole batch's, or with a
    physical batch size its largest micro-batch (`plainsight.training.examples.micro_batches`), which
    takes whole privacy units of `sequences_per_unit` sequences, at least one unit, at most the batch."""
    if physical_batch_size is None:
        return batch_sequences
    return min(batch_sequences, max(physical_batch_size, sequences_per_unit))


@dataclass(frozen=True)
class TrainingStep:
    """What one training step holds beside the model: `sequences` x `tokens` positions, the trainable
    parameters' count, the logits of `logits_passes` forward passes (2 for ft_mask's base pass; 0 for an
    encoder's classification head), the masked objective's KL rows, DP-SGD's per-sample gradients, and
    whether the model's own weights are frozen (in `dtype_bytes`) or trained (float32 with gradients
    and Adam moments)."""

    sequences: int
    tokens: int
    trainable_parameters: int = 0
    logits_passes: int = 1
    masked_objective: bool = False
    per_sample_gradients: bool = False
    frozen_weights: bool = True


def training_step_bytes(shape: ModelShape, dtype_bytes: int, step: TrainingStep) -> int:
    """One training step: the weights, the trainable parameters' float32 copies (and, with per-sample
    gradients, one float32 gradient per sequence: DP-SGD's), the activations kept for backward, and per
    position the logits and float32 loss rows of each forward pass and, with the masked objective, the
    KL rows."""
    weights = shape.parameters * (dtype_bytes if step.frozen_weights else 4 * TRAINABLE_COPIES)
    gradients = step.sequences if step.per_sample_gradients else 0
    trainable = step.trainable_parameters * 4 * (TRAINABLE_COPIES + gradients)
    positions = step.sequences * step.tokens
    activations = positions * shape.hidden * shape.layers * ACTIVATION_BYTES_PER_TOKEN_UNIT * dtype_bytes // 2
    row_bytes = step.logits_passes * (dtype_bytes + LOSS_ROW_BYTES) + (
        KL_ROW_BYTES if step.masked_objective else 0
    )
    return weights + trainable + activations + positions * shape.vocab * row_bytes


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
