"""Rule `released_text_audit`: every corpus of one audited run in one job, the sentence embedder loaded
once and the real segments embedded once, with the run's positive and negative controls; rule
`released_text_audit_private_selection` the same for the private-selection corpora, without their rows.

Per corpus: its nearest real training segments (`plainsight.audit.nearest`), the released-text audit
(`plainsight.audit.released`), the re-identification attack that ranks the real units by the rare
evidence each generation shares with them (`plainsight.audit.reidentification`, its index built once per
run), and the evidence of each leak measure against its held-out control (`plainsight.audit.evidence`,
from the counts `privacy_metrics` recorded).

The **positive control** shows that these measures fire on this very corpus: the run's first in-context
corpus with each generation's text replaced by its first context document, the released text of a
method that copies. Its leak counts come from the same control code as the methods'.

The **negative control** shows what these attacks find when nothing private was learnt: a corpus the
base model wrote from the trained plan's fictional codes alone (rule `generate_zero_learning`). Every
corpus's text attacks run on it too, with that corpus's member and held-out sets, and are judged by
their excess over it (`plainsight.audit.released.versus_negative_control`); its own row, audited as a
trained method's corpus (members: the fine-tuning set), shows the split's own bias.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from plainsight.audit import NEGATIVE_CONTROL, POSITIVE_CONTROL
from plainsight.audit.criteria import Gate, nothing_to_match
from plainsight.audit.evidence import (
    conclusion,
    detectable_auc,
    excess_of,
    excess_record,
    released_text_epsilon,
)
from plainsight.audit.guarantee import guarantee_evidence
from plainsight.audit.nearest import NEAREST_RANKS, embed, nearest_rows, top_cosines, training_segments
from plainsight.audit.reidentification import RealUnits, reidentification
from plainsight.audit.released import (
    AuditedCorpus,
    SegmentEmbeddings,
    TextAuditSettings,
    Written,
    audit_record,
    held_out_keys,
    member_keys,
    released_text_audit,
)
from plainsight.audit.text_evidence import (
    SPLIT_COLUMN,
    TEXT_MEMBERSHIP_ATTACKS,
    membership_size_columns,
    text_membership_bounds,
)
from plainsight.data.segments import segment_texts
from plainsight.errors import InputError
from plainsight.evaluation.measures import leak_measure
from plainsight.evaluation.privacy import context_keys, run_privacy_metrics
from plainsight.io import read_json, write_json, write_parquet
from plainsight.methods import registry
from plainsight.methods.registry import Method
from plainsight.methods.trained import privacy_units, prompting_method
from plainsight.settings import LARGEST_DEFAULT_DELTA, dp_delta


@dataclass(frozen=True)
class RunInputs:
    """The real data of the audited run, and what `privacy_metrics` needs to measure a corpus."""

    codes: pd.DataFrame
    docs: pd.DataFrame
    spans: pd.DataFrame
    idset: str
    metrics: Mapping[str, Any]  # the privacy_metrics rule's settings
    codes_file: str = "codes"
    docs_file: str = "docs"


@dataclass(frozen=True)
class Judging:
    """What the evidence is judged against: the release gate's thresholds, and the delta of the
    released-text epsilon bound."""

    gate: Gate = field(default_factory=Gate)
    delta: float = LARGEST_DEFAULT_DELTA  # `dp_delta` of a run of at most 10,000 units


def released_delta(inputs: RunInputs, delta: float | None, privacy_unit: str) -> float:
    """The delta of the released-text epsilon bound: the DP-SGD run's (`dpsgd.delta`, else its default
    for the run's fine-tuning units), the delta its canaries are stated at too."""
    return dp_delta(delta, privacy_units(inputs.docs, inputs.codes, privacy_unit))


def records_by_method(methods: Sequence[str], paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each method's mechanism records, from the rule's parallel lists (a method once per record), in the
    order the rule lists them."""
    grouped: dict[str, list[str]] = {}
    for method, path in zip(methods, paths, strict=True):
        grouped.setdefault(method, []).append(path)
    return {method: tuple(records) for method, records in grouped.items()}


@dataclass(frozen=True)
class CorpusFiles:
    """One audited corpus: its method, its files, and where it claims a formal guarantee the records of
    the mechanisms on its paths from private data (`plainsight.audit.provenance.mechanism_records`)."""

    method: str
    corpus: str
    metrics: str
    control: str  # the held-out control's counts per measure
    guarantees: Sequence[str] = ()


@dataclass(frozen=True)
class AuditOutputs:
    """The output paths of each audited corpus, in corpus order, then the positive and the negative
    control's."""

    nearest: Sequence[str]
    records: Sequence[str]
    distances: Sequence[str]


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


def evidence_record(counts: Mapping[str, Any], audit: Mapping[str, Any], judging: Judging):
    """Each leak measure's excess over its control with its conclusion, the released-text epsilon bound of
    the any-identifier leak, and the detectable AUC and conclusion of the text membership attacks (on the
    AUC beyond the negative control where the audit has one): `text_mia_detectable_auc` for the segments
    of the nearest-document attacks, `text_mia_reidentification_detectable_auc` for the units of the
    re-identification attack."""
    record: dict[str, Any] = {"leak_design": counts["design"]}
    for measure, measure_counts in counts["measures"].items():
        if measure_counts["members"] and measure_counts["controls"]:
            threshold = judging.gate.threshold(leak_measure(measure).threshold_key)
            record.update(excess_record(measure, excess_of(measure_counts, counts["design"]), threshold))
        elif not measure_counts["members"] and not measure_counts["controls"]:
            record.update(nothing_to_match(measure))
    leaked = counts["measures"]["any_identifier"]
    if leaked["members"] and leaked["controls"]:
        record["released_text_epsilon"] = released_text_epsilon(
            leaked["member_hits"],
            leaked["members"],
            leaked["control_hits"],
            leaked["controls"],
            judging.delta,
        )
    for name in TEXT_MEMBERSHIP_ATTACKS:
        members, non_members = membership_size_columns(audit, name)
        detectable = detectable_auc(audit[members], audit[non_members])
        # one column per set of texts compared: `text_mia_detectable_auc` for the segments,
        # `text_mia_reidentification_detectable_auc` for the re-identification attack's units
        record[members.removesuffix("members") + "detectable_auc"] = detectable
        low, _, _ = text_membership_bounds(audit, name)
        significant = low is not None and low > 0.5
        record[f"text_mia_{name}_conclusion"] = conclusion(
            significant, detectable, judging.gate.text_membership_auc_max, " AUC"
        )
    return record


@dataclass(frozen=True)
class RunContext:
    """What every corpus of a run is audited against, prepared once."""

    embedded: SegmentEmbeddings
    train: list[tuple[str, int]]
    train_texts: list[str]
    inputs: RunInputs
    settings: TextAuditSettings
    judging: Judging
    units: RealUnits  # the real units the re-identification attack ranks, indexed once
    negative_control: Written | None = None  # its generations and features: the text attacks' control
    negative_control_units: np.ndarray | None = None  # each unit's score in each negative control text


def _one_corpus(
    corpus: pd.DataFrame,
    metrics: pd.DataFrame,
    counts: Mapping[str, Any],
    method: Method,
    run: RunContext,
    against_negative_control: bool = True,
) -> CorpusAudit:
    generations = corpus["text"].fillna("").astype(str).tolist()
    features = embed(generations, run.settings.embedding)
    order, cosines = top_cosines(features, run.embedded.of(run.train), NEAREST_RANKS)
    nearest = nearest_rows(generations, run.train, run.train_texts, order, cosines)
    audit, distances = released_text_audit(
        AuditedCorpus(corpus, metrics, nearest),
        run.inputs.codes,
        run.inputs.docs,
        method,
        run.settings,
        prepared=(run.embedded, features),
        negative_control=run.negative_control if against_negative_control else None,
    )
    record = {
        **audit_record(audit),
        **corpus_reidentification(corpus, metrics, method, run, against_negative_control),
        SPLIT_COLUMN: run.settings.split,
    }
    return CorpusAudit(nearest, {**record, **evidence_record(counts, record, run.judging)}, distances)


def corpus_reidentification(
    corpus: pd.DataFrame,
    metrics: pd.DataFrame,
    method: Method,
    run: RunContext,
    against_negative_control: bool = True,
) -> dict[str, float]:
    """The re-identification attack on one corpus (`plainsight.audit.reidentification`): a generation's
    sources are the documents its prompt showed (in-context methods, RPSG's seed), its control the matched
    unshown documents of its per-generation metrics (`control_doc_ids`, in-context methods), and the
    members the documents the method saw (`released.member_keys`)."""
    rows = corpus.to_dict("records")
    if len(metrics) != len(rows):
        raise ValueError(f"{len(metrics)} per-generation metrics rows for {len(rows)} generations")
    shown = method.in_context or method.rewrites_seeds
    sources = [[doc_id for doc_id, _ in context_keys(row)] if shown else [] for row in rows]
    controls = (
        [list(doc_ids) for doc_ids in metrics["control_doc_ids"]]
        if "control_doc_ids" in metrics
        else [[] for _ in rows]
    )
    return reidentification(
        run.units,
        corpus["text"].fillna("").astype(str).tolist(),
        sources,
        controls,
        [doc_id for doc_id, _ in member_keys(corpus, run.inputs.codes, method)],
        run.settings.bootstrap,
        run.settings.seed,
        run.negative_control_units if against_negative_control else None,
    )


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


def negative_control_audit(
    corpus: pd.DataFrame, inputs: RunInputs, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any], Method]:
    """(the zero-learning corpus, its per-generation metrics, control counts, the method it is audited as):
    measured by `privacy_metrics`'s own code as a trained method's corpus, whose prompts it shares."""
    name = prompting_method()
    per_generation, _, counts = run_privacy_metrics(
        name, corpus, inputs.docs, inputs.spans, inputs.codes, inputs.idset, inputs.metrics, seed
    )
    return corpus, per_generation, counts, registry.method(name)


def audit_corpora(
    corpora: Mapping[str, pd.DataFrame],
    metrics: Mapping[str, pd.DataFrame],
    counts: Mapping[str, Mapping[str, Any]],
    inputs: RunInputs,
    settings: TextAuditSettings,
    judging: Judging | None = None,
    with_control_rows: bool = True,
    negative_control: pd.DataFrame | None = None,
) -> dict[str, CorpusAudit]:
    """The audit of every corpus of a run, keyed by method, its text attacks judged against
    `negative_control` (a corpus written without private data) where given; then, unless
    `with_control_rows` is off (a run of private-selection corpora alone), the positive control's audit
    where the run has an in-context corpus to copy, and the negative control's own
    (`plainsight.audit.control_corpora`)."""
    methods = {name: registry.method(name) for name in corpora}
    train, train_texts = training_segments(inputs.codes, inputs.docs)
    if not train:
        raise InputError(inputs.codes_file, None, "no fine-tuning (train split) segments to compare with")
    held_out = held_out_keys(inputs.codes, inputs.codes_file)
    embedded = SegmentEmbeddings([*train, *held_out], segment_texts(inputs.docs), settings.embedding)
    runs = {name: (corpora[name], metrics[name], counts[name], methods[name]) for name in corpora}
    # the positive control copies an in-context corpus: a run of trained methods alone has none to copy
    if with_control_rows and any(method.in_context for method in methods.values()):
        copied_name, *copied = positive_control(corpora, methods, inputs, settings.seed)
        runs[POSITIVE_CONTROL] = (*copied, methods[copied_name])
    units = RealUnits.of(inputs.docs, inputs.spans, train, held_out, inputs.docs_file)
    written, written_units = None, None
    if negative_control is not None:
        generations = negative_control["text"].fillna("").astype(str).tolist()
        written = (generations, embed(generations, settings.embedding))
        written_units = units.index.unit_scores(generations)
    context = RunContext(
        embedded, train, train_texts, inputs, settings, judging or Judging(), units, written, written_units
    )
    audits = {name: _one_corpus(*run, context) for name, run in runs.items()}
    if with_control_rows and negative_control is not None:
        own = negative_control_audit(negative_control, inputs, settings.seed)
        audits[NEGATIVE_CONTROL] = _one_corpus(*own, context, against_negative_control=False)
    return audits


def write_run_audit(
    corpora: Sequence[CorpusFiles],
    inputs: RunInputs,
    settings: TextAuditSettings,
    judging: Judging,
    outputs: AuditOutputs,
    with_control_rows: bool = True,
    negative_control: str | None = None,
) -> dict[str, CorpusAudit]:
    """Rules `released_text_audit` and `released_text_audit_private_selection`: read the run's corpora
    and its negative control's (`negative_control`, a corpus file), audit them, write each one's nearest
    table, record and distances to the output paths of its method (in `corpora` order, then the positive
    and negative controls where `with_control_rows`)."""
    counts = {files.method: read_json(files.control) for files in corpora}
    audits = audit_corpora(
        {files.method: pd.read_parquet(files.corpus) for files in corpora},
        {files.method: pd.read_parquet(files.metrics) for files in corpora},
        counts,
        inputs,
        settings,
        judging,
        with_control_rows,
        pd.read_parquet(negative_control) if negative_control else None,
    )
    for files in corpora:
        audits[files.method].record.update(guarantee_evidence(counts[files.method], files.guarantees))
    for number, (name, audit) in enumerate(audits.items()):
        write_parquet(audit.nearest, outputs.nearest[number])
        write_json({"method": name, "seed": settings.seed, **audit.record}, outputs.records[number])
        write_parquet(audit.distances, outputs.distances[number])
    return audits
