"""Membership attacks on the canaries of one method's canary corpus (rule `canary_attacks`).

From the released corpus alone (what a custodian publishes):

- ngram: the mean log-probability of the canary's suffix words after its prefix under a word n-gram
  model fitted on the synthetic texts (`plainsight.audit.ngram`; Meeus et al. 2025);
- shared_run: the longest run of the suffix's words that one synthetic text holds;
- linked_details, on the canary persons (`plainsight.audit.canary_persons`): the most of a person's
  details that one synthetic text holds (the project's matcher: whole words, case-insensitive); two or
  more link the person's details.

From the adapter too, for a trained method:

- likelihood_ratio: log P(suffix | prefix) under the canary adapter minus under the base model, in
  the prompt format of training with an empty code (a reference-model attack, Carlini et al. 2021).

Every score is oriented so that higher means "included". For an in-context method, `prompts_showing`
counts the prompts whose context documents held the canary (its own document, or a segment it went
into) or one of the person's documents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from plainsight.audit.canaries import Canary, read_canaries, suffix_log_probs
from plainsight.audit.canary_persons import CanaryPerson, read_persons
from plainsight.audit.ngram import continuation_log_prob, fit_ngram
from plainsight.audit.shared_runs import longest_shared_with_any
from plainsight.entities import SegmentKey
from plainsight.matching import leaked_values, words

ATTACKS = ("ngram", "shared_run", "likelihood_ratio")
PERSON_ATTACK = "linked_details"  # the canary persons' attack
CANARY_ATTACK_NAMES = {
    "ngram": "n-gram model of the corpus",
    "shared_run": "longest shared word run",
    "likelihood_ratio": "adapter / base likelihood ratio",
    PERSON_ATTACK: "a person's details in one generation",
}


@dataclass(frozen=True)
class NgramSettings:
    order: int
    add_k: float


def ngram_scores(canaries: Sequence[Canary], corpus: Sequence[str], settings: NgramSettings) -> list[float]:
    model = fit_ngram([words(text) for text in corpus], settings.order, settings.add_k)
    return [continuation_log_prob(model, words(c.prefix), words(c.suffix)) for c in canaries]


def shared_run_scores(canaries: Sequence[Canary], corpus: Sequence[str]) -> list[int]:
    corpus_words = [words(text) for text in corpus]
    return [longest_shared_with_any(words(c.suffix), corpus_words) for c in canaries]


def likelihood_ratios(
    base_model, adapter, tokenizer, canaries: Sequence[Canary], batch_size: int
) -> list[float]:
    """Summed log-probability of each suffix under `adapter` minus under `base_model` (the adapter is
    `base_model` with its prefix loaded, so the base is scored first)."""
    from plainsight.methods.prompts import render

    contexts = [render([], "") + c.prefix for c in canaries]
    suffixes = [c.suffix for c in canaries]
    base = suffix_log_probs(base_model, tokenizer, contexts, suffixes, batch_size)
    adapted = suffix_log_probs(adapter(), tokenizer, contexts, suffixes, batch_size)
    return [float(a.sum() - b.sum()) for a, b in zip(adapted, base)]


def linked_details(persons: Sequence[CanaryPerson], corpus: Sequence[str]) -> list[int]:
    """Per person: the most of its details that one text of `corpus` holds (0 for an empty corpus)."""
    return [
        max((len(leaked_values(text, p.details.values())) for text in corpus), default=0) for p in persons
    ]


def prompts_showing(placements: Sequence[Sequence[SegmentKey]], corpus: pd.DataFrame) -> list[int]:
    """Per canary or person (the segments it went into): the generations whose prompt showed one."""
    shown = [
        set(zip(map(str, doc_ids), map(int, segments)))
        for doc_ids, segments in zip(corpus["context_doc_ids"], corpus["context_segments"])
    ]
    return [sum(bool(contexts & set(segments)) for contexts in shown) for segments in placements]


def attack_frame(
    canaries: Sequence[Canary], corpus: pd.DataFrame, settings: NgramSettings, in_context: bool
) -> pd.DataFrame:
    """One row per canary (`member`: its coin; `repeats`: the insertion count of its kind) with the
    released-text attacks' scores (`likelihood_ratio` left empty)."""
    texts = corpus["text"].astype(str).tolist()
    return pd.DataFrame(
        {
            "canary_id": [c.canary_id for c in canaries],
            "member": [c.member for c in canaries],
            "repeats": [c.repeats for c in canaries],
            "perplexity": [c.perplexity for c in canaries],
            "ngram": ngram_scores(canaries, texts, settings),
            "shared_run": shared_run_scores(canaries, texts),
            "likelihood_ratio": math.nan,
            "prompts_showing": (
                prompts_showing([c.segments for c in canaries], corpus) if in_context else math.nan
            ),
            "generations": len(texts),
        }
    )


def person_attack_frame(
    persons: Sequence[CanaryPerson], corpus: pd.DataFrame, in_context: bool
) -> pd.DataFrame:
    """One row per canary person (`member`: its coin; `documents`: how many it has, included or not)
    with the `linked_details` score."""
    texts = corpus["text"].astype(str).tolist()
    return pd.DataFrame(
        {
            "person_id": [p.person_id for p in persons],
            "member": [p.member for p in persons],
            "documents": [len(p.documents) for p in persons],
            PERSON_ATTACK: linked_details(persons, texts),
            "prompts_showing": (
                prompts_showing([p.segments for p in persons], corpus) if in_context else math.nan
            ),
            "generations": len(texts),
        }
    )


@dataclass(frozen=True)
class CanaryAttackJob:
    """Rule `canary_attacks`: one method's canary corpus (and adapter, for a trained method)."""

    method: str
    canaries: str
    corpus: str
    ngram: NgramSettings
    output: str
    person_output: str
    adapter: str | None = None  # and the base model, for a trained method
    model: str | None = None
    placement: Mapping | None = None
    batch_size: int = 8
    threads: int = 1

    @classmethod
    def from_snakemake(cls, job) -> CanaryAttackJob:
        """The job of a `plainsight.snakemake_job.RuleJob` of rule `canary_attacks` (an in-context
        method's has no adapter input)."""
        params = job.params
        return cls(
            method=job.method,
            canaries=job.input.canaries,
            corpus=job.input.corpus,
            ngram=NgramSettings(int(params.ngram["order"]), float(params.ngram["add_k"])),
            output=job.output.canaries,
            person_output=job.output.persons,
            adapter=job.input.adapter if job.input.get("adapter") else None,
            model=params.model,
            placement=params.placement,
            batch_size=params.batch_size,
            threads=job.threads,
        )


def write_canary_attacks(job: CanaryAttackJob) -> None:
    from plainsight.io import write_parquet
    from plainsight.methods import registry

    canaries, _ = read_canaries(job.canaries)
    method = registry.method(job.method)
    corpus = pd.read_parquet(job.corpus)
    frame = attack_frame(canaries, corpus, job.ngram, method.in_context)
    if method.trained:
        frame["likelihood_ratio"] = adapter_ratios(job, canaries)
    write_parquet(frame, job.output)
    write_parquet(
        person_attack_frame(read_persons(job.canaries), corpus, method.in_context), job.person_output
    )


def adapter_ratios(job: CanaryAttackJob, canaries: Sequence[Canary]) -> list[float]:
    import torch

    from plainsight.audit.membership import adapter_folder
    from plainsight.models import load_model, resolve_placement
    from plainsight.training.prefix import load_adapter

    if job.adapter is None or job.model is None or job.placement is None:
        raise ValueError(f"{job.method}: the likelihood-ratio attack needs the adapter and the base model")
    folder = adapter_folder(job.adapter)
    torch.set_num_threads(job.threads)
    model, tokenizer = load_model(job.model, *resolve_placement(job.placement))
    model.eval()
    return likelihood_ratios(model, lambda: load_adapter(model, folder), tokenizer, canaries, job.batch_size)
