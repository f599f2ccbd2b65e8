"""Linear layers for CPU decoding, their weights packed once for oneDNN.

A decoding step multiplies a few rows (one per batch slot) by every weight
matrix of the model, so it is bound by reading the weights. PyTorch's default
CPU product (MKL) packs the weight again on every call once there is more than
one row: at 2-16 rows the linear layers of SmolLM2-135M take about 1.5-2x as
long as at one row on 2 AVX2 cores, which eats what batching gains. oneDNN's
product with the weight reordered once into its own blocked layout reads it
once per call (measured: 38 ms instead of 59 ms at 8 rows, 28 ms instead of
38 ms at one). Products with many rows (a prompt's prefill) keep the default
kernel, which is the faster one there.

The reorder and product are the operators PyTorch's own compiler uses for
frozen CPU linear layers (`torch.ops.mkldnn._reorder_linear_weight`,
`torch.ops.mkldnn._linear_pointwise`). `packed_linears` swaps them in for the
duration of a decoding run and puts the model's layers back afterwards, so
training in the same process sees the model it loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

# Above this many rows (tokens) a product goes to the default kernel: prefill is compute-bound,
# and MKL is faster there.
PACKED_MAX_ROWS = 64


class PackedLinear(nn.Module):
    """An `nn.Linear` for inference whose weight is reordered once for oneDNN; `rows_hint` is the
    number of rows the layout is tuned for (the batch slots)."""

    def __init__(self, linear: nn.Linear, rows_hint: int):
        super().__init__()
        self.linear = linear
        self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), rows_hint)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.shape[:-1].numel() > PACKED_MAX_ROWS or torch.is_grad_enabled():
            return self.linear(inputs)
        return torch.ops.mkldnn._linear_pointwise(
            inputs, self.packed_weight, self.linear.bias, "none", [], ""
        )


def can_pack(model: nn.Module) -> bool:
    """Whether the model runs float32 on a CPU with oneDNN, where packing pays."""
    parameter = next(model.parameters())
    return (
        parameter.device.type == "cpu"
        and parameter.dtype == torch.float32
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    )


@contextmanager
def packed_linears(model: nn.Module, rows_hint: int) -> Iterator[None]:
    """Within the block the model's `nn.Linear` layers run as `PackedLinear` (a no-op where
    `can_pack` says no); the original layers are back afterwards, also after an error."""
    if not can_pack(model):
        yield
        return
    swapped = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is nn.Linear
    ]
    try:
        for parent, name, child in swapped:
            setattr(parent, name, PackedLinear(child, rows_hint))
        yield
    finally:
        for parent, name, child in swapped:
            setattr(parent, name, child)
