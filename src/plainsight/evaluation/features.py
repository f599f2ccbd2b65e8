"""Sentence features of texts, for MAUVE and FID (plainsight.evaluation.mauve_score) and the privacy
audit's nearest documents (plainsight.audit).

- `minilm` (default): the shipped sentence embedder (`plainsight.sentence_embedder`, which the
  generation stage uses too), loaded once per process (mean-pooled, normalised; offline);
- any other value: a Hugging Face model id or folder, whose last hidden state at the last token is
  the feature, as `mauve-text` itself does with gpt2-large.

The featurizer runs on `model.device` in `model.dtype`; the features go to the host as float32.
Featurizing logs its progress (texts done, tokens/s, time left) every 30 s (`plainsight.progress`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from plainsight.models import CPU
from plainsight.progress import Progress
from plainsight.sentence_embedder import EMBEDDED, embed

EMBEDDED_FEATURIZER = EMBEDDED


@dataclass(frozen=True)
class FeatureSettings:
    featurizer: str = EMBEDDED_FEATURIZER
    max_tokens: int = 256  # tokens per text given to the featurizer
    device: torch.device = CPU  # where the featurizer runs
    dtype: torch.dtype = torch.float32  # the featurizer's weights


def sentence_features(
    texts: Sequence[str], settings: FeatureSettings, batch_size: int = 16, desc: str = "features"
) -> np.ndarray:
    return embed(texts, EMBEDDED, settings.max_tokens, settings.device, settings.dtype, batch_size, desc)


@torch.inference_mode()
def last_token_features(
    texts: Sequence[str], settings: FeatureSettings, batch_size: int = 8, desc: str = "features"
) -> np.ndarray:
    """The last layer's hidden state at each text's last token (right padding, so its index is known)."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(settings.featurizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    model = AutoModel.from_pretrained(
        settings.featurizer, dtype=settings.dtype, device_map=settings.device
    ).eval()
    rows = []
    with Progress(len(texts), desc, "texts") as progress:
        for start in range(0, len(texts), batch_size):
            encoded = tokenizer(
                list(texts[start : start + batch_size]),
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=settings.max_tokens,
            ).to(settings.device)
            hidden = model(**encoded).last_hidden_state
            last = encoded.attention_mask.sum(dim=1) - 1
            rows.append(
                hidden[torch.arange(hidden.shape[0], device=settings.device), last].float().cpu().numpy()
            )
            progress.update(len(rows[-1]), tokens=int(encoded.attention_mask.sum()))
    return np.concatenate(rows)


def featurize(texts: Sequence[str], settings: FeatureSettings, desc: str = "features") -> np.ndarray:
    if not texts:
        raise ValueError("no texts to featurize")
    # An empty generation still is a sample of the method; give the featurizer a space, not nothing.
    texts = [text if text.strip() else " " for text in texts]
    if settings.featurizer == EMBEDDED_FEATURIZER:
        return sentence_features(texts, settings, desc=desc)
    return last_token_features(texts, settings, desc=desc)
