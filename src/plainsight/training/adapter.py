"""The adapter of one trained method and seed (rule `train_adapter`): prefix tuning with or without
the privacy mask (`fit` with `Backprop`), or DP-SGD (`fit` with `PrivateSteps`), saved with its
`training.json` (the method, the examples, the placement, the privacy spent and the step history)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from plainsight.codes.fictional import FictionalPools
from plainsight.data.segments import segment_texts
from plainsight.errors import InputError
from plainsight.methods.registry import Method
from plainsight.methods.registry import method as registered_method
from plainsight.models import load_model, model_placement, resolve_placement
from plainsight.training.checkpoints import Checkpoints, remove_checkpoint
from plainsight.training.dp import DPTrainingSettings, dp_adapter_model, train_dp
from plainsight.training.examples import TrainingExample, corpus_init_text, training_examples
from plainsight.training.loop import Backprop, Tracking, TrainingSettings, fit
from plainsight.training.objectives import lm_loss
from plainsight.training.prefix import prefix_model, save_adapter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AdapterJob:
    """What one adapter is trained from, and where it goes."""

    method: str
    seed: int
    training: Mapping[str, Any]  # `plainsight.training.params.training_params` of the method
    docs: Path
    spans: Path
    codes: Path
    pools: Path  # the fictional-value pools (an `init_from: corpus` init text)
    model: str  # a model folder or id
    placement: Mapping[str, str]  # the config's `model` block: device and dtype
    output: Path
    # Outside the output, which Snakemake deletes when a job fails: a rerun resumes from it.
    checkpoints: Checkpoints
    threads: int = 1


@dataclass(frozen=True)
class _Corpus:
    docs: pd.DataFrame
    codes: pd.DataFrame
    texts: Mapping[tuple[str, int], str]
    examples: list[TrainingExample]


def train_method_adapter(job: AdapterJob) -> None:
    """Train the adapter of `job.method` and seed `job.seed` on (real code, document) pairs and save it."""
    spec = registered_method(job.method)
    params = job.training
    torch.set_num_threads(job.threads)
    # The frozen model runs in the configured dtype; the prefix and the optimizer state stay float32.
    model, tokenizer = load_model(job.model, *resolve_placement(job.placement))
    docs, codes = pd.read_parquet(job.docs), pd.read_parquet(job.codes)
    texts = segment_texts(docs)
    corpus = _Corpus(docs, codes, texts, training_examples(codes, texts, tokenizer, params["max_length"]))
    private_tokens = sum(sum(e.private) for e in corpus.examples)
    log.info(
        "%d training examples, %d tokens, %d private document tokens",
        len(corpus.examples),
        sum(len(e.input_ids) for e in corpus.examples),
        private_tokens,
    )
    train = _train_private if spec.differentially_private else _train_prefix
    adapter, report = train(job, spec, model, tokenizer, corpus)
    save_adapter(
        adapter,
        job.output,
        {
            "training.json": {
                "method": job.method,
                "seed": job.seed,
                "examples": len(corpus.examples),
                "private_tokens": private_tokens,
                **model_placement(model),
                **report,
            },
        },
    )
    remove_checkpoint(job.checkpoints.directory)


def _train_prefix(job: AdapterJob, spec: Method, model, tokenizer, corpus: _Corpus) -> tuple[Any, dict]:
    """ft and ft_mask: the prefix starts from `init_text`, or from a corpus opening whose private values
    are replaced by fictional ones."""
    params = job.training
    init_text = params["init_text"]
    if params["init_from"] == "corpus":
        pools = FictionalPools.for_corpus(job.pools, pd.read_parquet(job.spans), corpus.codes)
        init_text = corpus_init_text(corpus.codes, corpus.texts, pools, job.seed)
    adapter = prefix_model(
        model, tokenizer, params["num_virtual_tokens"], init_text, params["projection_hidden"], job.seed
    )
    history = fit(
        adapter,
        corpus.examples,
        TrainingSettings.from_params(params, spec.masked_objective),
        job.seed,
        tokenizer.pad_token_id,
        Backprop(params.get("physical_batch_size")),
        Tracking(f"{job.method} seed {job.seed}", job.checkpoints),
    )
    return adapter, {"adapter": "prefix", "history": history}


def _train_private(job: AdapterJob, spec: Method, model, tokenizer, corpus: _Corpus) -> tuple[Any, dict]:
    """DP-SGD: the prefix starts from public text, as its guarantee does not cover the initialisation."""
    params = job.training
    adapter = dp_adapter_model(
        model,
        params["num_virtual_tokens"],
        tokenizer,
        params["init_text"],
        params["projection_hidden"],
        job.seed,
    )
    report = train_dp(
        adapter,
        corpus.examples,
        tokenizer.pad_token_id,
        DPTrainingSettings.from_params(params),
        job.seed,
        lm_loss,
        units=privacy_units(corpus.docs, corpus.examples, job.docs),
        tracking=Tracking(f"{job.method} seed {job.seed}", job.checkpoints),
    )
    log.info(
        "DP-SGD: privacy unit %s (%d units), epsilon %.3f at delta %.2e, noise multiplier %.3f, "
        "sample rate %.4f, %d steps",
        report["privacy_unit"],
        report["units"],
        report["epsilon"],
        report["delta"],
        report["noise_multiplier"],
        report["sample_rate"],
        report["steps"],
    )
    report.pop("losses")  # the history holds them, step by step
    return adapter, report


def privacy_units(docs: pd.DataFrame, examples: Sequence[TrainingExample], docs_path: Path) -> list[str]:
    """The privacy unit of each example: its document (TAB) or its patient (MIMIC), the docs' `unit_id`."""
    if "unit_id" not in docs.columns:
        raise InputError(
            docs_path, None, "no unit_id column (written by an older ingestion): rerun its ingest rule"
        )
    unit_of = dict(zip(docs["doc_id"].astype(str), docs["unit_id"].astype(str)))
    return [unit_of[example.key[0]] for example in examples]
