"""DP-SGD baseline on a tiny random Llama: per-sample gradients, privacy units, accounting, determinism.

The per-sample check compares Opacus's gradients for a right-padded batch of two with
backward passes over each sequence alone (unpadded), which is what DP-SGD's clipping
relies on; the privacy-unit checks compare one noise-free step with the per-unit sums of
those single-sequence gradients, clipped by hand. Training runs take a second or two each,
mostly Opacus's search for the noise multiplier; tests other than the accounting one use
the quicker RDP accountant.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("opacus")

from plainsight.settings import dp_delta
from plainsight.training.dp import (
    DPSettings,
    DPTrainingSettings,
    dp_adapter_model,
    example_loader,
    make_private,
    per_sequence_loss,
    train_dp,
)
from plainsight.training.examples import TrainingExample, collate
from plainsight.training.loop import Tracking, TrainingSettings

PAD = 0
VIRTUAL_TOKENS = 4


def causal_loss(logits, labels):
    return F.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100
    )


def dp_run(batch_size, epochs, **privacy) -> DPTrainingSettings:
    """A DP-SGD run at learning rate 0.05 under `privacy`, with the RDP accountant."""
    return DPTrainingSettings(batch_size, epochs, 0.05, DPSettings(accountant="rdp", **privacy))


def make_examples(count, seed=0):
    """Short sequences of varied length; the first two tokens play the prompt (no labels)."""
    rng = torch.Generator().manual_seed(seed)
    examples = []
    for _ in range(count):
        length = int(torch.randint(5, 11, (1,), generator=rng))
        ids = torch.randint(1, 600, (length,), generator=rng).tolist()
        examples.append(
            TrainingExample((f"s{len(examples)}", 0), ids, [-100, -100, *ids[2:]], [False] * length)
        )
    return examples


def in_documents(examples, per_document):
    """The same sequences, `per_document` consecutive ones sharing a document id (key[0])."""
    return [
        replace(example, key=(f"d{index // per_document}", index % per_document))
        for index, example in enumerate(examples)
    ]


def single_sequence_gradients(model, examples):
    """The adapter's gradient of each sequence's own loss, from a backward pass over it alone."""
    grads = []
    for example in examples:
        model.zero_grad(set_to_none=True)
        batch = collate([example], PAD)
        causal_loss(
            model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits,
            batch["labels"],
        ).backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters() if p.requires_grad})
    model.zero_grad(set_to_none=True)
    return grads


def tiny_adapter_model(dtype: torch.dtype = torch.float32):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=600,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        pad_token_id=PAD,
    )
    return dp_adapter_model(LlamaForCausalLM(config).to(dtype), num_virtual_tokens=VIRTUAL_TOKENS)


def reparametrised_adapter_model(tiny_tokenizer):
    """The tiny model's prefix trained through the reparametrising MLP, its output layer moved off zero
    so that every layer of the MLP takes a gradient."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        pad_token_id=PAD,
    )
    model = dp_adapter_model(
        LlamaForCausalLM(config), VIRTUAL_TOKENS, tiny_tokenizer, "The Court held.", projection_hidden=16
    )
    torch.nn.init.normal_(model.prompt_encoder[model.active_adapter].transform[-1].weight, std=0.1)
    return model


def trainable(model):
    return {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


def frozen(model):
    return {name: p.detach().clone() for name, p in model.named_parameters() if not p.requires_grad}


@pytest.mark.parametrize("reparametrised", [False, True])
def test_opacus_per_sample_gradients_match_single_sequence_backward(reparametrised, tiny_tokenizer):
    model = reparametrised_adapter_model(tiny_tokenizer) if reparametrised else tiny_adapter_model()
    first, second = make_examples(2, seed=3)
    second = replace(
        second, input_ids=second.input_ids[:4], labels=second.labels[:4], private=second.private[:4]
    )
    examples = [first, second]
    assert len(first.input_ids) > len(second.input_ids)  # the second row is padded

    single = single_sequence_gradients(model, examples)
    assert next(iter(single[0])) == "prompt_encoder.default.embedding.weight"
    assert len(single[0]) == (5 if reparametrised else 1)  # the embedding, and the MLP's two layers

    per_sample = per_sample_gradients(model, examples)
    for name, gradients in per_sample.items():
        assert gradients.shape == (2, *single[0][name].shape)
        for row in range(2):
            assert single[row][name].norm() > 0
            torch.testing.assert_close(gradients[row], single[row][name], atol=1e-5, rtol=0)
        assert not torch.allclose(single[0][name], single[1][name])


def per_sample_gradients(model, examples) -> dict[str, torch.Tensor]:
    """Opacus's per-sample gradient of every trainable parameter, by name, for one batch of `examples`."""
    loader = example_loader(examples, PAD, batch_size=len(examples))
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    _, private_model, _, _ = make_private(
        model, optimizer, loader, DPSettings(accountant="rdp"), epochs=1, delta=0.5
    )
    batch = collate(examples, PAD)
    out = private_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    per_sequence_loss(out.logits, batch["labels"], causal_loss).backward()
    gradients = {name: p.grad_sample.clone() for name, p in model.named_parameters() if p.requires_grad}
    private_model.cleanup()
    return gradients


def test_dp_step_with_a_bfloat16_model_keeps_float32_gradients_close_to_float32():
    """The frozen model in bfloat16, the prefix and its per-sample gradients (clipped and noised by
    Opacus) in float32: within 5% of the float32 model's per-sample gradients (bfloat16 has 8 bits of
    mantissa; a cosine similarity above 0.99 per sequence)."""
    examples = make_examples(4, seed=5)
    (reference,) = per_sample_gradients(tiny_adapter_model(torch.float32), examples).values()
    half_model = tiny_adapter_model(torch.bfloat16)
    (half,) = per_sample_gradients(half_model, examples).values()
    assert [p.dtype for p in half_model.parameters() if p.requires_grad] == [torch.float32]
    assert half.dtype == torch.float32
    for row in range(len(examples)):
        cosine = F.cosine_similarity(half[row].flatten(), reference[row].flatten(), dim=0)
        assert cosine > 0.99, (row, float(cosine))
        assert (half[row].norm() / reference[row].norm() - 1).abs() < 0.05


def test_train_dp_spends_target_epsilon_and_trains_only_the_adapter():
    model = tiny_adapter_model()
    adapter_before, base_before = trainable(model), frozen(model)
    settings = DPSettings(epsilon=8.0)
    result = train_dp(
        model,
        make_examples(16),
        PAD,
        settings=DPTrainingSettings(batch_size=4, epochs=2, learning_rate=0.05, privacy=settings),
        seed=0,
        loss_fn=causal_loss,
    )

    assert result["adapter"] == "prefix"
    assert result["delta"] == pytest.approx(1e-5)
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
        train_dp(
            model,
            make_examples(16),
            PAD,
            settings=dp_run(4, 2),
            seed=seed,
            loss_fn=causal_loss,
        )
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
    settings = dp_run(1, 1, epsilon=8.0)
    result = train_dp(model, examples, PAD, settings=settings, seed=0, loss_fn=causal_loss)

    assert result["delta"] == pytest.approx(1e-5)
    assert result["steps"] == 16
    assert result["empty_batches"] > 0
    assert len(result["losses"]) == 16 - result["empty_batches"]
    # Every step, empty ones included, reached the accountant: the noise multiplier was calibrated
    # for 16 steps, and leaving the 5 empty ones out would have reported about 7.3.
    assert result["empty_batches"] == 5
    assert settings.privacy.epsilon - 0.05 < result["epsilon"] <= settings.privacy.epsilon


def test_dp_adapter_model_can_start_like_the_non_private_prefix(tiny_tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    from plainsight.training.prefix import prefix_model

    def base():
        torch.manual_seed(0)
        return LlamaForCausalLM(
            LlamaConfig(
                vocab_size=len(tiny_tokenizer),
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=1,
                max_position_embeddings=256,
            )
        )

    text = "The Court notes that the applicant"
    dp = trainable(dp_adapter_model(base(), VIRTUAL_TOKENS, tiny_tokenizer, text))
    plain = trainable(prefix_model(base(), tiny_tokenizer, VIRTUAL_TOKENS, text))
    assert list(dp) == list(plain) == ["prompt_encoder.default.embedding.weight"]
    assert all(torch.equal(dp[name], plain[name]) for name in dp)
    with pytest.raises(ValueError):
        dp_adapter_model(base(), VIRTUAL_TOKENS, tokenizer=tiny_tokenizer)


@pytest.mark.parametrize(
    "stop_in_step", [4, 7]
)  # last checkpoints (every 3 steps, 4 per epoch): step 3, step 6
def test_interrupted_dp_run_resumes_with_the_same_privacy_accounting(
    tmp_path, monkeypatch, caplog, stop_in_step
):
    from plainsight.training import dp
    from plainsight.training.checkpoints import Checkpoints

    class Interrupted(Exception):
        pass

    def run(checkpoints=None):
        model = tiny_adapter_model()
        result = train_dp(
            model,
            in_documents(make_examples(32), 2),
            PAD,
            settings=dp_run(4, 2),
            seed=2,
            loss_fn=causal_loss,
            tracking=Tracking(checkpoints=checkpoints),
        )
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
    assert result["steps"] == expected["steps"] == 8  # 16 documents of two sequences, 4 per batch
    assert result["units"] == 16 and result["sequences"] == 32
    assert result["epsilon"] == pytest.approx(expected["epsilon"], rel=1e-9)  # the accountant saw all 8 steps
    torch.testing.assert_close(result["losses"], expected["losses"])
    for name in expected_state:
        torch.testing.assert_close(state[name], expected_state[name])


# --- privacy units ---------------------------------------------------------------------------------


def test_a_unit_of_two_sequences_moves_one_clipped_gradient():
    """Units {0, 2} and {1}, both in the batch (sample rate 1): a noise-free SGD step (lr 1) moves the
    adapter by minus the mean over the expected 2 units of each unit's summed gradient, clipped."""
    from opacus import PrivacyEngine

    from plainsight.training import dp

    model = tiny_adapter_model()
    examples = make_examples(3, seed=3)
    name = "prompt_encoder.default.embedding.weight"
    single = [grads[name] for grads in single_sequence_gradients(model, examples)]
    unit_sums = [single[0] + single[2], single[1]]
    clip = 0.5 * min(g.norm() for g in single + unit_sums).item()  # every one of them is clipped

    loader = example_loader(examples, PAD, batch_size=2, groups=[[0, 2], [1]])
    (weight,) = [p for p in model.parameters() if p.requires_grad]
    before = weight.detach().clone()
    engine = PrivacyEngine(accountant="rdp")
    private_model, optimizer, private_loader = engine.make_private(
        module=model,
        optimizer=torch.optim.SGD([weight], lr=1.0),
        data_loader=loader,
        noise_multiplier=0.0,
        max_grad_norm=clip,
        poisson_sampling=True,
    )
    assert private_loader.sample_rate == 1.0 and optimizer.expected_batch_size == 2
    batch = next(iter(private_loader))
    assert batch["unit"].tolist() == [0, 0, 1]  # sequences 0 and 2 (unit 0), then 1 (unit 1)
    assert (
        batch["input_ids"].tolist()
        == collate([examples[0], examples[2], examples[1]], PAD)["input_ids"].tolist()
    )

    optimizer.zero_grad(set_to_none=True)
    dp._backward(private_model, batch, torch.device("cpu"), causal_loss)
    assert weight.grad_sample.shape == (2, *weight.shape)  # one row per unit, not per sequence
    for row, expected in enumerate(unit_sums):
        torch.testing.assert_close(weight.grad_sample[row], expected, atol=1e-5, rtol=0)
    optimizer.step()
    private_model.cleanup()

    def clipped(g):
        return g * (clip / g.norm())

    step = before - weight.detach()
    torch.testing.assert_close(
        step, (clipped(unit_sums[0]) + clipped(unit_sums[1])) / 2, atol=1e-6, rtol=1e-5
    )
    # The two-sequence unit contributed one term of norm max_grad_norm: its sequences clipped
    # one by one would have moved the adapter by a different step.
    per_sequence = (clipped(single[0]) + clipped(single[2]) + clipped(single[1])) / 2
    assert not torch.allclose(step, per_sequence, atol=1e-4)
    assert (2 * step - clipped(unit_sums[1])).norm() == pytest.approx(clip, rel=1e-4)


def rdp_epsilon(noise_multiplier, sample_rate, steps, delta):
    from opacus.accountants import RDPAccountant

    accountant = RDPAccountant()
    accountant.history = [(noise_multiplier, sample_rate, steps)]
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("units", [None, ["p0", "p0", "p0", "p0", "p1", "p1"]])  # documents, or two patients
def test_document_units_set_the_sample_rate_and_the_accounting(units):
    model = tiny_adapter_model()
    examples = in_documents(make_examples(6), per_document=2)  # documents d0, d1, d2
    result = train_dp(
        model,
        examples,
        PAD,
        settings=dp_run(1, 1),
        seed=0,
        loss_fn=causal_loss,
        units=units,
    )

    count = 3 if units is None else 2
    assert result["privacy_unit"] == "document"
    assert (result["units"], result["sequences"]) == (count, 6)
    assert result["sample_rate"] == pytest.approx(1 / count)  # batch_size / units
    assert result["steps"] == count
    assert result["delta"] == dp_delta(None, count) == 1e-5
    assert result["epsilon"] == pytest.approx(
        rdp_epsilon(result["noise_multiplier"], 1 / count, count, result["delta"]), rel=1e-9
    )


def test_sequence_units_are_every_sequence_alone():
    examples = in_documents(make_examples(6), per_document=2)
    model = tiny_adapter_model()
    result = train_dp(
        model,
        examples,
        PAD,
        settings=dp_run(1, 1, privacy_unit="sequence"),
        seed=0,
        loss_fn=causal_loss,
    )
    assert (result["privacy_unit"], result["units"], result["sequences"]) == ("sequence", 6, 6)
    assert result["sample_rate"] == pytest.approx(1 / 6)  # batch_size / sequences
    assert result["steps"] == 6
    assert result["epsilon"] == pytest.approx(
        rdp_epsilon(result["noise_multiplier"], 1 / 6, 6, 1e-5), rel=1e-9
    )

    # Document units of one sequence each train exactly the same adapter.
    alone = tiny_adapter_model()
    same = train_dp(
        alone,
        examples,
        PAD,
        settings=dp_run(1, 1),
        seed=0,
        loss_fn=causal_loss,
        units=[f"u{i}" for i in range(6)],
    )
    # the same steps, stated over what each run protects (a unit, or a sequence)
    stated = ("privacy_unit", "protects")
    assert {key: value for key, value in same.items() if key not in stated} == {
        key: value for key, value in result.items() if key not in stated
    }
    assert (same["protects"], result["protects"]) == ("unit", "sequence")
    after, expected = trainable(alone), trainable(model)
    assert all(torch.equal(after[name], expected[name]) for name in expected)


def test_a_configured_delta_is_the_runs():
    model = tiny_adapter_model()
    result = train_dp(
        model,
        make_examples(4),
        PAD,
        settings=dp_run(2, 1, delta=1e-3),
        seed=0,
        loss_fn=causal_loss,
    )
    assert result["delta"] == 1e-3


def test_a_dp_adapters_params_give_its_run():
    dpsgd = {"epsilon": 3.0, "max_grad_norm": 0.5, "privacy_unit": "sequence", "delta": None}
    params = {"epochs": 2, "learning_rate": 0.01, "batch_size": 8, "max_length": 128, "dp": dpsgd}
    settings = DPTrainingSettings.from_params(params)
    privacy = DPSettings(epsilon=3.0, max_grad_norm=0.5, privacy_unit="sequence")
    assert settings == DPTrainingSettings(batch_size=8, epochs=2, learning_rate=0.01, privacy=privacy)
    assert settings.loop_settings(40) == TrainingSettings(2, 0.01, 8, 40, weight_decay=0.0)


def test_privacy_unit_is_checked():
    with pytest.raises(ValueError, match="privacy_unit"):
        DPSettings(privacy_unit="patient")
    with pytest.raises(ValueError, match="2 units for 3 examples"):
        train_dp(
            tiny_adapter_model(),
            make_examples(3),
            PAD,
            settings=dp_run(1, 1),
            seed=0,
            loss_fn=causal_loss,
            units=["a", "b"],
        )


def test_a_physical_batch_splits_the_step_but_not_the_sampling_or_the_accounting():
    """Documents of two sequences, Poisson batches of two documents expected, passed one document at a
    time (a physical batch of two sequences): the same Poisson batches, noise multiplier and epsilon,
    and the same adapter to float rounding (each unit clipped as before, the same noise once per step),
    while no forward pass holds more than one document."""
    examples = in_documents(make_examples(12), per_document=2)
    runs = []
    for physical_batch_size in (None, 2):
        model = tiny_adapter_model()
        passes = []
        model.register_forward_pre_hook(
            lambda _, args, kwargs, passes=passes: passes.append(kwargs["input_ids"].shape[0]),
            with_kwargs=True,
        )
        result = train_dp(
            model,
            examples,
            PAD,
            settings=replace(dp_run(2, 2), physical_batch_size=physical_batch_size),
            seed=0,
            loss_fn=causal_loss,
        )
        runs.append((result, trainable(model), passes))
    (whole, whole_adapter, whole_passes), (split, split_adapter, split_passes) = runs

    def drawn(result):
        return [(h["units"], h["sequences"]) for h in result["history"]]

    assert drawn(split) == drawn(whole) and max(h["units"] for h in whole["history"]) > 1
    for key in ("epsilon", "noise_multiplier", "sample_rate", "steps", "empty_batches", "delta"):
        assert split[key] == whole[key], key
    assert split["losses"] == pytest.approx(whole["losses"], rel=1e-5)
    for name in whole_adapter:
        torch.testing.assert_close(split_adapter[name], whole_adapter[name], rtol=1e-4, atol=1e-6)
    assert max(whole_passes) > 2 and max(split_passes) == 2
    assert sum(split_passes) == sum(whole_passes)  # every sequence once per step, in either case
