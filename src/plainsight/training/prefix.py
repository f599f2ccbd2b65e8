"""Prefix tuning (peft `PrefixTuningConfig`) for a causal LM.

A prefix is a learned key/value cache of `num_virtual_tokens` positions that
every layer attends to before the prompt. It starts as the base model's own
cache on the opening tokens of a real document, so the untrained prefixed model
behaves exactly as if it had just read those tokens and still writes fluent
text; a random prefix makes a small model produce garbage.

Layout of the prefix in peft 0.21 (`prefix_projection=False`): one
`nn.Embedding(num_virtual_tokens, num_layers * 2 * token_dim)`. For
grouped-query attention peft sets `token_dim = num_key_value_heads * head_dim`
(not the hidden size) and `num_attention_heads = num_key_value_heads`;
`get_prompt` views each row as `[num_layers * 2, kv_heads, head_dim]` and takes
the pairs (2l, 2l + 1) as layer l's keys and values. So row t is
`[K_0[t], V_0[t], K_1[t], V_1[t], ...]`, each flattened heads-major.

Positions: the prefix occupies cache positions 0..k-1 and peft shifts the
prompt's position ids by k (in `forward` the model counts on from the cache
length; in `generate` peft adds k to the ids computed from the unprefixed
attention mask, so left padding is handled). The cached keys already carry
their rotary rotation for positions 0..k-1, so prefix + prompt matches the base
model reading `init_tokens + prompt` exactly.

Generation (`plainsight.generation.slots`) takes the prefix's keys and values from
`get_prompt` and puts them in front of each prompt in its own cache; the base
model's `generate` alone never sees the prefix.

Reparametrisation (`projection_hidden`): training raw key/value rows is known to
be unstable and slow, so, as peft's `prefix_projection` does, the rows can be
trained through a two-layer MLP over small prefix embeddings. Here the MLP adds
to the initial rows and its output layer starts at zero, so the untrained prefix
is still the base model's cache on the init text. peft saves the encoder's
output, so a saved adapter holds plain rows (the MLP folded away) and loads
without it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import torch

from plainsight.io import atomic_directory
from plainsight.rng import cuda_indices, seeded_torch

log = logging.getLogger(__name__)


def init_token_ids(tokenizer, init_text: str, num_virtual_tokens: int) -> list[int]:
    """The first `num_virtual_tokens` tokens of `init_text`, the text repeated when it is shorter."""
    ids = tokenizer(init_text, add_special_tokens=False).input_ids  # prompts are encoded the same way
    if not ids:
        raise ValueError("init_text has no tokens")
    repeats = -(-num_virtual_tokens // len(ids))
    return (ids * repeats)[:num_virtual_tokens]


@torch.no_grad()
def _base_prefix_rows(
    base_model, token_ids: list[int], num_layers: int, kv_heads: int, head_dim: int
) -> torch.Tensor:
    """The base model's own cache on `token_ids`, laid out as peft's prefix embedding rows."""
    device = next(base_model.parameters()).device
    was_training = base_model.training
    base_model.eval()
    try:
        output = base_model(input_ids=torch.tensor([token_ids], device=device), use_cache=True)
    finally:
        base_model.train(was_training)
    cache = output.past_key_values
    if len(cache.layers) != num_layers:
        raise ValueError(f"the model cached {len(cache.layers)} layers, the prefix expects {num_layers}")
    per_layer = []
    for index, layer in enumerate(cache.layers):
        keys, values = layer.keys, layer.values  # [1, kv_heads, tokens, head_dim], keys after rotary
        if keys.shape[1:] != (kv_heads, len(token_ids), head_dim) or values.shape != keys.shape:
            raise ValueError(
                f"layer {index}: cache shape {tuple(keys.shape)} does not fit the prefix "
                f"({kv_heads} key/value heads of size {head_dim}); unsupported architecture"
            )
        # [tokens, kv_heads * head_dim]: per token, heads-major, as get_prompt's view expects
        per_layer.append(keys[0].transpose(0, 1).reshape(len(token_ids), -1))
        per_layer.append(values[0].transpose(0, 1).reshape(len(token_ids), -1))
    return torch.cat(per_layer, dim=1)


class ReparametrisedPrefix(torch.nn.Module):
    """Prefix rows = initial rows + MLP(prefix embedding), the MLP's output layer zero at the start.

    Called by peft with the prefix token indices [batch, tokens]; returns rows [batch, tokens, width].
    """

    def __init__(self, rows: torch.Tensor, embedding_dim: int, hidden: int):
        super().__init__()
        tokens, width = rows.shape
        self.register_buffer("initial_rows", rows.detach().clone())
        self.embedding = torch.nn.Embedding(tokens, embedding_dim)  # peft reads its device
        self.transform = torch.nn.Sequential(
            torch.nn.Linear(embedding_dim, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, width)
        )
        torch.nn.init.zeros_(self.transform[-1].weight)
        torch.nn.init.zeros_(self.transform[-1].bias)

    def forward(self, prefix_tokens: torch.Tensor) -> torch.Tensor:
        return self.initial_rows[prefix_tokens] + self.transform(self.embedding(prefix_tokens))


def prefix_model(
    base_model,
    tokenizer,
    num_virtual_tokens: int,
    init_text: str,
    projection_hidden: int | None = None,
    seed: int = 0,
):
    """Wrap `base_model` (in place) with a trainable prefix initialised from `init_text`; only the
    prefix trains.

    With `projection_hidden`, the prefix trains through a reparametrising MLP of that width
    (`ReparametrisedPrefix`), which saving folds away. Its random layers are drawn from generators
    seeded with `seed`, never from the process's: the MLP's zero output layer leaves the first step's
    loss alone, but its other layers set the direction of the first update.
    """
    from peft import PrefixTuningConfig, TaskType, get_peft_model

    if num_virtual_tokens < 1:
        raise ValueError("num_virtual_tokens must be at least 1")
    config = PrefixTuningConfig(
        task_type=TaskType.CAUSAL_LM, num_virtual_tokens=num_virtual_tokens, prefix_projection=False
    )
    # peft's random embedding init, overwritten below, draws from seeded generators: the caller's stay
    # as they were.
    with seeded_torch(seed, "prefix", devices=cuda_indices(next(base_model.parameters()).device)):
        model = get_peft_model(base_model, config)
    config = model.active_peft_config  # now holds num_layers, token_dim and (for GQA) the key/value heads
    kv_heads = config.num_attention_heads
    head_dim = config.token_dim // kv_heads
    token_ids = init_token_ids(tokenizer, init_text, num_virtual_tokens)
    rows = _base_prefix_rows(model.get_base_model(), token_ids, config.num_layers, kv_heads, head_dim)
    embedding = model.prompt_encoder[model.active_adapter].embedding
    if rows.shape != embedding.weight.shape:
        raise ValueError(
            f"prefix rows {tuple(rows.shape)} do not match peft's embedding {tuple(embedding.weight.shape)}"
        )
    with torch.no_grad():
        embedding.weight.copy_(rows.to(embedding.weight.dtype))
    if projection_hidden is not None:
        with seeded_torch(seed, "prefix projection"):  # built on the CPU, then moved
            encoder = ReparametrisedPrefix(embedding.weight, config.token_dim, projection_hidden)
        model.prompt_encoder[model.active_adapter] = encoder.to(embedding.weight.device)
    trainable, total = model.get_nb_trainable_parameters()
    log.info(
        "prefix of %d virtual tokens: %d trainable parameters of %d (%.4f%%)",
        num_virtual_tokens,
        trainable,
        total,
        100 * trainable / total,
    )
    return model


def save_adapter(model, directory: str | Path, metadata: dict[str, Any] | None = None) -> None:
    """Save only the prefix (peft `save_pretrained`) and `metadata` as JSON files (name -> object)
    beside it; the directory appears complete or not at all."""
    with atomic_directory(directory) as staging:
        model.save_pretrained(staging)
        for name, content in (metadata or {}).items():
            (staging / name).write_text(
                json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
    log.info("saved prefix adapter to %s", directory)


def load_adapter(base_model, directory: str | Path):
    """A saved prefix on `base_model`, frozen and in eval mode, for generation."""
    from peft import PeftModel

    model = PeftModel.from_pretrained(base_model, str(directory), is_trainable=False)
    model.requires_grad_(False)  # peft leaves the prompt encoder's weight trainable even here
    model.eval()
    return model
