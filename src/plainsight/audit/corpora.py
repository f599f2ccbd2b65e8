"""Rule `released_text_audit`: every corpus of one audited run in one job, the sentence embedder loaded
once and the real segments embedded once, with the run's positive control; rule
`released_text_audit_private_selection` the same for the private-selection corpora, without it.

Per corpus: its nearest real training segments (`plainsight.audit.nearest`), the released-text audit
(`plainsight.audit.released`), and the evidence of each leak measure against its held-out control
(`plainsight.audit.evidence`, from the counts `privacy_metrics` recorded).

The **positive control** shows that these measures fire on this very corpus: the run's first in-context
corpus with each generation's text replaced by its first context document, the released text of a
method that copies. Its leak counts come from the same control code as the methods'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from plainsight.audit import POSITIVE_CONTROL
from plainsight.audit.evidence import (
    conclusion,
    detectable_auc,
    excess_of,
    excess_record,
    released_text_epsilon,
)
from plainsight.audit.guarantee import guarantee_record, release_guarantee
from plainsight.audit.nearest import NEAREST_RANKS, embed, nearest_rows, top_cosines, training_segments
from plainsight.audit.released import (
    ReleaseSettings,
    SegmentEmbeddings,
    audit_record,
    held_out_keys,
    released_text_audit,
)
from plainsight.data.segments import segment_texts
from plainsight.errors import InputError
from plainsight.evaluation.privacy import context_keys, run_privacy_metrics
from plainsight.io import read_json, write_json, write_parquet
from plainsight.methods import registry
from plainsight.methods.registry import Method


@dataclass(frozen=True)
class Thresholds:
    """What each conclusion measures power against: the gate's thresholds (`plainsight.audit.gate`)."""

    leak_excess: float = 0.05
    verbatim_excess: float = 0.05
    text_membership_auc: float = 0.6

    @classmethod
    def from_gate(cls, gate: Mapping[str, Any]) -> Thresholds:
        defaults = cls()
        return cls(
            gate.get("leak_excess_max", defaults.leak_excess),
            gate.get("verbatim_excess_max", defaults.verbatim_excess),
            gate.get("text_membership_auc_max", defaults.text_membership_auc),
        )


@dataclass(frozen=True)
class RunInputs:
    """The real data of the audited run, and what `privacy_metrics` needs to measure a corpus."""

    codes: pd.DataFrame
    docs: pd.DataFrame
    spans: pd.DataFrame
    idset: str
    metrics: Mapping[str, Any]  # the privacy_metrics rule's settings
    codes_file: str = "codes"


@dataclass(frozen=True)
class CorpusAudit:
    nearest: pd.DataFrame
    record: dict[str, Any]
    distances: pd.DataFrame


def copying_corpus(corpus: pd.DataFrame, texts: Mapping[tuple[str, int], str]) -> pd.DataFrame:
    """An in-context corpus whose every generation is the text of its first context document."""
    copied = corpus.copy()
    copied["text"] = [texts[context_keys(row)[0]] for row in corpus.to_dict("records")]
    return copied


def evidence_record(
    counts: Mapping[str, Any], audit: Mapping[str, Any], thresholds: Thresholds, delta: float
):
    """Each leak measure's excess over its control with its conclusion, the released-text epsilon bound of
    the any-identifier leak, and the detectable AUC and conclusion of the text membership attacks."""
    record: dict[str, Any] = {"leak_design": counts["design"]}
    for measure, measure_counts in counts["measures"].items():
        if measure_counts["members"] and measure_counts["controls"]:
            threshold = thresholds.verbatim_excess if measure == "verbatim" else thresholds.leak_excess
            record.update(excess_record(measure, excess_of(measure_counts, counts["design"]), threshold))
    leaked = counts["measures"]["any_identifier"]
    if leaked["members"] and leaked["controls"]:
        record["released_text_epsilon"] = released_text_epsilon(
            leaked["member_hits"], leaked["members"], leaked["control_hits"], leaked["controls"], delta
        )
    detectable = detectable_auc(audit["text_mia_members"], audit["text_mia_non_members"])
    record["text_mia_detectable_auc"] = detectable
    for name in ("cosine", "ngram"):
        significant = audit[f"text_mia_auc_{name}_low"] > 0.5
        record[f"text_mia_{name}_conclusion"] = conclusion(
            significant, detectable, thresholds.text_membership_auc, " AUC"
        )
    return record


def _one_corpus(
    corpus: pd.DataFrame,
    metrics: pd.DataFrame,
    counts: Mapping[str, Any],
    method: Method,
    embedded: SegmentEmbeddings,
    train: list[tuple[str, int]],
    train_texts: list[str],
    inputs: RunInputs,
    settings: ReleaseSettings,
    thresholds: Thresholds,
    delta: float,
) -> CorpusAudit:
    generations = corpus["text"].fillna("").astype(str).tolist()
    features = embed(generations, settings.embedding)
    order, cosines = top_cosines(features, embedded.of(train), NEAREST_RANKS)
    nearest = nearest_rows(generations, train, train_texts, order, cosines)
    audit, distances = released_text_audit(
        corpus, inputs.codes, inputs.docs, metrics, nearest, method, settings, prepared=(embedded, features)
    )
    record = audit_record(audit)
    return CorpusAudit(nearest, {**record, **evidence_record(counts, record, thresholds, delta)}, distances)


def positive_control(
    corpora: Mapping[str, pd.DataFrame],
    methods: Mapping[str, Method],
    inputs: RunInputs,
    seed: int,
) -> tuple[str, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """(the copied method, its copying corpus, per-generation metrics, control counts): the run's first
    in-context corpus made to copy, measured by `privacy_metrics`'s own code."""
    name = next((n for n in corpora if not methods[n].trained), None)
    if name is None:
        raise ValueError("the positive control copies an in-context corpus, and the run has none")
    copied = copying_corpus(corpora[name], segment_texts(inputs.docs))
    per_generation, _, counts = run_privacy_metrics(
        name, copied, inputs.docs, inputs.spans, inputs.codes, inputs.idset, inputs.metrics, seed
    )
    return name, copied, per_generation, counts


def audit_corpora(
    corpora: Mapping[str, pd.DataFrame],
    metrics: Mapping[str, pd.DataFrame],
    counts: Mapping[str, Mapping[str, Any]],
    methods: Mapping[str, Method],
    inputs: RunInputs,
    settings: ReleaseSettings,
    thresholds: Thresholds = Thresholds(),
    delta: float = 1e-5,
    with_positive_control: bool = True,
) -> dict[str, CorpusAudit]:
    """The audit of every corpus of a run, keyed by method, and of its positive control (unless
    `with_positive_control` is off: a run of private-selection corpora alone has no in-context corpus to
    copy)."""
    train, train_texts = training_segments(inputs.codes, inputs.docs)
    if not train:
        raise InputError(inputs.codes_file, None, "no fine-tuning (train split) segments to compare with")
    held_out = held_out_keys(inputs.codes, inputs.codes_file)
    embedded = SegmentEmbeddings([*train, *held_out], segment_texts(inputs.docs), settings.embedding)
    runs = {name: (corpora[name], metrics[name], counts[name], methods[name]) for name in corpora}
    if with_positive_control:
        copied_name, *copied = positive_control(corpora, methods, inputs, settings.seed)
        runs[POSITIVE_CONTROL] = (*copied, methods[copied_name])
    shared = (embedded, train, train_texts, inputs, settings, thresholds, delta)
    return {name: _one_corpus(*run, *shared) for name, run in runs.items()}


def write_run_audit(
    corpus_paths: Sequence[str],
    metrics_paths: Sequence[str],
    control_paths: Sequence[str],
    method_names: Sequence[str],
    inputs: RunInputs,
    settings: ReleaseSettings,
    thresholds: Thresholds,
    delta: float,
    outputs: Mapping[str, Sequence[str]],
    guarantees: Mapping[str, str] | None = None,
    with_positive_control: bool = True,
) -> dict[str, CorpusAudit]:
    """Rules `released_text_audit` and `released_text_audit_private_selection`: read the run's corpora,
    audit them, write each one's nearest table, record and distances to the output paths of its method
    (in `method_names` order, then the positive control where `with_positive_control`)."""
    corpora = {name: pd.read_parquet(path) for name, path in zip(method_names, corpus_paths)}
    counts = {name: read_json(path) for name, path in zip(method_names, control_paths)}
    audits = audit_corpora(
        corpora,
        {name: pd.read_parquet(path) for name, path in zip(method_names, metrics_paths)},
        counts,
        {name: registry.method(name) for name in method_names},
        inputs,
        settings,
        thresholds,
        delta,
        with_positive_control,
    )
    for name, path in (guarantees or {}).items():  # method -> its guarantee record
        claim = release_guarantee(path)
        if claim is not None:
            audits[name].record.update(guarantee_record(counts[name], claim))
    for number, (name, audit) in enumerate(audits.items()):
        write_parquet(audit.nearest, outputs["nearest"][number])
        write_json({"method": name, "seed": settings.seed, **audit.record}, outputs["records"][number])
        write_parquet(audit.distances, outputs["distances"][number])
    return audits
