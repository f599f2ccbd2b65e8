"""Memory of decoding: the KV cache of the batch slots, and how many slots `batch_size: auto` takes.

The slot decoder (`plainsight.generation.slots`) preallocates every layer's keys and values for
each slot: layers x key-value heads x head dim x 2 (keys and values) x bytes per value x cache
positions. On a GPU, `auto` takes as many slots as fit the memory left after the weights, less
`FREE_MEMORY_MARGIN` for the prefill's and the steps' activations and the allocator's
fragmentation, and never more than the run's prompts (a batch holds no more rows than that). On the
CPU, where a step is bound by reading the weights, it takes `CPU_AUTO_SLOTS`, the embedded
default's slots. The arithmetic is the cost model's (`plainsight.scheduling`, free of torch), which
the scheduler and the cost plan use too.
"""

from __future__ import annotations

import logging

import torch

from plainsight.errors import InputError
from plainsight.scheduling import AUTO, FREE_MEMORY_MARGIN, GIB, cpu_slots, kv_cache_bytes, slots_that_fit

log = logging.getLogger(__name__)


def kv_geometry(config) -> tuple[int, int, int]:
    """(layers, key-value heads, head dim) of a transformers model config."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return config.num_hidden_layers, kv_heads, head_dim


def free_gpu_bytes(device: torch.device) -> int:
    """GPU memory free for new tensors: the driver's free memory plus what torch's allocator caches."""
    free, _ = torch.cuda.mem_get_info(device)
    return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)


def batch_slots(batch_size: int | str, model, positions_per_slot: int, most_useful: int) -> int:
    """`generation.batch_size` as a number of slots for `model` (a causal LM, not a peft wrapper), whose
    slots hold `positions_per_slot` cache positions each; `auto` is resolved as the module docstring says."""
    if batch_size != AUTO:
        return batch_size
    parameter = next(model.parameters())
    if parameter.device.type != "cuda":
        slots = min(cpu_slots(AUTO), most_useful)
        log.info("generation.batch_size: auto: %d slots on the CPU", slots)
        return slots
    per_slot = kv_cache_bytes(*kv_geometry(model.config), parameter.element_size(), positions_per_slot)
    free = free_gpu_bytes(parameter.device)
    fit = slots_that_fit(free, per_slot)
    if fit < 1:
        raise InputError(
            "config",
            "generation.batch_size",
            f"auto: one slot's KV cache ({per_slot / GIB:.2f} GiB for {positions_per_slot} "
            f"positions) does not fit the {free / GIB:.2f} GiB free on {parameter.device} less a "
            f"{FREE_MEMORY_MARGIN:.0%} margin; shorten generation.max_prompt_tokens or "
            "max_new_tokens, or use a GPU with more memory",
        )
    slots = min(fit, most_useful)
    log.info(
        "generation.batch_size: auto: %d slots on %s (KV cache %.2f GiB per slot of %d positions, "
        "%.2f GiB free, %d would fit, %d prompts to decode)",
        slots,
        parameter.device,
        per_slot / GIB,
        positions_per_slot,
        free / GIB,
        fit,
        most_useful,
    )
    return slots
