"""DP-SGD baseline on a tiny random Llama: per-sample gradients, privacy accounting, determinism.

The per-sample check compares Opacus's gradients for a right-padded batch of two with
backward passes over each sequence alone (unpadded), which is what DP-SGD's clipping
relies on. Training runs take a second or two each, mostly Opacus's search for the noise
multiplier; tests other than the accounting one use the quicker RDP accountant.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("opacus")

from plainsight.training.dp import (  # noqa: E402
    DPSettings,
    dp_adapter_model,
    example_loader,
    make_private,
    per_sequence_loss,
    train_dp,
)
from plainsight.training.loop import TrainingExample, collate  # noqa: E402

PAD = 0
VIRTUAL_TOKENS = 4


def causal_loss(logits, labels):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
                           ignore_index=-100)


def make_examples(count, seed=0):
    """Short sequences of varied length; the first two tokens play the prompt (no labels)."""
    rng = torch.Generator().manual_seed(seed)
    examples = []
    for _ in range(count):
        length = int(torch.randint(5, 11, (1,), generator=rng))
        ids = torch.randint(1, 600, (length,), generator=rng).tolist()
        examples.append(TrainingExample((f"s{len(examples)}", 0), ids, [-100, -100] + ids[2:],
                                        [False] * length))
    return examples


def tiny_adapter_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=600, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                         pad_token_id=PAD)
    return dp_adapter_model(LlamaForCausalLM(config), num_virtual_tokens=VIRTUAL_TOKENS)


def trainable(model):
    return {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


def frozen(model):
    return {name: p.detach().clone() for name, p in model.named_parameters() if not p.requires_grad}


def test_opacus_per_sample_gradients_match_single_sequence_backward():
    model = tiny_adapter_model()
    first, second = make_examples(2, seed=3)
    second = replace(second, input_ids=second.input_ids[:4], labels=second.labels[:4], private=second.private[:4])
    examples = [first, second]
    assert len(first.input_ids) > len(second.input_ids)  # the second row is padded

    single = []
    for example in examples:
        model.zero_grad(set_to_none=True)
        batch = collate([example], PAD)
        causal_loss(model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits,
                    batch["labels"]).backward()
        single.append({name: p.grad.clone() for name, p in model.named_parameters() if p.requires_grad})
    model.zero_grad(set_to_none=True)
    assert list(single[0]) == ["prompt_encoder.default.embedding.weight"]

    loader = example_loader(examples, PAD, batch_size=2)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    _, private_model, _, _ = make_private(model, optimizer, loader, DPSettings(accountant="rdp"), epochs=1,
                                       delta=0.5)
    batch = collate(examples, PAD)
    out = private_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    per_sequence_loss(out.logits, batch["labels"], causal_loss).backward()

    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        assert p.grad_sample.shape == (2, *p.shape)
        for row in range(2):
            assert single[row][name].norm() > 0
            torch.testing.assert_close(p.grad_sample[row], single[row][name], atol=1e-5, rtol=0)
        assert not torch.allclose(single[0][name], single[1][name])
    private_model.cleanup()


def test_train_dp_spends_target_epsilon_and_trains_only_the_adapter():
    model = tiny_adapter_model()
    adapter_before, base_before = trainable(model), frozen(model)
    settings = DPSettings(epsilon=8.0)
    result = train_dp(model, make_examples(16), PAD, batch_size=4, epochs=2, lr=0.05, settings=settings,
                      seed=0, loss_fn=causal_loss)

    assert result["adapter"] == "prefix"
    assert result["delta"] == pytest.approx(1 / 16)
    assert 0.5 * settings.epsilon < result["epsilon"] <= settings.epsilon
    assert result["noise_multiplier"] > 0
    assert result["steps"] == 2 * 4  # epochs x (16 / 4) Poisson batches, empty ones included
    assert len(result["losses"]) == result["steps"] - result["empty_batches"]
    assert all(loss > 0 for loss in result["losses"])

    after = trainable(model)
    assert all(not torch.equal(after[name], adapter_before[name]) for name in adapter_before)
    base_after = frozen(model)
    assert all(torch.equal(base_after[name], base_before[name]) for name in base_before)
    # No Opacus state is left on the model.
    assert not any(hasattr(p, "grad_sample") or hasattr(p, "summed_grad") for p in model.parameters())


def test_train_dp_is_deterministic_per_seed():
    def run(seed):
        model = tiny_adapter_model()
        train_dp(model, make_examples(16), PAD, batch_size=4, epochs=2, lr=0.05,
                 settings=DPSettings(accountant="rdp"), seed=seed, loss_fn=causal_loss)
        return trainable(model)

    first, again, other = run(0), run(0), run(1)
    assert all(torch.equal(first[name], again[name]) for name in first)
    assert any(not torch.equal(first[name], other[name]) for name in first)


def test_empty_poisson_batches_still_add_noise_and_count():
    # Sample rate 1/16 over 16 sequences: P(empty batch) = (15/16)^16, about 0.36 per step.
    model = tiny_adapter_model()
    examples = make_examples(16)
    # no label after the shift: dropped
    examples.append(TrainingExample(("short", 0), [5, 6], [5, -100], [False, False]))
    settings = DPSettings(epsilon=8.0, accountant="rdp")
    result = train_dp(model, examples, PAD, batch_size=1, epochs=1, lr=0.05, settings=settings, seed=0,
                      loss_fn=causal_loss)

    assert result["delta"] == pytest.approx(1 / 16)
    assert result["steps"] == 16
    assert result["empty_batches"] > 0
    assert len(result["losses"]) == 16 - result["empty_batches"]
    # Every step, empty ones included, reached the accountant: the noise multiplier was calibrated
    # for 16 steps, and leaving the 5 empty ones out would have reported about 6.6.
    assert result["empty_batches"] == 5
    assert settings.epsilon - 0.05 < result["epsilon"] <= settings.epsilon


def test_dp_adapter_model_can_start_like_the_non_private_prefix(tiny_tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    from plainsight.training.prefix import prefix_model

    def base():
        torch.manual_seed(0)
        return LlamaForCausalLM(LlamaConfig(vocab_size=len(tiny_tokenizer), hidden_size=32, intermediate_size=64,
                                            num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                                            max_position_embeddings=256))

    text = "The Court notes that the applicant"
    dp = trainable(dp_adapter_model(base(), VIRTUAL_TOKENS, tiny_tokenizer, text))
    plain = trainable(prefix_model(base(), tiny_tokenizer, VIRTUAL_TOKENS, text))
    assert list(dp) == list(plain) == ["prompt_encoder.default.embedding.weight"]
    assert all(torch.equal(dp[name], plain[name]) for name in dp)
    with pytest.raises(ValueError):
        dp_adapter_model(base(), VIRTUAL_TOKENS, tokenizer=tiny_tokenizer)


@pytest.mark.parametrize("stop_in_step", [4, 7])  # last checkpoints (every 3 steps, 4 per epoch): step 3, step 6
def test_interrupted_dp_run_resumes_with_the_same_privacy_accounting(tmp_path, monkeypatch, caplog, stop_in_step):
    from plainsight.training import dp
    from plainsight.training.checkpoints import Checkpoints

    class Interrupted(Exception):
        pass

    def run(checkpoints=None):
        model = tiny_adapter_model()
        result = train_dp(model, make_examples(16), PAD, batch_size=4, epochs=2, lr=0.05,
                          settings=DPSettings(accountant="rdp"), seed=2, loss_fn=causal_loss, checkpoints=checkpoints)
        return trainable(model), result

    expected_state, expected = run()
    assert expected["empty_batches"] == 0  # so backward calls count steps
    checkpoints = Checkpoints(tmp_path / "ckpt", every_steps=3, method="dpsgd")
    real_backward, calls = dp._backward, []

    def interrupting(*args):
        calls.append(1)
        if len(calls) == stop_in_step:
            raise Interrupted
        return real_backward(*args)

    with monkeypatch.context() as patch:
        patch.setattr(dp, "_backward", interrupting)
        with pytest.raises(Interrupted):
            run(checkpoints)
    with caplog.at_level("INFO", logger="plainsight"):
        state, result = run(checkpoints)

    saved_step = 3 * ((stop_in_step - 1) // 3)
    assert f"resuming from checkpoint at epoch {saved_step // 4 + 1} step {saved_step} " in caplog.text
    assert result["steps"] == expected["steps"] == 8
    assert result["epsilon"] == pytest.approx(expected["epsilon"], rel=1e-9)  # the accountant saw all 8 steps
    torch.testing.assert_close(result["losses"], expected["losses"])
    for name in expected_state:
        torch.testing.assert_close(state[name], expected_state[name])
