"""Prefix tuning on the tiny grouped-query Llama (2 heads, 1 key/value head).

The initial prefix is the base model's cache on the opening tokens of a document, so the
prefixed model must match the base model reading those tokens first; generation must go
through the prefix (prompts of several lengths sharing batch slots); a trained prefix must
steer the output; and a saved adapter must reload to the same logits while holding nothing
but the prefix.
"""

from __future__ import annotations

import json

import pytest
import torch

from plainsight.generation.runner import Generator, Request, SamplingSettings
from plainsight.methods.prompts import cut_at_boundary, render
from plainsight.models import load_model
from plainsight.training.prefix import init_token_ids, load_adapter, prefix_model, save_adapter

VIRTUAL_TOKENS = 8
INIT_TEXT = "The applicant, Mr Henrik Hasslund, was born in 1960 and lives in Copenhagen."
PROMPT = render([], "PERSON: Mr X")  # "### Private details\nPERSON: Mr X\n### Document\n"
OTHER_PROMPTS = [
    "### Document\nThe",
    "### Private details\nPERSON: Ms Nina Holst\nLOC: Oslo\n### Document\nThe applicant was represented by",
]
# One token of the tiny vocabulary, repeated: a random two-layer model's output head bounds how far a
# prefix can move the logits, enough to make one token the argmax everywhere but not to spell a
# position-dependent sequence.
MARKER = "Hasslund Hasslund"
GREEDY = SamplingSettings(max_new_tokens=8, temperature=1e-3, top_p=1.0, batch_size=2)


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    return load_model(tiny_model_dir)


@pytest.fixture(scope="module")
def prefixed(tiny_model_dir):
    """A freshly initialised prefix on its own copy of the base model (wrapping changes the model)."""
    model, tokenizer = load_model(tiny_model_dir)
    return prefix_model(model, tokenizer, VIRTUAL_TOKENS, INIT_TEXT).eval()


@pytest.fixture(scope="module")
def trained(tiny_model_dir):
    """A prefix trained to answer PROMPT with MARKER."""
    model, tokenizer = load_model(tiny_model_dir)
    peft_model = prefix_model(model, tokenizer, VIRTUAL_TOKENS, INIT_TEXT)
    prompt_ids = tokenizer(PROMPT, add_special_tokens=False).input_ids
    target_ids = tokenizer(" " + MARKER, add_special_tokens=False).input_ids
    input_ids = torch.tensor([prompt_ids + target_ids])
    labels = torch.tensor([[-100] * len(prompt_ids) + target_ids])
    optimizer = torch.optim.Adam([p for p in peft_model.parameters() if p.requires_grad], lr=3e-2)
    torch.manual_seed(0)
    peft_model.train()
    for _ in range(40):
        loss = peft_model(input_ids=input_ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return peft_model.eval()


def encode(tokenizer, texts):
    return tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)


def test_only_the_prefix_trains(prefixed):
    config = prefixed.active_peft_config
    # grouped-query attention: peft sizes the prefix by the key/value heads, not the hidden size
    assert (config.num_attention_heads, config.token_dim) == (1, 16)
    trainable = {name: p.numel() for name, p in prefixed.named_parameters() if p.requires_grad}
    assert list(trainable) == ["prompt_encoder.default.embedding.weight"]
    assert (
        sum(trainable.values()) == VIRTUAL_TOKENS * 2 * 2 * 16
    )  # tokens x layers x (K, V) x kv_heads*head_dim
    assert prefixed.get_nb_trainable_parameters()[0] == VIRTUAL_TOKENS * 64


@pytest.mark.parametrize("init_text", [INIT_TEXT, "The Court"])  # the second is shorter than the prefix
def test_initial_prefix_acts_like_reading_the_init_tokens(tiny_model_dir, base, init_text):
    base_model, tokenizer = base
    model, _ = load_model(tiny_model_dir)
    peft_model = prefix_model(model, tokenizer, VIRTUAL_TOKENS, init_text).eval()
    init_ids = init_token_ids(tokenizer, init_text, VIRTUAL_TOKENS)
    assert len(init_ids) == VIRTUAL_TOKENS
    prompt_ids = tokenizer(PROMPT, add_special_tokens=False).input_ids
    with torch.no_grad():
        prefixed_logits = peft_model(input_ids=torch.tensor([prompt_ids])).logits[0]
        read_logits = base_model(input_ids=torch.tensor([init_ids + prompt_ids])).logits[0, VIRTUAL_TOKENS:]
        plain_logits = base_model(input_ids=torch.tensor([prompt_ids])).logits[0]
    # The prompt continues at position k after the prefix (the model counts on from the cache
    # length), and the cached keys carry their rotary positions 0..k-1: exact equality holds.
    torch.testing.assert_close(prefixed_logits, read_logits, atol=1e-4, rtol=0)
    assert (prefixed_logits - plain_logits).abs().max() > 1e-2


def test_generator_goes_through_the_prefix(prefixed, base):
    """Batched sampling with the prefix equals greedy decoding by the base model after reading the
    init tokens; the base model's own `generate` would drop the prefix."""
    base_model, tokenizer = base
    init_ids = init_token_ids(tokenizer, INIT_TEXT, VIRTUAL_TOKENS)
    prompts = [PROMPT, *OTHER_PROMPTS]  # three lengths in two slots
    results = Generator(prefixed, tokenizer, GREEDY).run([Request(p) for p in prompts], seed=0)
    plain = Generator(base_model, tokenizer, GREEDY).run([Request(p) for p in prompts], seed=0)
    for prompt, result in zip(prompts, results):
        ids = torch.tensor([init_ids + tokenizer(prompt, add_special_tokens=False).input_ids])
        with torch.no_grad():
            reference = base_model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=GREEDY.max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        expected = cut_at_boundary(tokenizer.decode(reference[0, ids.shape[1] :], skip_special_tokens=True))
        assert result.text == expected
    # a random model's argmax barely depends on context, so not every text changes; the
    # trained prefix below shows the effect plainly
    assert any(result.text != plain_result.text for result, plain_result in zip(results, plain))


def test_trained_prefix_steers_generation(trained, base):
    base_model, tokenizer = base
    requests = [Request(PROMPT), Request(OTHER_PROMPTS[1])]  # different lengths, one batch
    steered = Generator(trained, tokenizer, GREEDY).run(requests, seed=0)
    plain = Generator(base_model, tokenizer, GREEDY).run(requests, seed=0)
    assert steered[0].text.startswith(MARKER)
    assert all("Hasslund" not in result.text for result in plain)

    # the pitfall: `generate` on the wrapped base model silently bypasses the prefix
    batch = encode(tokenizer, [PROMPT])
    settings = {"do_sample": False, "max_new_tokens": 4, "pad_token_id": tokenizer.pad_token_id}
    with torch.no_grad():
        through_peft = trained.generate(**batch, **settings)
        bypassing = trained.get_base_model().generate(**batch, **settings)
        plain_ids = base_model.generate(**batch, **settings)
    assert torch.equal(bypassing, plain_ids)
    assert tokenizer.decode(through_peft[0, batch.input_ids.shape[1] :]).startswith(" " + MARKER)


def test_save_and_load_round_trip(trained, tiny_model_dir, tmp_path):
    from safetensors.torch import load_file

    _, tokenizer = load_model(tiny_model_dir)
    target = tmp_path / "adapter"
    save_adapter(trained, target)
    save_adapter(trained, target, {"training.json": {"epsilon": 8.0, "note": "ü"}})  # replaces the first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapter"]  # no staging left behind
    files = {p.name for p in target.iterdir()}
    assert (
        {"adapter_config.json", "adapter_model.safetensors", "training.json"}
        <= files
        <= {"adapter_config.json", "adapter_model.safetensors", "training.json", "README.md"}
    )  # peft adds a card
    assert json.loads((target / "training.json").read_text(encoding="utf-8")) == {"epsilon": 8.0, "note": "ü"}
    weights = load_file(target / "adapter_model.safetensors")
    assert list(weights) == ["prompt_embeddings"]
    assert weights["prompt_embeddings"].shape == (VIRTUAL_TOKENS, 64)
    assert sum(p.stat().st_size for p in target.iterdir()) < 20_000  # the base model is ~100 KB of weights

    fresh, _ = load_model(tiny_model_dir)
    loaded = load_adapter(fresh, target)
    assert not loaded.training
    assert not any(p.requires_grad for p in loaded.parameters())
    batch = encode(tokenizer, [PROMPT, OTHER_PROMPTS[0]])
    with torch.no_grad():
        torch.testing.assert_close(loaded(**batch).logits, trained(**batch).logits, atol=0, rtol=0)


# --- the reparametrised prefix (an MLP over prefix embeddings, folded away when saved) ----------


def train_to_marker(peft_model, tokenizer, steps: int = 40, lr: float = 3e-2):
    prompt_ids = tokenizer(PROMPT, add_special_tokens=False).input_ids
    target_ids = tokenizer(" " + MARKER, add_special_tokens=False).input_ids
    input_ids = torch.tensor([prompt_ids + target_ids])
    labels = torch.tensor([[-100] * len(prompt_ids) + target_ids])
    optimizer = torch.optim.Adam([p for p in peft_model.parameters() if p.requires_grad], lr=lr)
    torch.manual_seed(0)
    peft_model.train()
    losses = []
    for _ in range(steps):
        loss = peft_model(input_ids=input_ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return peft_model.eval(), losses


def test_reparametrised_prefix_starts_as_the_plain_one_and_trains_its_mlp(tiny_model_dir, prefixed):
    model, tokenizer = load_model(tiny_model_dir)
    reparametrised = prefix_model(model, tokenizer, VIRTUAL_TOKENS, INIT_TEXT, projection_hidden=32).eval()
    trainable = {name for name, p in reparametrised.named_parameters() if p.requires_grad}
    assert trainable == {
        "prompt_encoder.default.embedding.weight",
        "prompt_encoder.default.transform.0.weight",
        "prompt_encoder.default.transform.0.bias",
        "prompt_encoder.default.transform.2.weight",
        "prompt_encoder.default.transform.2.bias",
    }
    batch = encode(tokenizer, [PROMPT])
    with torch.no_grad():  # the MLP's output layer starts at zero: the prefix is the init text's cache
        torch.testing.assert_close(reparametrised(**batch).logits, prefixed(**batch).logits, atol=0, rtol=0)
    _, losses = train_to_marker(reparametrised, tokenizer)
    plain_model, _ = load_model(tiny_model_dir)
    _, plain_losses = train_to_marker(
        prefix_model(plain_model, tokenizer, VIRTUAL_TOKENS, INIT_TEXT), tokenizer
    )
    # The random two-layer model bounds the loss near 5.7 (see MARKER); the MLP gets there sooner.
    assert losses[-1] < plain_losses[-1] < losses[0]


def test_reparametrised_prefix_saves_as_plain_rows(tiny_model_dir, tmp_path):
    from safetensors.torch import load_file

    model, tokenizer = load_model(tiny_model_dir)
    trained_model, _ = train_to_marker(
        prefix_model(model, tokenizer, VIRTUAL_TOKENS, INIT_TEXT, projection_hidden=32), tokenizer
    )
    save_adapter(trained_model, tmp_path / "adapter")
    weights = load_file(tmp_path / "adapter" / "adapter_model.safetensors")
    assert list(weights) == ["prompt_embeddings"] and weights["prompt_embeddings"].shape == (
        VIRTUAL_TOKENS,
        64,
    )
    config = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text(encoding="utf-8"))
    assert config["prefix_projection"] is False
    fresh, _ = load_model(tiny_model_dir)
    loaded = load_adapter(fresh, tmp_path / "adapter")
    batch = encode(tokenizer, [PROMPT, OTHER_PROMPTS[0]])
    with torch.no_grad():
        torch.testing.assert_close(loaded(**batch).logits, trained_model(**batch).logits, atol=1e-5, rtol=0)
    steered = Generator(loaded, tokenizer, GREEDY).run([Request(PROMPT)], seed=0)
    assert steered[0].text.startswith(MARKER)
