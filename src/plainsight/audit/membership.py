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
from scikit-learn's ROC, with a percentile bootstrap that resamples members and non-members
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
import torch

from plainsight.errors import InputError
from plainsight.methods.trained import training_keys
from plainsight.progress import Progress
from plainsight.rng import stable_rng
from plainsight.training.examples import TrainingExample, coded_examples, collate
from plainsight.training.objectives import IGNORE_INDEX
from plainsight.training.prefix import load_adapter

ATTACKS = ("loss", "zlib", "min_k", "reference")
CONTROL_MODEL = "base"  # the model name of the control rows: the base model without an adapter
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


@dataclass(frozen=True)
class RocSummary:
    auc: float
    auc_low: float
    auc_high: float
    tpr: dict[float, float]  # TPR at each FPR bound
    tpr_low: dict[float, float]
    tpr_high: dict[float, float]
    members: int
    non_members: int


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


def attack_scores(target: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """The four attack scores (higher = member) of one model's rows, with the base model's rows of
    the same texts (matched on doc_id and segment) as the reference. Texts without a scored document
    token (a code that fills `max_length`, as in training) are left out."""
    keys = ["doc_id", "segment"]
    joined = target.merge(
        base[[*keys, "nll_mean"]],
        on=keys,
        how="left",
        suffixes=("", "_base"),
        validate="one_to_one",
        indicator=True,
    )
    if (joined["_merge"] != "both").any():
        raise ValueError("the base model did not score every text of the target model")
    joined = joined[joined["tokens"] > 0].reset_index(drop=True)
    return pd.DataFrame(
        {
            "doc_id": joined["doc_id"],
            "segment": joined["segment"],
            "member": joined["member"].astype(bool),
            "loss": -joined["nll_mean"],
            "zlib": -joined["nll_sum"] / joined["zlib_bytes"],
            "min_k": joined["min_k"],
            "reference": joined["nll_mean_base"] - joined["nll_mean"],
        }
    )


def tpr_at_fpr(member: np.ndarray, score: np.ndarray, fpr_bound: float) -> float:
    """The highest TPR of a threshold whose FPR is at most `fpr_bound`."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(member, score)
    return _tpr_within(fpr, tpr, fpr_bound)


def _tpr_within(fpr: np.ndarray, tpr: np.ndarray, fpr_bound: float) -> float:
    return float(tpr[fpr <= fpr_bound + 1e-12].max())


def roc_point(
    member: np.ndarray, score: np.ndarray, fpr_bounds: Sequence[float]
) -> tuple[float, list[float]]:
    """AUC (the area under scikit-learn's ROC, as roc_auc_score computes it) and the TPR at each FPR bound."""
    from sklearn.metrics import auc, roc_curve

    fpr, tpr, _ = roc_curve(member, score)
    return float(auc(fpr, tpr)), [_tpr_within(fpr, tpr, bound) for bound in fpr_bounds]


def roc_summary(
    member: Sequence[bool],
    score: Sequence[float],
    fpr_bounds: Sequence[float] = (0.01, 0.1),
    resamples: int = 1000,
    seed: int = 0,
) -> RocSummary:
    """AUC and TPR at each FPR bound, with 95% percentile bootstrap intervals (members and
    non-members resampled separately, so every resample has both)."""
    member, score = np.asarray(member, dtype=bool), np.asarray(score, dtype=float)
    positives, negatives = np.flatnonzero(member), np.flatnonzero(~member)
    if len(positives) == 0 or len(negatives) == 0:
        raise ValueError(f"a ROC needs members and non-members: {len(positives)} and {len(negatives)}")
    auc, tprs = roc_point(member, score, fpr_bounds)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        chosen = np.concatenate(
            [rng.choice(positives, len(positives)), rng.choice(negatives, len(negatives))]
        )
        resampled_auc, resampled_tprs = roc_point(member[chosen], score[chosen], fpr_bounds)
        draws.append([resampled_auc, *resampled_tprs])
    low, high = (
        np.percentile(np.array(draws), [2.5, 97.5], axis=0)
        if draws
        else (np.full(1 + len(tprs), np.nan),) * 2
    )
    return RocSummary(
        auc,
        float(low[0]),
        float(high[0]),
        dict(zip(fpr_bounds, tprs)),
        dict(zip(fpr_bounds, map(float, low[1:]))),
        dict(zip(fpr_bounds, map(float, high[1:]))),
        len(positives),
        len(negatives),
    )


# --- which texts -------------------------------------------------------------------------------


def balanced_sets(
    members: Sequence[tuple[str, int]], non_members: Sequence[tuple[str, int]], seed: int
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Members and non-members of equal count: the larger set subsampled (seeded), both sorted."""
    count = min(len(members), len(non_members))
    rng = stable_rng(seed, "membership sets")
    return sorted(rng.sample(sorted(members), count)), sorted(rng.sample(sorted(non_members), count))


# --- scoring -----------------------------------------------------------------------------------


@torch.inference_mode()
def document_log_probs(
    model,
    examples: Sequence[TrainingExample],
    pad_token_id: int,
    batch_size: int,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """Log-probability of every document token of each example, batched by length on the model's device."""
    device = next(model.parameters()).device
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i].input_ids), i))
    out: list[np.ndarray] = [np.empty(0)] * len(examples)
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        batch = collate([examples[i] for i in chosen], pad_token_id)
        logits = model(
            input_ids=batch["input_ids"].to(device), attention_mask=batch["attention_mask"].to(device)
        ).logits[:, :-1]
        targets = batch["labels"][:, 1:].to(device)
        document = targets != IGNORE_INDEX
        log_probs = logits.float().log_softmax(-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        for row, index in enumerate(chosen):
            out[index] = log_probs[row][document[row]].cpu().numpy().astype(np.float64)
        if progress is not None:
            progress.update(len(chosen), tokens=int(batch["attention_mask"].sum()))
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
