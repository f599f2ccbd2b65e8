"""What a reader of the released synthetic corpus alone can learn about the real documents.

- Membership through the text: for every real segment, a member (a context document of an
  in-context generation or a seed RPSG rewrote, else a segment of the training split a trained method
  fine-tuned on or Aug-PE's votes read) or held out (dev, test),
  the similarity of its nearest synthetic document: the highest MiniLM cosine and the longest
  shared word n-gram over the corpus. The AUC says how well that similarity tells members apart.
  The negative control: the same attack, with the same member and held-out sets, on a corpus written
  without private data (the base model from fictional codes alone). Its AUC is what the split alone
  gives (members and held-out segments differ in length, storylines, splits), and the excess of the
  corpus's AUC over it, paired on the same real segments, is what the corpus adds.
- Distance to the closest record: each generation's nearest real training segment (rank 1 of
  `plainsight.audit.nearest`) beside each held-out real segment's nearest training segment.
  A corpus whose generations sit closer to the training set than real unseen text does is a warning.
- Verbatim copying: a generation sharing a run of at least `verbatim_ngram` words with any real
  fine-tuning segment.
- Any-identifier leaks: the share of generations holding any annotated value, direct or quasi
  identifier whatever the run's identifier set, of their context documents (in-context) or of the
  fine-tuning set (trained), from the per-generation metrics (`plainsight.evaluation.held_out`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields

import numpy as np
import pandas as pd

from plainsight.audit.nearest import embed, training_segments, unit_rows, words
from plainsight.audit.roc import (
    balanced_sets,
    excess_over_resampled_control,
    roc_summary,
)
from plainsight.audit.shared_runs import longest_shared_ngram, longest_shared_with_any
from plainsight.data.segments import segment_texts
from plainsight.entities import SegmentKey
from plainsight.errors import InputError
from plainsight.evaluation.features import FeatureSettings
from plainsight.evaluation.privacy import context_keys
from plainsight.methods.registry import Method
from plainsight.methods.trained import training_keys

DISTANCE_COLUMNS = {
    "kind": "string",
    "doc_id": "string",
    "segment": "int64",
    "generation": "int64",
    "cosine": "float64",
    "longest_shared_ngram": "int64",
}


@dataclass(frozen=True)
class ReleasedTextAudit:
    text_mia_members: int
    text_mia_non_members: int
    text_mia_auc_cosine: float
    text_mia_auc_cosine_low: float
    text_mia_auc_cosine_high: float
    text_mia_auc_ngram: float
    text_mia_auc_ngram_low: float
    text_mia_auc_ngram_high: float
    dcr_synthetic_median: float  # median cosine of a generation to its nearest training segment
    dcr_held_out_median: float  # median cosine of a held-out real segment to its nearest training segment
    dcr_closer_than_held_out: bool  # the warning: generations sit closer to the training set than unseen text
    verbatim_ngram: int
    verbatim_share: float  # generations sharing >= verbatim_ngram words with a training segment
    longest_shared_ngram: int
    any_identifier_leak_share: float
    generations: int
    # the text attacks against the negative control (`versus_negative_control`); empty without one
    negative_control: dict[str, float] = field(default_factory=dict)


def member_keys(corpus: pd.DataFrame, codes: pd.DataFrame, method: Method) -> list[SegmentKey]:
    """The real segments the method used: the context documents of its prompts (in-context) or the seeds
    it rewrote (RPSG), as the corpus records them; else the whole training split it fine-tuned on or that
    voted (Aug-PE)."""
    if method.in_context or method.rewrites_seeds:
        return sorted({key for row in corpus.to_dict("records") for key in context_keys(row)})
    return training_keys(codes)


def held_out_keys(codes: pd.DataFrame, codes_file: str) -> list[SegmentKey]:
    keys = sorted(
        (str(d), int(s))
        for d, s, split in zip(codes["doc_id"], codes["segment"], codes["split"])
        if split != "train"
    )
    if not keys:
        raise InputError(codes_file, None, "no held-out (dev or test) segments to compare the members with")
    return keys


def nearest_similarity(
    segments: Sequence[str],
    segment_features: np.ndarray,
    generations: Sequence[str],
    generation_features: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per real segment: the highest cosine to any generation, and the longest n-gram shared with one."""
    cosines = (
        unit_rows(segment_features).astype(np.float64) @ unit_rows(generation_features).astype(np.float64).T
    )
    generation_words = [words(text) for text in generations]
    ngrams = np.array([longest_shared_with_any(words(text), generation_words) for text in segments])
    return cosines.max(axis=1), ngrams


def distance_rows(
    kind: str,
    keys: Sequence[SegmentKey],
    generations: Sequence[int],
    cosines: Sequence[float],
    ngrams: Sequence[int],
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": kind,
            "doc_id": [k[0] for k in keys],
            "segment": [k[1] for k in keys],
            "generation": list(generations),
            "cosine": list(cosines),
            "longest_shared_ngram": list(ngrams),
        }
    ).astype(DISTANCE_COLUMNS)


@dataclass(frozen=True)
class TextAuditSettings:
    verbatim_ngram: int = 10
    bootstrap: int = 1000
    seed: int = 1  # draws the balanced member and held-out sets
    embedding: FeatureSettings = FeatureSettings()
    # the dataset's `split`: with `coin` members and held-out texts are exchangeable by design, and the
    # gate judges the attacks' own AUC (`text_evidence.judged_beside_control`)
    split: str = "given"


class SegmentEmbeddings:
    """MiniLM features of the real segments an audit compares, embedded once."""

    def __init__(
        self, keys: Sequence[SegmentKey], texts: Mapping[SegmentKey, str], settings: FeatureSettings
    ):
        self.keys = sorted(set(keys))
        self.row = {key: number for number, key in enumerate(self.keys)}
        self.features = embed([texts[key] for key in self.keys], settings)

    def of(self, keys: Sequence[SegmentKey]) -> np.ndarray:
        return self.features[[self.row[key] for key in keys]]


# A corpus's generations and their sentence features: what a text attack compares the real segments with.
Written = tuple[Sequence[str], np.ndarray]
TEXT_ATTACKS = ("cosine", "ngram")


def nearest_scores(
    keys: Sequence[SegmentKey], texts: Mapping[SegmentKey, str], embedded: SegmentEmbeddings, written: Written
) -> dict[str, np.ndarray]:
    """Each text attack's score of each real segment against a corpus (`nearest_similarity`)."""
    generations, generation_features = written
    cosines, ngrams = nearest_similarity(
        [texts[key] for key in keys], embedded.of(keys), generations, generation_features
    )
    return dict(zip(TEXT_ATTACKS, (cosines, ngrams)))


def pair_scores(
    keys: Sequence[SegmentKey], texts: Mapping[SegmentKey, str], embedded: SegmentEmbeddings, written: Written
) -> dict[str, np.ndarray]:
    """Each text attack's score of each real segment (a row) against each generation of a corpus (a
    column): the cosine and the longest shared word n-gram, whose highest over a row is the segment's score
    (`nearest_scores`); what a resample of the corpus's generations reads."""
    generations, generation_features = written
    cosines = (
        unit_rows(embedded.of(keys)).astype(np.float64) @ unit_rows(generation_features).astype(np.float64).T
    )
    generation_words = [words(text) for text in generations]
    ngrams = np.array(
        [[longest_shared_ngram(words(texts[key]), other) for other in generation_words] for key in keys],
        dtype=float,
    ).reshape(len(keys), len(generations))
    return dict(zip(TEXT_ATTACKS, (cosines, ngrams)))


def versus_negative_control(
    label: Sequence[bool],
    scores: Mapping[str, np.ndarray],
    control: Mapping[str, np.ndarray],
    settings: TextAuditSettings,
    units: Sequence[str],
) -> dict[str, float]:
    """Per text attack: the negative control's AUC on the same segments, and the excess of the corpus's
    AUC over it (`text_mia_excess_{attack}`, `_low`, `_high`), its bootstrap bounds over the segments'
    `units` and, in the same draws, the control corpus's generations (`control`: `pair_scores`): the
    control is one sample of a corpus written without private data, and its AUC varies with it."""
    record: dict[str, float] = {}
    for name in TEXT_ATTACKS:
        excess, low, high = excess_over_resampled_control(
            label, scores[name], control[name], settings.bootstrap, settings.seed, units
        )
        record.update(
            {
                f"text_mia_auc_{name}_negative": roc_summary(
                    label, control[name].max(axis=1), resamples=0
                ).auc,
                f"text_mia_excess_{name}": excess,
                f"text_mia_excess_{name}_low": low,
                f"text_mia_excess_{name}_high": high,
            }
        )
    return record


def text_membership(
    members: Sequence[SegmentKey],
    held_out: Sequence[SegmentKey],
    texts: Mapping[SegmentKey, str],
    embedded: SegmentEmbeddings,
    written: Written,
    settings: TextAuditSettings,
    unit_of: Mapping[str, str],
    negative_control: Written | None = None,
) -> dict[str, float]:
    """AUC of "member" from the nearest synthetic document's cosine and shared n-gram against the corpus
    `written`, balanced sets, the bootstrap over privacy units (`unit_of`: doc_id -> unit; a document's
    segments share its side); with a negative control (its generations and features), the same attack on
    it with the same sets (`versus_negative_control`)."""
    chosen, others = balanced_sets(members, held_out, settings.seed)
    keys = chosen + others
    scores = nearest_scores(keys, texts, embedded, written)
    label = [True] * len(chosen) + [False] * len(others)
    units = [unit_of[str(doc_id)] for doc_id, _ in keys]
    result: dict[str, float] = {"text_mia_members": len(chosen), "text_mia_non_members": len(others)}
    for name, score in scores.items():
        summary = roc_summary(label, score, resamples=settings.bootstrap, seed=settings.seed, units=units)
        result.update(
            {
                f"text_mia_auc_{name}": summary.auc,
                f"text_mia_auc_{name}_low": summary.auc_low,
                f"text_mia_auc_{name}_high": summary.auc_high,
            }
        )
    if negative_control is not None:
        control = pair_scores(keys, texts, embedded, negative_control)
        result.update(versus_negative_control(label, scores, control, settings, units))
    return result


def closest_records(
    nearest: pd.DataFrame,
    generations: Sequence[str],
    train: Sequence[SegmentKey],
    held_out: Sequence[SegmentKey],
    texts: Mapping[SegmentKey, str],
    embedded: SegmentEmbeddings,
) -> pd.DataFrame:
    """Distance rows: each generation's nearest training segment (from the nearest-documents table, with
    its longest run shared with any training segment) and each held-out segment's nearest one."""
    train_words = [words(texts[key]) for key in train]
    first = nearest[nearest["rank"] == 1].sort_values("generation")
    if first["generation"].tolist() != list(range(len(generations))):
        raise ValueError(
            "the nearest-documents table does not match the corpus (one rank-1 row per generation)"
        )
    synthetic = distance_rows(
        "synthetic",
        list(zip(first["doc_id"], first["segment"])),
        first["generation"],
        first["cosine"],
        [longest_shared_with_any(words(t), train_words) for t in generations],
    )
    cosines = (
        unit_rows(embedded.of(held_out)).astype(np.float64)
        @ unit_rows(embedded.of(train)).astype(np.float64).T
    )
    held = distance_rows(
        "held_out",
        held_out,
        [-1] * len(held_out),
        cosines.max(axis=1),
        [longest_shared_with_any(words(texts[key]), train_words) for key in held_out],
    )
    return pd.concat([synthetic, held], ignore_index=True)


def units_of_documents(docs: pd.DataFrame) -> dict[str, str]:
    """doc_id -> privacy unit (the docs' `unit_id`); a table that names no units makes every document its
    own."""
    units = docs["unit_id"] if "unit_id" in docs.columns else docs["doc_id"]
    return dict(zip(docs["doc_id"].astype(str), units.astype(str)))


@dataclass(frozen=True)
class AuditedCorpus:
    """One corpus as its audit reads it: its generations, their per-generation metrics (which give the
    any-identifier leaks) and their nearest training segments (the nearest-documents table)."""

    corpus: pd.DataFrame
    metrics: pd.DataFrame
    nearest: pd.DataFrame


def released_text_audit(
    audited: AuditedCorpus,
    codes: pd.DataFrame,
    docs: pd.DataFrame,
    method: Method,
    settings: TextAuditSettings,
    files: Mapping[str, str] | None = None,
    prepared: tuple[SegmentEmbeddings, np.ndarray] | None = None,
    negative_control: Written | None = None,
) -> tuple[ReleasedTextAudit, pd.DataFrame]:
    """The released-text audit of one corpus, and its distance rows (for the distance plot). `prepared`:
    the segment embeddings and the corpus's features, where a caller that audits several corpora has them
    already; `negative_control`: the generations and features of a corpus written without private data,
    which the text attacks are judged against (it must be embedded as `prepared`'s corpus is)."""
    files = {"codes": "codes", "corpus": "corpus", **(files or {})}
    corpus, metrics = audited.corpus, audited.metrics
    generations = corpus["text"].fillna("").astype(str).tolist()
    if not generations:
        raise InputError(files["corpus"], None, "no generations to audit")
    texts = segment_texts(docs)
    train, _ = training_segments(codes, docs)
    held_out = held_out_keys(codes, files["codes"])
    members = member_keys(corpus, codes, method)
    embedded, generation_features = prepared or (
        SegmentEmbeddings([*train, *held_out, *members], texts, settings.embedding),
        embed(generations, settings.embedding),
    )
    membership = text_membership(
        members,
        held_out,
        texts,
        embedded,
        (generations, generation_features),
        settings,
        units_of_documents(docs),
        negative_control,
    )
    attack_fields = {f.name for f in fields(ReleasedTextAudit)}
    distances = closest_records(audited.nearest, generations, train, held_out, texts, embedded)
    synthetic, held = (distances[distances["kind"] == kind] for kind in ("synthetic", "held_out"))
    audit = ReleasedTextAudit(
        **{key: value for key, value in membership.items() if key in attack_fields},
        negative_control={key: value for key, value in membership.items() if key not in attack_fields},
        dcr_synthetic_median=float(synthetic["cosine"].median()),
        dcr_held_out_median=float(held["cosine"].median()),
        dcr_closer_than_held_out=bool(synthetic["cosine"].median() > held["cosine"].median()),
        verbatim_ngram=settings.verbatim_ngram,
        verbatim_share=float((synthetic["longest_shared_ngram"] >= settings.verbatim_ngram).mean()),
        longest_shared_ngram=int(synthetic["longest_shared_ngram"].max()),
        any_identifier_leak_share=float(metrics["any_identifier_leak"].astype(bool).mean()),
        generations=len(generations),
    )
    return audit, distances


def audit_record(audit: ReleasedTextAudit) -> dict:
    """The audit as one flat record: the negative control's columns beside the others."""
    record = asdict(audit)
    negative_control = record.pop("negative_control")
    return {**record, **negative_control}
