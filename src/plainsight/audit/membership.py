"""Membership inference: can an attacker tell the fine-tuning segments from held-out ones?

Each text is scored by a model in the prompt format its adapter was trained on (the real control
code, then the document: `plainsight.training.examples.build_example`, truncated as in training), on
its document tokens only. One forward pass per text and model gives every score:

- loss: the mean negative log-likelihood (Yeom et al. 2018); lower means member;
- zlib: the summed negative log-likelihood over the zlib-compressed length of the scored text
  (Carlini et al. 2021), so texts that are merely easy to predict do not look like members;
- min-k%: the mean log-probability of the k% least likely tokens (Shi et al. 2024);
- reference: the target model's loss minus the base model's on the same text (Carlini et al.
  2021's reference-model attack; the base model is the model the adapter was trained on).

Every attack score is oriented so that higher means "member". AUC and TPR at a fixed FPR come
from `plainsight.audit.roc`, with a percentile bootstrap that resamples members and non-members
separately.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from plainsight.audit.roc import CONTROL_MODEL, balanced_sets
from plainsight.errors import InputError
from plainsight.methods.trained import training_keys
from plainsight.progress import Progress
from plainsight.training.examples import TrainingExample, coded_examples
from plainsight.training.objectives import IGNORE_INDEX
from plainsight.training.prefix import load_adapter
from plainsight.training.scoring import scored_batches

SCORE_COLUMNS = {
    "model": "string",
    "doc_id": "string",
    "segment": "int64",
    "split": "string",
    "member": "bool",
    "tokens": "int64",
    "nll_sum": "float64",
    "nll_mean": "float64",
    "zlib_bytes": "int64",
    "min_k": "float64",
}


@dataclass(frozen=True)
class ScoringSettings:
    max_length: int  # tokens per example, as the adapters were trained (`prefix_tuning.max_length`)
    batch_size: int = 8
    min_k_share: float = 0.2  # min-k%: the share of least likely tokens averaged


# --- the attacks: pure functions of one text's token log-probabilities -------------------------


def zlib_bytes(text: str) -> int:
    """Length in bytes of the zlib-compressed UTF-8 text (at least 1)."""
    return max(1, len(zlib.compress(text.encode("utf-8"))))


def min_k_mean(log_probs: np.ndarray, share: float) -> float:
    """Mean of the ceil(share x n) lowest token log-probabilities (nan for no tokens)."""
    if len(log_probs) == 0:
        return math.nan
    count = max(1, math.ceil(share * len(log_probs)))
    return float(np.sort(log_probs)[:count].mean())


# --- scoring -----------------------------------------------------------------------------------


def document_log_probs(
    model,
    examples: Sequence[TrainingExample],
    pad_token_id: int,
    batch_size: int,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """Log-probability of every document token of each example (`plainsight.training.scoring`)."""
    out: list[np.ndarray] = [np.empty(0)] * len(examples)
    for batch in scored_batches(model, examples, pad_token_id, batch_size, progress):
        for row, index in enumerate(batch.positions):
            out[index] = batch.log_probs[row][batch.labelled[row]].cpu().numpy().astype(np.float64)
    return out


def score_rows(
    model_name: str,
    examples: Sequence[TrainingExample],
    log_probs: Sequence[np.ndarray],
    members: set[tuple[str, int]],
    splits: Mapping[tuple[str, int], str],
    tokenizer,
    min_k_share: float,
) -> pd.DataFrame:
    """One row per text: the model's token statistics from which every attack is computed."""
    rows = []
    for example, values in zip(examples, log_probs):
        scored_text = tokenizer.decode(
            [t for t in example.labels if t != IGNORE_INDEX], skip_special_tokens=True
        )
        rows.append(
            (
                model_name,
                example.key[0],
                example.key[1],
                splits[example.key],
                example.key in members,
                len(values),
                float(-values.sum()),
                float(-values.mean()) if len(values) else math.nan,
                zlib_bytes(scored_text),
                min_k_mean(values, min_k_share),
            )
        )
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS)).astype(SCORE_COLUMNS)


def membership_texts(
    codes: pd.DataFrame, seed: int, codes_file: str = "codes"
) -> tuple[list[tuple[str, int]], set[tuple[str, int]], dict[tuple[str, int], str]]:
    """The balanced texts to score (members first), the member set, and each text's split.

    Members are the fine-tuning segments (train split), non-members the held-out (dev, test) ones.
    """
    splits = {
        (str(d), int(s)): str(split) for d, s, split in zip(codes["doc_id"], codes["segment"], codes["split"])
    }
    held_out = [key for key, split in splits.items() if split != "train"]
    if not held_out:
        raise InputError(
            codes_file, None, "no held-out (dev or test) segments: membership inference needs non-members"
        )
    members, non_members = balanced_sets(training_keys(codes), held_out, seed)
    if not members:
        raise InputError(
            codes_file, None, "no fine-tuning (train) segments: membership inference needs members"
        )
    return members + non_members, set(members), splits


def adapter_folder(folder: str | Path) -> Path:
    """A trained adapter's folder, checked for its training record before anything is scored."""
    path = Path(folder)
    if not (path / "training.json").is_file():
        raise InputError(
            path, None, "adapter folder without training.json (an incomplete or foreign adapter)"
        )
    return path


def membership_scores(
    base_model,
    tokenizer,
    adapters: Mapping[str, str | Path],
    codes: pd.DataFrame,
    texts: Mapping[tuple[str, int], str],
    settings: ScoringSettings,
    seed: int,
    codes_file: str = "codes",
) -> pd.DataFrame:
    """Token statistics of every audited text under the base model and under each adapter (loaded on
    the base model in turn, as generation loads it); the base model's pass is the control row and
    every adapter's reference."""
    folders = {name: adapter_folder(folder) for name, folder in adapters.items()}
    keys, members, splits = membership_texts(codes, seed, codes_file)
    # each text as its training example: its real code, then its document, truncated as in training
    examples = coded_examples(codes, texts, keys, tokenizer, settings.max_length)
    frames = []
    with Progress(len(examples) * (1 + len(folders)), "membership scores", "texts") as progress:
        for name, folder in [(CONTROL_MODEL, None), *folders.items()]:
            model = base_model if folder is None else load_adapter(base_model, folder)
            log_probs = document_log_probs(
                model, examples, tokenizer.pad_token_id, settings.batch_size, progress
            )
            frames.append(
                score_rows(name, examples, log_probs, members, splits, tokenizer, settings.min_k_share)
            )
    return pd.concat(frames, ignore_index=True)
