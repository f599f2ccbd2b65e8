"""Packed linear layers: the same products as `nn.Linear`, swapped in only while decoding."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from plainsight.generation.packed_linear import PACKED_MAX_ROWS, PackedLinear, can_pack, packed_linears
from plainsight.models import load_model

pytestmark = pytest.mark.skipif(
    not torch.backends.mkldnn.is_available(), reason="needs oneDNN (x86 CPU build)"
)


@pytest.fixture
def linear() -> nn.Linear:
    torch.manual_seed(0)
    return nn.Linear(48, 80)


@pytest.mark.parametrize("shape", [(1, 48), (8, 1, 48), (3, 5, 48), (1, PACKED_MAX_ROWS + 1, 48)])
def test_packed_product_equals_linear(linear, shape):
    inputs = torch.randn(*shape)
    packed = PackedLinear(linear, rows_hint=8)
    with torch.inference_mode():
        assert torch.allclose(packed(inputs), linear(inputs), atol=1e-5, rtol=1e-5)


def test_long_inputs_and_gradients_take_the_layer_itself(linear, monkeypatch):
    packed = PackedLinear(linear, rows_hint=4)
    monkeypatch.setattr(torch.ops.mkldnn, "_linear_pointwise", None)  # any call to it would fail
    with torch.inference_mode():
        assert torch.equal(
            packed(torch.ones(PACKED_MAX_ROWS + 1, 48)), linear(torch.ones(PACKED_MAX_ROWS + 1, 48))
        )
    packed(torch.ones(2, 48)).sum().backward()
    assert linear.weight.grad is not None


def test_model_layers_are_swapped_inside_and_restored_after(tiny_model_dir):
    model, _ = load_model(tiny_model_dir)
    originals = {name: module for name, module in model.named_modules() if type(module) is nn.Linear}
    inputs = torch.tensor([[5, 9, 11], [7, 2, 3]])
    with torch.inference_mode():
        expected = model(input_ids=inputs).logits
        with packed_linears(model, rows_hint=2):
            packed = [name for name, module in model.named_modules() if isinstance(module, PackedLinear)]
            logits = model(input_ids=inputs).logits
    assert sorted(packed) == sorted(originals)
    assert torch.allclose(logits, expected, atol=1e-4)
    assert {name: module for name, module in model.named_modules() if type(module) is nn.Linear} == originals


def test_layers_are_restored_after_an_error(tiny_model_dir):
    model, _ = load_model(tiny_model_dir)
    with pytest.raises(RuntimeError, match="decoding failed"), packed_linears(model, rows_hint=2):
        raise RuntimeError("decoding failed")
    assert not any(isinstance(module, PackedLinear) for module in model.modules())


def test_models_that_do_not_gain_are_left_alone(linear):
    double = nn.Sequential(linear.double())
    assert not can_pack(double)
    with packed_linears(double, rows_hint=8):
        assert type(double[0]) is nn.Linear
