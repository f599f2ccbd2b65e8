"""The decoding slots of a generate job: `plainsight.generation.slots` preallocates every layer's keys
and values per slot, and `generation.batch_size: auto` takes as many as the memory holds. The job
(`plainsight.generation.memory`) and the cost model count them alike."""

from __future__ import annotations

AUTO = "auto"
CPU_AUTO_SLOTS = 4  # `batch_size: auto` on the CPU, where a step is bound by reading the weights
FREE_MEMORY_MARGIN = 0.2  # share of the free GPU memory kept out of the KV cache


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
