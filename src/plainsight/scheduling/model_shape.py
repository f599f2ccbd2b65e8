"""What the estimates need of a decoder-only transformer, from its config.json, the shapes of
resources/model_shapes.yaml, or the size in its name."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_SIZE_IN_NAME = re.compile(r"(\d+(?:\.\d+)?)([mb])(?![a-z])", re.IGNORECASE)

# gpt2-style config keys and their Llama-style names
_CONFIG_ALIASES = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads"}


@dataclass(frozen=True)
class ModelShape:
    """What the estimates need of a decoder-only transformer."""

    parameters: int
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int

    @classmethod
    def from_config(cls, architecture: Mapping) -> ModelShape:
        """From transformers config keys (a config.json, or an entry of resources/model_shapes.yaml)."""
        architecture = {_CONFIG_ALIASES.get(key, key): value for key, value in architecture.items()}
        hidden, heads = architecture["hidden_size"], architecture.get("num_attention_heads", 1)
        head_dim = architecture.get("head_dim") or hidden // heads
        kv_heads = architecture.get("num_key_value_heads") or heads
        attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
        # gate, up and down projections; gpt2 and the BERT family: up and down
        gated = architecture.get("model_type") not in ("gpt2", "bert", "roberta")
        mlp = (3 if gated else 2) * hidden * (architecture.get("intermediate_size") or 4 * hidden)
        embeddings = (
            (architecture["vocab_size"] + architecture.get("n_positions", 0))
            * hidden
            * (1 if architecture.get("tie_word_embeddings", True) else 2)
        )
        layers = architecture["num_hidden_layers"]
        return cls(
            embeddings + layers * (attention + mlp),
            layers,
            hidden,
            kv_heads,
            head_dim,
            architecture["vocab_size"],
        )

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.head_dim


def model_shape(name_or_path: str, known_shapes: Mapping[str, Mapping] | None = None) -> ModelShape | None:
    """The shape from a model folder's config.json, else from `known_shapes` by name; None if neither
    has it."""
    config_file = Path(name_or_path) / "config.json"
    if config_file.is_file():
        return ModelShape.from_config(json.loads(config_file.read_text(encoding="utf-8")))
    if known_shapes and name_or_path in known_shapes:
        return ModelShape.from_config(known_shapes[name_or_path])
    return None


def model_parameters(name_or_path: str, known_shapes: Mapping[str, Mapping] | None = None) -> int:
    """Parameter count from `model_shape`, else from the size in the name (-135M, -1.3B)."""
    shape = model_shape(name_or_path, known_shapes)
    if shape is not None:
        return shape.parameters
    sizes = _SIZE_IN_NAME.findall(Path(name_or_path).name)
    if not sizes:
        raise ValueError(
            f"cannot tell the parameter count of model {name_or_path!r}: set resources.model_parameters"
        )
    number, unit = sizes[-1]
    return round(float(number) * (1e6 if unit.lower() == "m" else 1e9))
