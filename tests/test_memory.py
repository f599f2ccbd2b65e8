"""The KV-cache arithmetic of the batch slots, and `generation.batch_size: auto`."""

from __future__ import annotations

import logging

import pytest
import torch
from transformers import Gemma3TextConfig, LlamaConfig

from conftest import GPU, device
from plainsight.errors import InputError
from plainsight.generation import memory
from plainsight.generation import slots as decoding
from plainsight.generation.memory import batch_slots, kv_geometry
from plainsight.generation.sampling import NucleusSampler
from plainsight.generation.slots import Row, SlotDecoder
from plainsight.models import load_model
from plainsight.scheduling import (
    CPU_AUTO_SLOTS,
    FREE_MEMORY_MARGIN,
    cpu_slots,
    kv_cache_bytes,
    slot_cache_positions,
    slots_that_fit,
)

GIB = 2**30


def test_llama_3_1_8b_holds_128_kib_per_token_in_bfloat16():
    # 32 layers x 8 key-value heads x 128 dims x (keys, values) x 2 bytes = 131,072 bytes
    assert kv_cache_bytes(32, 8, 128, 2, 1) == 131_072
    assert kv_cache_bytes(32, 8, 128, 2, 8192) == GIB


def test_sheared_llama_1_3b_slot_of_the_paper_profile():
    # 24 layers x 16 heads x 128 dims x 2 x 2 bytes = 196,608 bytes per token; a slot of 3,600 prompt and
    # 400 new tokens holds 5,001 positions
    positions = slot_cache_positions(3600, 400)
    assert positions == 5001
    assert kv_cache_bytes(24, 16, 128, 2, positions) == 196_608 * 5001


def test_geometry_from_model_configs():
    sheared = LlamaConfig(hidden_size=2048, num_attention_heads=16, num_hidden_layers=24)
    assert kv_geometry(sheared) == (24, 16, 128)  # no key-value heads given: one per attention head
    llama = LlamaConfig(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, num_hidden_layers=32)
    assert kv_geometry(llama) == (32, 8, 128)
    gemma = Gemma3TextConfig(
        hidden_size=640, num_attention_heads=4, num_key_value_heads=1, head_dim=256, num_hidden_layers=18
    )
    assert kv_geometry(gemma) == (18, 1, 256)  # its own head dim, not hidden size / heads


def test_slots_that_fit_leave_the_margin():
    assert slots_that_fit(100 * GIB, GIB, margin=0.2) == 80
    assert slots_that_fit(10 * GIB, 3 * GIB, margin=0.2) == 2
    assert slots_that_fit(GIB, 2 * GIB) == 0
    assert FREE_MEMORY_MARGIN == 0.2


def test_the_arithmetic_is_the_decoders_cache(tiny_model_dir, monkeypatch):
    """The buffers the slot decoder allocates per slot are what `kv_cache_bytes` counts."""
    model, tokenizer = load_model(tiny_model_dir, dtype=torch.bfloat16)
    batches = []
    original = decoding._Batch.__init__

    def recording(batch, *args):
        original(batch, *args)
        batches.append(batch)

    monkeypatch.setattr(decoding._Batch, "__init__", recording)
    prompt = tokenizer("The applicant", add_special_tokens=False).input_ids
    SlotDecoder(model, tokenizer, NucleusSampler(1.0, 0.9), 3, 2, "###").run(
        [Row(0, prompt, torch.Generator())], lambda row: None
    )
    [batch] = batches
    per_slot = sum(buffer[0].numel() * buffer.element_size() for buffer in (*batch.keys, *batch.values))
    assert batch.capacity == slot_cache_positions(len(prompt), 3)
    assert per_slot == kv_cache_bytes(*kv_geometry(model.config), 2, batch.capacity)


def test_a_number_of_slots_is_kept(tiny_model_dir):
    model, _ = load_model(tiny_model_dir)
    assert batch_slots(7, model, 100, most_useful=32) == 7
    assert cpu_slots(7) == 7


def test_auto_on_the_cpu_takes_the_documented_default(tiny_model_dir, caplog):
    model, _ = load_model(tiny_model_dir)
    with caplog.at_level(logging.INFO, logger="plainsight.generation.memory"):
        assert batch_slots("auto", model, 100, most_useful=32) == CPU_AUTO_SLOTS == cpu_slots("auto") == 4
    assert "generation.batch_size: auto: 4 slots on the CPU" in caplog.text
    assert batch_slots("auto", model, 100, most_useful=2) == 2  # never more than the run.s prompts


@GPU
def test_auto_on_a_gpu_fills_the_free_memory_less_the_margin(tiny_model_dir, caplog):
    model, _ = load_model(tiny_model_dir, device("cuda"), torch.bfloat16)
    per_slot = kv_cache_bytes(*kv_geometry(model.config), 2, 10_000)
    free = memory.free_gpu_bytes(next(model.parameters()).device)
    with caplog.at_level(logging.INFO, logger="plainsight.generation.memory"):
        slots = batch_slots("auto", model, 10_000, most_useful=10**9)
    assert slots >= 1 and slots * per_slot <= free * (1 - FREE_MEMORY_MARGIN)
    assert f"generation.batch_size: auto: {slots} slots on cuda:0" in caplog.text
    assert batch_slots("auto", model, 10_000, most_useful=3) == 3


@GPU
def test_auto_on_a_gpu_names_the_setting_when_no_slot_fits(tiny_model_dir):
    model, _ = load_model(tiny_model_dir, device("cuda"), torch.bfloat16)
    too_many_positions = 2 * memory.free_gpu_bytes(next(model.parameters()).device)
    with pytest.raises(InputError, match="config: generation.batch_size: auto: one slot's KV cache"):
        batch_slots("auto", model, too_many_positions, most_useful=32)
