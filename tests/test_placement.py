"""Device and precision as configuration: `model.device` and `model.dtype`, resolved per machine."""

from __future__ import annotations

import logging

import pytest
import torch

from conftest import GPU, device
from plainsight.errors import InputError
from plainsight.models import (
    load_model,
    model_placement,
    placement_record,
    resolve_device,
    resolve_dtype,
    resolve_placement,
)


def visible_gpus(monkeypatch, count: int, bf16: bool = True) -> None:
    """Pretend `count` CUDA devices are visible (supporting bfloat16 or not)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: bf16)
    monkeypatch.setattr(torch.cuda, "device", lambda device: _NoDevice())


class _NoDevice:
    """Stands in for `torch.cuda.device(...)`, which needs a real GPU."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize(
    "setting, gpus, expected",
    [
        ("auto", 0, "cpu"),
        ("auto", 2, "cuda:0"),
        ("cpu", 2, "cpu"),
        ("cuda", 1, "cuda:0"),
        ("cuda:1", 2, "cuda:1"),
    ],
)
def test_device_settings(monkeypatch, setting, gpus, expected):
    visible_gpus(monkeypatch, gpus)
    assert resolve_device(setting) == torch.device(expected)


@pytest.mark.parametrize("setting, gpus", [("cuda", 0), ("cuda:0", 0), ("cuda:2", 2)])
def test_a_cuda_device_that_is_not_visible_is_a_one_line_error(monkeypatch, setting, gpus):
    visible_gpus(monkeypatch, gpus)
    with pytest.raises(
        InputError,
        match=rf"^config: model.device: {setting}: no such CUDA device is visible here "
        rf"\({gpus} visible\)",
    ) as error:
        resolve_device(setting)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("setting", ["gpu", "cuda:", "CUDA", "cuda:x"])
def test_a_malformed_device_names_the_setting(setting):
    with pytest.raises(InputError, match="model.device"):
        resolve_device(setting)


@pytest.mark.parametrize(
    "device, bf16, expected",
    [
        ("cpu", True, torch.float32),
        ("cuda:0", True, torch.bfloat16),
        ("cuda:0", False, torch.float16),
    ],
)
def test_auto_dtype(monkeypatch, device, bf16, expected):
    visible_gpus(monkeypatch, 1, bf16=bf16)
    assert resolve_dtype("auto", torch.device(device)) == expected


@pytest.mark.parametrize(
    "setting, expected",
    [
        ("float32", torch.float32),
        ("bfloat16", torch.bfloat16),
        ("float16", torch.float16),
    ],
)
def test_explicit_dtypes(setting, expected):
    assert resolve_dtype(setting, torch.device("cuda", 0)) == expected


@pytest.mark.parametrize("setting", ["bfloat16", "float16"])
def test_half_precision_on_the_cpu_is_a_one_line_warning_naming_the_setting(setting, caplog):
    with caplog.at_level(logging.WARNING, logger="plainsight.models"):
        assert resolve_dtype(setting, torch.device("cpu")) == getattr(torch, setting)
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert (
        record.getMessage().startswith(f"model.dtype: {setting} on the CPU")
        and "\n" not in record.getMessage()
    )


def test_float32_on_the_cpu_warns_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="plainsight.models"):
        resolve_dtype("float32", torch.device("cpu"))
        resolve_dtype("auto", torch.device("cpu"))
    assert not caplog.records


def test_a_bad_dtype_names_the_setting():
    with pytest.raises(InputError, match="model.dtype: 'fp8' is not auto, float32, bfloat16, float16"):
        resolve_dtype("fp8", torch.device("cpu"))


def test_the_model_block_resolves_to_a_placement():
    assert resolve_placement({"device": "cpu", "dtype": "auto"}) == (torch.device("cpu"), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_load_model_places_the_model_and_records_where(tiny_model_dir, dtype):
    model, _ = load_model(tiny_model_dir, torch.device("cpu"), dtype)
    assert {(p.device.type, p.dtype) for p in model.parameters()} == {("cpu", dtype)}
    assert (
        model_placement(model)
        == placement_record(torch.device("cpu"), dtype)
        == {"device": "cpu", "dtype": str(dtype).removeprefix("torch.")}
    )


@GPU
def test_auto_places_the_model_on_the_first_gpu_in_half_precision(tiny_model_dir):
    first_gpu = device("cuda:0")
    placement = resolve_placement({"device": "auto", "dtype": "auto"})
    assert placement[0] == first_gpu and placement[1] in (torch.bfloat16, torch.float16)
    model, _ = load_model(tiny_model_dir, *placement)
    assert {(p.device, p.dtype) for p in model.parameters()} == {placement}
    assert model_placement(model)["device"] == "cuda:0"
    assert not torch.backends.cuda.cudnn_sdp_enabled()  # its per-length host cost, see avoid_cudnn_attention


def test_a_gguf_file_is_read_once_within_the_conversion_and_the_reader_restored_after(tmp_path):
    import gguf
    import numpy as np

    from plainsight.models import gguf_read_once

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(50)])
    writer.add_tensor("w", np.arange(6, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    reader_class = gguf.GGUFReader
    with gguf_read_once():
        first, again = gguf.GGUFReader(path), gguf.GGUFReader(str(path))
        assert first is again  # the config's, the tokenizer's and the weights' reads share one parse
        assert list(first.tensors[0].data) == [0, 1, 2, 3, 4, 5]
    assert gguf.GGUFReader is reader_class and gguf.GGUFReader(path) is not first
