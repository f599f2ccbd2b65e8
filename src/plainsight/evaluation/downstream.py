"""Train on synthetic, test on real: does a classifier trained on a synthetic corpus work on real text?

The task is the corpus's document labels (docs.parquet `labels`: TAB the case's ECHR articles,
multi-label; MIMIC the note's category, one label). Its labels are the `top_labels` most frequent
in the real training split; a label with fewer than `min_documents` documents in the training or
the test split stops the job (`on_rare_label: error`) or is dropped with a logged count (`drop`).
Where no task is left (a corpus without labels, or too few labels with enough documents in both
splits), the scores are not measured and the rows say why (`NOT_MEASURED`); the labels are counted by
`plainsight.data.labels`, which the checks before work (`python -m plainsight.data.validate`) read too.

Classifiers (`classifier`): TF-IDF + logistic regression (scikit-learn, one-vs-rest, balanced
class weights; seconds on a CPU), or an encoder fine-tuned with Hugging Face's Trainer
(`plainsight.evaluation.encoder_classifier`). One is trained on the real training segments (the
ceiling) and one on each synthetic corpus, and all are scored on the real test segments:
macro-F1 and accuracy (exact match of the label set) with seeded bootstrap intervals that resample
test documents (a document's segments share its labels), and the equalised-odds gap by `group`.

Labels of synthetic texts (`synthetic_labels`):
- `silver_matched` (default): the real-trained classifier ranks the synthetic texts, and each
  label goes to as many of them as its share of the real training split (multi-label: the top
  texts per label; single-label: the highest-scoring free (text, label) pairs until every label's
  quota is filled). Silver because the control codes carry entity values, not the document's labels:
  a trained method's generation has no channel to its source sample's labels, so inherited labels
  would measure the label noise, not the text. Matched because the classifier's thresholds are set
  on real text: on the demo's shorter synthetic texts its 0.5 decisions give almost no label
  (4-8% of texts against 12-33% in the real split), and a classifier trained on all-negative
  targets scores 0 whatever the text.
- `silver`: the classifier's own decisions (sigmoid above 0.5, or the arg-max label), as
  SynthTextEval labels its synthetic notes.
- `inherited`: a trained method's generation takes the labels of the fine-tuning sample whose
  fictional code prompted it; an in-context generation those carried by more than half of its
  context documents.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd

from plainsight.data.labels import LabelRule, document_labels, is_multi_label, rare_labels, task_shortfall
from plainsight.errors import InputError
from plainsight.evaluation.encoder_settings import EncoderSettings
from plainsight.evaluation.intervals import percentile_interval
from plainsight.rng import stable_rng
from plainsight.settings import DownstreamConfig

log = logging.getLogger(__name__)

REAL = "real"  # the method key of the ceiling row: trained on the real training split
# trained on a seeded sample of real training segments as large as the largest corpus: at the demo's
# size a corpus has far fewer texts than the real split, and this row tells size from text
REAL_SAMPLE = "real_sample"
# the best scores a rule that ignores the text can expect (`chance_scores`): the floor a corpus must
# clear for its text to carry the labels
CHANCE = "chance"
LABEL_MODES = ("silver_matched", "silver", "inherited")
RARE_LABEL_POLICIES = ("error", "drop")
CLASSIFIERS = ("tfidf_logreg", "encoder")
# the column of the downstream rows, present only where no task runs, that says why (no labels, too few)
NOT_MEASURED = "downstream_not_measured"
SCORE_COLUMNS: tuple[str, ...] = (
    "macro_f1",
    "macro_f1_low",
    "macro_f1_high",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "equalised_odds_gap",
)


@dataclass(frozen=True)
class DownstreamSettings:
    classifier: str = "tfidf_logreg"
    top_labels: int = 5
    min_documents: int = 2
    synthetic_labels: str = "silver_matched"
    on_rare_label: str = "drop"
    bootstrap_resamples: int = 1000
    seed: int = 0
    encoder: EncoderSettings = field(default_factory=EncoderSettings)

    def __post_init__(self):
        for name, value, allowed in (
            ("classifier", self.classifier, CLASSIFIERS),
            ("synthetic_labels", self.synthetic_labels, LABEL_MODES),
            ("on_rare_label", self.on_rare_label, RARE_LABEL_POLICIES),
        ):
            if value not in allowed:
                raise ValueError(f"downstream.{name} {value!r} is not one of {allowed}")

    @classmethod
    def from_config(cls, downstream: DownstreamConfig) -> DownstreamSettings:
        """The `utility.downstream` config block's task."""
        return cls(
            downstream.classifier,
            downstream.top_labels,
            downstream.min_documents,
            downstream.synthetic_labels,
            downstream.on_rare_label,
            downstream.bootstrap_resamples,
            encoder=EncoderSettings(**asdict(downstream.encoder)),
        )

    @property
    def label_rule(self) -> LabelRule:
        return LabelRule(self.top_labels, self.min_documents)


# --- the task ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelTask:
    labels: tuple[str, ...]
    multi_label: bool
    not_measured: str = ""  # why no task runs on the corpus's labels; "" where it runs

    def matrix(self, label_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """A 0/1 indicator matrix (texts x labels); labels outside the task are ignored."""
        index = {label: column for column, label in enumerate(self.labels)}
        matrix = np.zeros((len(label_lists), len(self.labels)), dtype=np.int64)
        for row, labels in enumerate(label_lists):
            for label in labels:
                if label in index:
                    matrix[row, index[label]] = 1
        return matrix


def label_task(docs: pd.DataFrame, settings: DownstreamSettings, dataset: str) -> LabelTask:
    """The task's labels: the most frequent in the training split that every split has enough of. A
    rare label stops the job (`on_rare_label: error`) or is left out; where too few labels are left, or
    the corpus has none, the task says why it is not measured (`LabelTask.not_measured`)."""
    kept, rare = rare_labels(docs, settings.label_rule)
    for rare_label in rare:
        if settings.on_rare_label == "error":
            raise InputError(
                f"dataset {dataset}",
                f"label {rare_label.label!r}",
                f"{rare_label.shortage(settings.min_documents)}; set downstream.on_rare_label: drop to "
                "leave it out",
            )
        log.info(
            "label %r dropped: %s documents, fewer than %d",
            rare_label.label,
            ", ".join(f"{count} in {split}" for split, count in rare_label.short),
            settings.min_documents,
        )
    multi_label = is_multi_label(docs)
    shortfall = task_shortfall(docs, kept, settings.label_rule)
    if shortfall:
        log.warning("dataset %s: downstream task not measured: %s", dataset, shortfall)
        return LabelTask(tuple(kept), multi_label, shortfall)
    log.info("downstream task: %s labels %s", "multi-label" if multi_label else "single-label", kept)
    return LabelTask(tuple(kept), multi_label)


@dataclass(frozen=True)
class RealSplit:
    texts: list[str]
    targets: np.ndarray
    doc_ids: np.ndarray
    groups: np.ndarray  # object: a group name or None


def real_split(docs: pd.DataFrame, split: str, task: LabelTask) -> RealSplit:
    """A split's segments; a single-label task keeps only the segments with one of its labels."""
    rows = docs[docs["split"] == split]
    targets = task.matrix([list(labels) for labels in rows["labels"]])
    if not task.multi_label:
        keep = targets.sum(axis=1) > 0
        rows, targets = rows[keep], targets[keep]
    groups = rows["group"].astype(object).where(rows["group"].notna(), None) if "group" in rows else None
    return RealSplit(
        rows["text"].astype(str).tolist(),
        targets,
        rows["doc_id"].astype(str).to_numpy(),
        np.asarray(groups if groups is not None else [None] * len(rows), dtype=object),
    )


# --- classifiers ---------------------------------------------------------------------------------


class TextClassifier(Protocol):
    multi_label: bool

    def fit(self, texts: Sequence[str], targets: np.ndarray) -> TextClassifier: ...

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Per text and label a decision value: positive where the label's probability is above 0.5."""


def one_hot_argmax(scores: np.ndarray) -> np.ndarray:
    predicted = np.zeros(scores.shape, dtype=np.int64)
    predicted[np.arange(len(scores)), scores.argmax(axis=1)] = 1
    return predicted


def decisions(scores: np.ndarray, multi_label: bool) -> np.ndarray:
    """A classifier's labels from its decision values: every positive one, or the arg-max label."""
    return (scores > 0).astype(np.int64) if multi_label else one_hot_argmax(scores)


def predict(classifier: TextClassifier, texts: Sequence[str]) -> np.ndarray:
    return decisions(classifier.scores(texts), classifier.multi_label)


def quotas(shares: np.ndarray, texts: int) -> np.ndarray:
    """Texts per label at the given shares, at least one each (a label no text has cannot be learnt)."""
    return np.maximum(1, np.round(shares * texts)).astype(int)


def matched_labels(scores: np.ndarray, shares: np.ndarray, multi_label: bool) -> np.ndarray:
    """Labels at the real split's shares by the classifier's ranking: per label its top texts
    (multi-label), or one label per text, highest-scoring pairs first, while the label has quota."""
    texts, labels = scores.shape
    matched = np.zeros(scores.shape, dtype=np.int64)
    if texts == 0:
        return matched
    wanted = quotas(shares, texts)
    if multi_label:
        for column in range(labels):
            matched[np.argsort(-scores[:, column], kind="stable")[: wanted[column]], column] = 1
        return matched
    left = wanted.copy()
    for flat in np.argsort(-scores, axis=None, kind="stable"):
        row, column = divmod(int(flat), labels)
        if left[column] > 0 and not matched[row].any():
            matched[row, column] = 1
            left[column] -= 1
    for row in np.flatnonzero(matched.sum(axis=1) == 0):  # rounding left a text without a quota
        matched[row, scores[row].argmax()] = 1
    return matched


class TfidfLogisticRegression:
    """TF-IDF of word uni- and bigrams, one balanced logistic regression per label."""

    def __init__(self, task: LabelTask, seed: int = 0):
        self.task, self.seed = task, seed
        self.multi_label = task.multi_label

    def fit(self, texts: Sequence[str], targets: np.ndarray) -> TfidfLogisticRegression:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier
        from sklearn.pipeline import make_pipeline

        regression = LogisticRegression(class_weight="balanced", max_iter=1000, random_state=self.seed)
        self.pipeline = make_pipeline(
            TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2)), OneVsRestClassifier(regression)
        )
        # one-vs-rest keeps a label that no training text has as a constant "no" (it warns)
        self.pipeline.fit(list(texts), targets)
        return self

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        values = np.asarray(self.pipeline.decision_function(list(texts)), dtype=float)
        return values.reshape(len(texts), len(self.task.labels))


def make_classifier(
    task: LabelTask, settings: DownstreamSettings, placement: Mapping[str, str] | None = None
) -> TextClassifier:
    if settings.classifier == "encoder":
        from plainsight.evaluation.encoder_classifier import EncoderClassifier

        return EncoderClassifier(task.multi_label, settings.encoder, settings.seed, placement or {})
    return TfidfLogisticRegression(task, settings.seed)


# --- scores --------------------------------------------------------------------------------------


def macro_f1(targets: np.ndarray, predicted: np.ndarray) -> float:
    """Macro-F1 of 0/1 indicator matrices (texts x labels); a label with no true and no predicted
    positive scores 0 (scikit-learn's zero_division=0)."""
    true_pos = (targets & predicted).sum(axis=0)
    false_pos = ((1 - targets) & predicted).sum(axis=0)
    false_neg = (targets & (1 - predicted)).sum(axis=0)
    denominator = 2 * true_pos + false_pos + false_neg
    f1 = np.divide(
        2 * true_pos, denominator, out=np.zeros(denominator.shape, dtype=float), where=denominator > 0
    )
    return float(f1.mean())


def exact_match(targets: np.ndarray, predicted: np.ndarray) -> float:
    """Accuracy: the share of texts whose predicted label set is their true one."""
    return float((targets == predicted).all(axis=1).mean())


def document_resamples(doc_ids: np.ndarray, resamples: int, seed: int) -> list[np.ndarray]:
    """Row indices of `resamples` bootstrap samples that draw whole documents with replacement."""
    groups = [np.flatnonzero(doc_ids == doc_id) for doc_id in dict.fromkeys(doc_ids)]
    draws = np.random.default_rng(seed).integers(0, len(groups), size=(resamples, len(groups)))
    return [np.concatenate([groups[g] for g in draw]) for draw in draws]


def equalised_odds_gap(targets: np.ndarray, predicted: np.ndarray, groups: np.ndarray) -> float:
    """Per label, the largest difference between groups in true-positive rate or in false-positive
    rate (a rate only over groups that have positives, resp. negatives); the mean over labels.
    NaN without two groups to compare."""
    present = np.array([group is not None for group in groups])
    names = sorted(set(groups[present]))
    gaps = []
    for column in range(targets.shape[1]):
        truth, guess = targets[present, column], predicted[present, column]
        tpr, fpr = [], []
        for name in names:
            rows = groups[present] == name
            if truth[rows].sum():
                tpr.append(guess[rows & (truth == 1)].mean())
            if (1 - truth[rows]).sum():
                fpr.append(guess[rows & (truth == 0)].mean())
        spreads = [max(rates) - min(rates) for rates in (tpr, fpr) if len(rates) >= 2]
        if spreads:
            gaps.append(max(spreads))
    return float(np.mean(gaps)) if gaps else math.nan


def chance_scores(test: RealSplit, multi_label: bool) -> dict[str, float]:
    """The best macro-F1 and accuracy a rule that ignores the text can expect on the test split: the
    floor a corpus must clear for its text to carry the labels. No intervals.

    A label given at rate q whatever the text expects F1 2pq / (p + q), p its test share, which grows
    with q. Multi-label: every label to every text, F1 2p / (1 + p) exactly (labels drawn at their
    training shares expect less, and a corpus whose classifier says yes to every label scores this
    whatever its text). Single-label, where the rates sum to 1: rates in proportion to the test
    shares maximise the sum, F1 2p / (1 + S) with S the shares' sum. Accuracy: the test split's most
    common label set (multi-label, the empty set included) or label given to every text."""
    test_shares = test.targets.mean(axis=0)
    if multi_label:
        f1 = 2 * test_shares / (1 + test_shares)
        _, counts = np.unique(test.targets, axis=0, return_counts=True)
        accuracy = counts.max() / len(test.targets)
    else:
        f1 = 2 * test_shares / (1 + test_shares.sum())
        accuracy = test_shares.max()
    return {
        **dict.fromkeys(SCORE_COLUMNS, math.nan),
        "macro_f1": float(f1.mean()),
        "accuracy": float(accuracy),
    }


def scores(test: RealSplit, predicted: np.ndarray, settings: DownstreamSettings) -> dict[str, float]:
    """Macro-F1, accuracy (with bootstrap intervals over test documents) and the equalised-odds gap."""
    samples = document_resamples(test.doc_ids, settings.bootstrap_resamples, settings.seed)
    f1_low, f1_high = percentile_interval(
        np.array([macro_f1(test.targets[r], predicted[r]) for r in samples])
    )
    accuracy_low, accuracy_high = percentile_interval(
        np.array([exact_match(test.targets[r], predicted[r]) for r in samples])
    )
    return {
        "macro_f1": float(macro_f1(test.targets, predicted)),
        "macro_f1_low": f1_low,
        "macro_f1_high": f1_high,
        "accuracy": float(exact_match(test.targets, predicted)),
        "accuracy_low": accuracy_low,
        "accuracy_high": accuracy_high,
        "equalised_odds_gap": equalised_odds_gap(test.targets, predicted, test.groups),
    }


# --- labels of synthetic texts -------------------------------------------------------------------


def inherited_labels(corpus: pd.DataFrame, labels_of: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """A generation's labels from the documents that prompted it: the one fine-tuning sample whose
    code it was written from, or the labels more than half of its context documents carry."""
    result = []
    for doc_ids in corpus["context_doc_ids"]:
        doc_ids = [str(d) for d in doc_ids]
        counts = Counter(label for doc_id in doc_ids for label in set(labels_of.get(doc_id, [])))
        result.append(sorted(label for label, count in counts.items() if count > len(doc_ids) / 2))
    return result


def synthetic_targets(
    corpus: pd.DataFrame,
    task: LabelTask,
    labels_of: Mapping[str, Sequence[str]],
    ceiling: TextClassifier,
    shares: np.ndarray,
    mode: str,
) -> np.ndarray:
    if mode == "inherited":
        return task.matrix(inherited_labels(corpus, labels_of))
    scores = ceiling.scores(corpus["text"].astype(str).tolist())
    return (
        matched_labels(scores, shares, task.multi_label)
        if mode == "silver_matched"
        else decisions(scores, task.multi_label)
    )


def not_measured_scores(corpora: Mapping[tuple[str, int], pd.DataFrame], reason: str) -> pd.DataFrame:
    """The rows of `downstream_scores` where no task runs: the real row and one per corpus, every score
    missing, and `NOT_MEASURED` saying why."""
    keys = [(REAL, 0), *corpora]
    return pd.DataFrame(
        {
            "method": [method for method, _ in keys],
            "seed": [seed for _, seed in keys],
            "train_texts": 0,
            "label_source": "none",
            **dict.fromkeys(SCORE_COLUMNS, math.nan),
            "labels": "",
            NOT_MEASURED: reason,
        }
    )


def downstream_scores(
    docs: pd.DataFrame,
    corpora: Mapping[tuple[str, int], pd.DataFrame],
    settings: DownstreamSettings,
    dataset: str,
    placement: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row for the real-trained ceiling (method `real`, seed 0), one for chance (`chance`), one for
    real training segments as many as the largest corpus has texts (`real_sample`, where that is
    fewer), and one per synthetic corpus, keyed (method, seed): training texts, labels, their source,
    the scores on the real test split. Where no task runs (`LabelTask.not_measured`), the real row and
    one per corpus without scores (`not_measured_scores`)."""
    task = label_task(docs, settings, dataset)
    if task.not_measured:
        return not_measured_scores(corpora, task.not_measured)
    train, test = real_split(docs, "train", task), real_split(docs, "test", task)
    shares = train.targets.mean(axis=0)
    ceiling = make_classifier(task, settings, placement).fit(train.texts, train.targets)
    rows = [
        {
            "method": REAL,
            "seed": 0,
            "train_texts": len(train.texts),
            "label_source": "real",
            **scores(test, predict(ceiling, test.texts), settings),
        },
        {
            "method": CHANCE,
            "seed": 0,
            "train_texts": 0,
            "label_source": "none",
            **chance_scores(test, task.multi_label),
        },
    ]
    size = max((len(corpus) for corpus in corpora.values()), default=len(train.texts))
    if size < len(train.texts):
        chosen = sorted(stable_rng("downstream real sample").sample(range(len(train.texts)), size))
        texts = [train.texts[i] for i in chosen]
        sampled = make_classifier(task, settings, placement).fit(texts, train.targets[chosen])
        rows.append(
            {
                "method": REAL_SAMPLE,
                "seed": 0,
                "train_texts": size,
                "label_source": "real",
                **scores(test, predict(sampled, test.texts), settings),
            }
        )
    labels_of = document_labels(docs)
    for (method, seed), corpus in corpora.items():
        targets = synthetic_targets(corpus, task, labels_of, ceiling, shares, settings.synthetic_labels)
        texts = corpus["text"].astype(str).tolist()
        classifier = make_classifier(task, settings, placement).fit(texts, targets)
        rows.append(
            {
                "method": method,
                "seed": seed,
                "train_texts": len(texts),
                "label_source": settings.synthetic_labels,
                **scores(test, predict(classifier, test.texts), settings),
            }
        )
    frame = pd.DataFrame(rows)
    frame["labels"] = ", ".join(task.labels)
    return frame
