"""Privacy metrics of synthetic text, as defined in the method's paper, and their protocols.

A private value is *leaked* when a generation contains it verbatim (case-insensitively, as a
whole word). Per run and segment index:

- PIPP: the percentage of generations that leak at least one private value;
- ELP: the percentage of private values that are leaked;
- ROUGE-2 / ROUGE-L: F1 overlap with the real text the generation could copy from;
- partial leak (this project's addition): a generation contains one word of a private name,
  such as a surname alone, which the exact match above does not count;
- near leak (this project's addition, `plainsight.matching.NearMatcher`): a generation contains a
  private value, a word of a private name, or a variant of either that a reader would still
  recognise ("Hasslud" for "Hasslund", "40593/02" for "40593/04"); it includes the two above;
- document quality (this project's addition, `plainsight.evaluation.quality`): whether the
  generation is a document at all, so that a leak rate is not read over empty or looping text.

What is private, and what ROUGE compares with, follows the paper per method family:

- in-context methods show real segments in the prompt, so a generation's private values are
  those of its context segments (ELP: the mean per-generation share); ROUGE is scored against
  each context segment separately, one reference per document (the paper's Appendix B), and the
  maximum is reported; the score against the last context (the reference code's choice) is
  kept per generation as `rouge2_last` / `rougeL_last`;
- trained methods saw the whole fine-tuning set, and the private-selection methods read it (RPSG
  draws its seeds from it, all of it votes in Aug-PE), so every private value of it is private for
  every generation, whatever its paragraph range (ELP: the share of the set's distinct values
  leaked by any generation of the run); ROUGE is the maximum over the fine-tuning segments
  whose real code has the entity types of the generation's fictional code (all segments when
  none has, and for a private-selection method, which writes without codes).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from typing import Any, get_args

import numpy as np
import pandas as pd

from plainsight.code_runs import DEFAULT_CODE_RUNS, CodeRuns
from plainsight.codes.control_code import build_entities, select_spans
from plainsight.codes.fictional import EXCLUDED_TYPES
from plainsight.data.segments import segment_texts
from plainsight.entities import SegmentKey
from plainsight.evaluation import held_out
from plainsight.evaluation.adherence import ADHERENCE_COLUMNS, code_adherence, fictional_pairs
from plainsight.evaluation.intervals import bootstrap_interval, wilson_interval
from plainsight.evaluation.linkage import LINKAGE_QUASI_MIN
from plainsight.evaluation.quality import QUALITY_COLUMNS, DocumentCriteria, document_quality
from plainsight.evaluation.real_segments import RealValues
from plainsight.evaluation.rouge import RougeText, max_rouge, rouge_scores, rouge_text
from plainsight.matching import (
    NearMatcher,
    leaked_values,
    name_words,
    partial_leak,
    unique_values,
)
from plainsight.methods.registry import Family, method
from plainsight.methods.trained import training_keys

# The segment index of the summary row that averages a run's segment rows.
AVERAGED_SEGMENT = -1

GENERATION_COLUMNS: tuple[str, ...] = (
    "generation_id",
    "method",
    "seed",
    "segment",
    "n_private_values",
    "n_leaked",
    "leaked_values",
    "leaked",
    "elp",
    "partial_leak",
    "near_leak",
    "near_leaked_values",
    "rouge2",
    "rougeL",
    "rouge2_last",
    "rougeL_last",
    "new_tokens",
    "regenerations",
    "hit_max_regenerations",
    *QUALITY_COLUMNS,
    *ADHERENCE_COLUMNS,
)
# Per corpus: documents (%) and the mean length and distinct-2 of its generations.
QUALITY_METRICS: tuple[str, ...] = ("documents", "mean_words", "distinct2")
SUMMARY_METRICS: tuple[str, ...] = (
    "pipp",
    "elp",
    "partial_leak",
    "near_leak",
    "rouge2",
    "rougeL",
    *QUALITY_METRICS,
)
SUMMARY_COLUMNS: tuple[str, ...] = ("method", "seed", "segment", "n_generations", *SUMMARY_METRICS)

# --- private sets ------------------------------------------------------------------------------


def _gold_entities(spans: pd.DataFrame, idset: str) -> dict[SegmentKey, list[tuple[str, str]]]:
    """Each segment's normalised, deduplicated gold (type, value) pairs of the identifier set."""
    selected = select_spans(spans, idset).sort_values(["doc_id", "segment", "start"], kind="stable")
    return {
        (str(doc_id), int(segment)): build_entities(zip(group["entity_type"], group["text"]))
        for (doc_id, segment), group in selected.groupby(["doc_id", "segment"], sort=False)
    }


def gold_values_by_segment(
    spans: pd.DataFrame, idset: str, entity_types: Collection[str] | None = None
) -> dict[SegmentKey, list[str]]:
    """Each segment's distinct gold values of the identifier set, optionally of some types only.

    Segments without such values are absent from the mapping.
    """
    by_segment = {
        key: unique_values(v for t, v in entities if entity_types is None or t in entity_types)
        for key, entities in _gold_entities(spans, idset).items()
    }
    return {key: values for key, values in by_segment.items() if values}


def segment_type_sets(spans: pd.DataFrame, idset: str) -> dict[SegmentKey, frozenset[str]]:
    """Each segment's set of gold entity types, without those fictional codes never carry."""
    return {
        key: frozenset(t for t, _ in entities) - EXCLUDED_TYPES
        for key, entities in _gold_entities(spans, idset).items()
    }


def context_keys(corpus_row: Mapping[str, Any]) -> list[SegmentKey]:
    """The real segments shown in a generation's prompt."""
    doc_ids, segments = corpus_row["context_doc_ids"], corpus_row["context_segments"]
    if len(doc_ids) != len(segments):
        raise ValueError(
            f"generation {corpus_row['generation_id']}: "
            f"{len(doc_ids)} context doc ids but {len(segments)} context segments"
        )
    return [(str(doc_id), int(segment)) for doc_id, segment in zip(doc_ids, segments)]


def context_private_values(
    corpus_row: Mapping[str, Any], gold_values_by_segment: Mapping[SegmentKey, list[str]]
) -> list[str]:
    """The union of the gold values of a generation's context segments."""
    return unique_values(
        value for key in context_keys(corpus_row) for value in gold_values_by_segment.get(key, [])
    )


def fictional_type_set(corpus_row: Mapping[str, Any]) -> frozenset[str]:
    """The entity types of a generation's fictional code."""
    return frozenset(entity["type"] for entity in corpus_row["fictional_entities"]) - EXCLUDED_TYPES


def near_matcher(
    private: list[str], persons: list[str], min_letters: int, common_words: frozenset[str]
) -> NearMatcher:
    """Near leaks of private values and of the name words that partial leaks count."""
    return NearMatcher([*private, *name_words(persons, min_letters)], common_words)


def _segment_text(texts: Mapping[SegmentKey, str], key: SegmentKey) -> str:
    if key not in texts:
        raise ValueError(f"segment {key[1]} of document {key[0]} is not among the real segments")
    return texts[key]


def _prepared(
    cache: dict[SegmentKey, RougeText], texts: Mapping[SegmentKey, str], key: SegmentKey
) -> RougeText:
    """A real segment prepared for ROUGE, once: generations share their candidate segments."""
    if key not in cache:
        cache[key] = rouge_text(_segment_text(texts, key))
    return cache[key]


# --- per generation ----------------------------------------------------------------------------


def _metrics_row(
    corpus_row: Mapping[str, Any],
    private: list[str],
    persons: list[str],
    near: NearMatcher,
    rouge_best: tuple[float, float],
    rouge_last: tuple[float, float],
    min_letters: int,
    criteria: DocumentCriteria,
) -> dict[str, Any]:
    leaked = leaked_values(corpus_row["text"], private)
    near_leaked = near.found(corpus_row["text"])
    return {
        "generation_id": corpus_row["generation_id"],
        "method": corpus_row["method"],
        "seed": corpus_row["seed"],
        "segment": int(corpus_row["segment"]),
        "n_private_values": len(private),
        "n_leaked": len(leaked),
        "leaked_values": leaked,
        "leaked": bool(leaked),
        "elp": len(leaked) / len(private) if private else float("nan"),
        "partial_leak": partial_leak(corpus_row["text"], persons, min_letters),
        "near_leak": bool(near_leaked),
        "near_leaked_values": near_leaked,
        "rouge2": rouge_best[0],
        "rougeL": rouge_best[1],
        "rouge2_last": rouge_last[0],
        "rougeL_last": rouge_last[1],
        "new_tokens": corpus_row.get("new_tokens"),
        "regenerations": int(corpus_row.get("regenerations", 0)),
        "hit_max_regenerations": bool(corpus_row.get("hit_max_regenerations", False)),
        **document_quality(corpus_row["text"], criteria),
        **code_adherence(corpus_row["text"], fictional_pairs(corpus_row)),
    }


def icl_privacy_metrics(
    corpus: pd.DataFrame, real: RealValues, criteria: DocumentCriteria = DocumentCriteria()
) -> pd.DataFrame:
    """Per-generation leakage of the context segments' private values, and ROUGE against each context:
    the best one (reported) and the last one."""
    prepared: dict[SegmentKey, RougeText] = {}
    rows = []
    for row in corpus.to_dict("records"):
        generated = rouge_text(row["text"])
        contexts = [_prepared(prepared, real.texts, key) for key in context_keys(row)]
        private = context_private_values(row, real.values)
        private_persons = context_private_values(row, real.persons)
        rows.append(
            _metrics_row(
                row,
                private,
                private_persons,
                near_matcher(private, private_persons, real.min_letters, real.common_words),
                max_rouge(generated, contexts),
                rouge_scores(generated, contexts[-1]),
                real.min_letters,
                criteria,
            )
        )
    return pd.DataFrame(rows, columns=list(GENERATION_COLUMNS))


def ft_privacy_metrics(
    corpus: pd.DataFrame,
    real: RealValues,
    train_keys: Iterable[tuple[str, int]],
    criteria: DocumentCriteria = DocumentCriteria(),
    match_code_types: bool = True,
) -> pd.DataFrame:
    """Per-generation leakage of every private value of the fine-tuning set, and the best ROUGE over
    the fine-tuning segments with the generation's entity types (`match_code_types`; else, for a
    method without codes, over every fine-tuning segment)."""
    keys = list(dict.fromkeys((str(d), int(s)) for d, s in train_keys))
    if not keys:
        raise ValueError("no fine-tuning segments to compare the generations with")
    private = real.union(real.values, keys)
    private_persons = real.union(real.persons, keys)
    near = near_matcher(private, private_persons, real.min_letters, real.common_words)
    prepared: dict[SegmentKey, RougeText] = {}
    rows = []
    for row in corpus.to_dict("records"):
        wanted = fictional_type_set(row)
        candidates = [
            k for k in keys if match_code_types and real.types.get(k, frozenset()) == wanted
        ] or keys
        best = max_rouge(
            rouge_text(row["text"]), [_prepared(prepared, real.texts, key) for key in candidates]
        )
        rows.append(
            _metrics_row(
                row, private, private_persons, near, best, (math.nan, math.nan), real.min_letters, criteria
            )
        )
    return pd.DataFrame(rows, columns=list(GENERATION_COLUMNS))


# --- summaries ---------------------------------------------------------------------------------


def _elp(group: pd.DataFrame, family: Family) -> float:
    """ELP in percent over a group of generations.

    In-context: the mean per-generation share, over generations that had private values.
    Fine-tuning: the share of the (shared) private set's distinct values leaked by any generation.
    """
    if family == "in_context":
        return 100 * float(group["elp"].mean())
    sizes = group["n_private_values"].unique()
    if len(sizes) != 1:
        raise ValueError("fine-tuning generations of one segment index disagree on the private set size")
    if sizes[0] == 0:
        return float("nan")
    leaked = {value for values in group["leaked_values"] for value in values}
    return 100 * len(leaked) / int(sizes[0])


def _segment_summary(group: pd.DataFrame, family: Family) -> dict[str, float]:
    return {
        "pipp": 100 * float(group["leaked"].mean()),
        "elp": _elp(group, family),
        "partial_leak": 100 * float(group["partial_leak"].mean()),
        "near_leak": 100 * float(group["near_leak"].mean()),
        "rouge2": float(group["rouge2"].mean()),
        "rougeL": float(group["rougeL"].mean()),
        "documents": 100 * float(group["is_document"].mean()),
        "mean_words": float(group["words"].mean()),
        "distinct2": float(group["distinct2"].mean()),
    }


def summarise(per_generation: pd.DataFrame, family: Family) -> pd.DataFrame:
    """One row per (method, seed, segment index), then a segment -1 row averaging them.

    The paper reports metrics averaged over the two segment indices; the average is the plain
    mean of the segment rows (a metric undefined for one segment is averaged over the others),
    except a trained method's ELP, which is over the run: the fine-tuning set is one private set.
    """
    if family not in get_args(Family):
        raise ValueError(f"unknown method family {family!r}: expected one of {get_args(Family)}")
    rows: list[dict[str, Any]] = []
    for (method_name, seed), run in per_generation.groupby(["method", "seed"], sort=True):
        segment_rows = [
            {
                "method": method_name,
                "seed": seed,
                "segment": int(segment),
                "n_generations": len(group),
                **_segment_summary(group, family),
            }
            for segment, group in run.groupby("segment", sort=True)
        ]
        averaged = pd.DataFrame(segment_rows)[list(SUMMARY_METRICS)].mean()
        if family != "in_context":
            averaged["elp"] = _elp(run, family)
        rows.extend(segment_rows)
        rows.append(
            {
                "method": method_name,
                "seed": seed,
                "segment": AVERAGED_SEGMENT,
                "n_generations": sum(r["n_generations"] for r in segment_rows),
                **{metric: float(averaged[metric]) for metric in SUMMARY_METRICS},
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


# --- pooled intervals --------------------------------------------------------------------------

# Metrics whose pooled interval is a Wilson interval of a per-generation boolean.
RATE_COLUMNS: dict[str, str] = {
    "pipp": "leaked",
    "partial_leak": "partial_leak",
    "near_leak": "near_leak",
    "documents": "is_document",
}
# Metrics whose pooled interval is a bootstrap of the mean of a per-generation column.
MEAN_COLUMNS: dict[str, str] = {
    "rouge2": "rouge2",
    "rougeL": "rougeL",
    "mean_words": "words",
    "distinct2": "distinct2",
}


def pooled_elp(generations: pd.DataFrame, family: Family) -> float:
    """ELP (%) of the generations of several seeds: in-context, the mean per-generation share; trained,
    the mean over seeds of each run's share of the fine-tuning set."""
    if family == "in_context":
        return 100 * float(generations["elp"].mean())
    return float(np.mean([_elp(run, family) for _, run in generations.groupby("seed")]))


def pooled_interval(
    generations: pd.DataFrame, metric: str, family: Family, seed: int = 0
) -> tuple[float, float]:
    """95% interval of a summary metric over every generation of every seed (in the metric's unit)."""
    if metric in RATE_COLUMNS:
        low, high = wilson_interval(int(generations[RATE_COLUMNS[metric]].sum()), len(generations))
        return 100 * low, 100 * high
    # Each resample copies only the columns its statistic reads: copying every column of the
    # generations 2,000 times was most of a table job's time.
    if metric == "elp":
        read = ["elp"] if family == "in_context" else ["n_private_values", "leaked_values"]
        return bootstrap_interval(generations[["seed", *read]], lambda g: pooled_elp(g, family), seed)
    if metric in MEAN_COLUMNS:
        column = MEAN_COLUMNS[metric]
        return bootstrap_interval(generations[["seed", column]], lambda g: float(g[column].mean()), seed)
    raise ValueError(f"no pooled interval for metric {metric!r}")


def segment_units(docs: pd.DataFrame) -> dict[SegmentKey, str]:
    """Each segment's privacy unit (`unit_id`: a TAB case, a MIMIC patient, a generic corpus's unit);
    where a corpus has none, each document is its own unit."""
    doc_ids = docs["doc_id"].astype(str)
    units = docs["unit_id"].where(docs["unit_id"].notna(), doc_ids) if "unit_id" in docs else doc_ids
    return {(d, int(s)): str(u) for d, s, u in zip(doc_ids, docs["segment"], units)}


def real_values(
    docs: pd.DataFrame,
    spans: pd.DataFrame,
    idset: str,
    verbatim_ngram: int,
    min_letters: int,
    linkage_quasi_min: int = LINKAGE_QUASI_MIN,
    code_runs: CodeRuns = DEFAULT_CODE_RUNS,
) -> RealValues:
    """The real corpus as the held-out control matches it, with each segment's privacy unit and its
    direct and quasi values apart, which unit linkage reads, and the distinctive digit runs of its code
    values (`code_runs`)."""
    return RealValues(
        values=gold_values_by_segment(spans, idset),
        persons=gold_values_by_segment(spans, idset, {"PERSON"}),
        any_values=gold_values_by_segment(spans, held_out.ANY_IDENTIFIER_SET),
        types=segment_type_sets(spans, idset),
        texts=segment_texts(docs),
        verbatim_ngram=verbatim_ngram,
        min_letters=min_letters,
        units=segment_units(docs),
        direct=gold_values_by_segment(spans, "direct"),
        quasi=gold_values_by_segment(spans, "quasi"),
        linkage_quasi_min=linkage_quasi_min,
        code_runs=segment_code_runs(spans, idset, code_runs),
    )


def segment_code_runs(spans: pd.DataFrame, idset: str, code_runs: CodeRuns) -> dict[SegmentKey, list[str]]:
    """Each segment's distinctive digit runs of the code values of the identifier set; segments
    without one are absent."""
    by_segment = {
        key: code_runs.distinctive(entities) for key, entities in _gold_entities(spans, idset).items()
    }
    return {key: runs for key, runs in by_segment.items() if runs}


def configured_real_values(
    docs: pd.DataFrame, spans: pd.DataFrame, idset: str, metrics: Mapping[str, Any]
) -> RealValues:
    """`real_values` with the matching settings of rule `privacy_metrics` (config `metrics` with the
    audit's `verbatim_ngram`): every reader that must match as the metrics do builds it here."""
    return real_values(
        docs,
        spans,
        idset,
        metrics["verbatim_ngram"],
        metrics["partial_leak_min_letters"],
        metrics["linkage_quasi_min"],
        CodeRuns.from_config(metrics["code_runs"]),
    )


def run_privacy_metrics(
    method_name: str,
    corpus: pd.DataFrame,
    docs: pd.DataFrame,
    spans: pd.DataFrame,
    codes: pd.DataFrame,
    idset: str,
    metrics: Mapping[str, Any],
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Rule `privacy_metrics`: the per-generation metrics of one corpus, by its method family's
    definitions (a trained method against its fine-tuning segments, from `codes`), with the held-out
    control of each leak measure beside them (`plainsight.evaluation.held_out`); their summary; and the
    control's counts per measure."""
    criteria = DocumentCriteria.from_config(metrics["document"])
    spec = method(method_name)
    train = training_keys(codes)
    real = configured_real_values(docs, spans, idset, metrics)
    keys = [(str(d), int(s)) for d, s in zip(codes["doc_id"], codes["segment"])]
    texts = corpus["text"].fillna("").astype(str).tolist()
    if not spec.in_context:  # trained and private-selection methods read the whole training split
        per_generation = ft_privacy_metrics(corpus, real, train, criteria, match_code_types=spec.trained)
        seen = set(train)
        unseen = [key for key in keys if key not in seen]
        controlled = held_out.trained_control(corpus, train, real)
        counts = held_out.trained_value_counts(texts, train, unseen, real)
    else:
        per_generation = icl_privacy_metrics(corpus, real, criteria)
        contexts = [context_keys(row) for row in corpus.to_dict("records")]
        controlled = held_out.in_context_control(corpus, contexts, train, real, seed)
        counts = held_out.in_context_value_counts(
            pd.concat([per_generation, controlled], axis=1), texts, contexts, keys, real
        )
    record = {
        "method": method_name,
        "seed": seed,
        "design": "paired" if spec.in_context else "unpaired",
        "measures": counts,
    }
    return pd.concat([per_generation, controlled], axis=1), summarise(per_generation, spec.family), record
