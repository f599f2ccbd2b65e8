"""What the documents' labels allow a downstream task (`plainsight.evaluation.downstream`): the most
frequent labels of the training split that the training and the test split each have enough documents
of, those they have too few of, and why no task is left where none is. Counted on `docs.parquet` (its
`split` and `labels`), so that the checks before work (`plainsight.data.validate`) and the downstream
job read the labels alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class LabelRule:
    """`utility.downstream`'s rule for labels: the `top_labels` most frequent of the training split, each
    needing `min_documents` documents in the training and in the test split."""

    top_labels: int = 5
    min_documents: int = 2


def document_labels(docs: pd.DataFrame) -> dict[str, list[str]]:
    """Each document's labels (every segment of a document carries the same)."""
    first = docs.drop_duplicates("doc_id")
    return {
        str(doc_id): [str(label) for label in labels]
        for doc_id, labels in zip(first["doc_id"], first["labels"])
    }


def _split_counts(docs: pd.DataFrame, split: str) -> Counter:
    labels = document_labels(docs[docs["split"] == split])
    return Counter(label for doc_labels in labels.values() for label in set(doc_labels))


@dataclass(frozen=True)
class RareLabel:
    """A top label of the training split with fewer than `min_documents` documents in the training or
    the test split: (split, documents) of each split it is short in."""

    label: str
    short: tuple[tuple[str, int], ...]

    def shortage(self, min_documents: int) -> str:
        split, count = self.short[0]
        return (
            f"{count} documents in the {split} split, fewer than downstream.min_documents ({min_documents})"
        )

    def problem(self, min_documents: int) -> str:
        return f"label {self.label!r}: {self.shortage(min_documents)}"


def rare_labels(docs: pd.DataFrame, rule: LabelRule) -> tuple[list[str], list[RareLabel]]:
    """(the task's labels: the `top_labels` most frequent of the training split that the training and
    the test split each have enough documents of, the top labels they have too few of)."""
    train, test = _split_counts(docs, "train"), _split_counts(docs, "test")
    by_count = sorted(train.items(), key=lambda item: (-item[1], item[0]))
    top = [label for label, _ in by_count[: rule.top_labels]]
    kept, rare = [], []
    for label in top:
        short = tuple(
            (split, counts[label])
            for split, counts in (("train", train), ("test", test))
            if counts[label] < rule.min_documents
        )
        if short:
            rare.append(RareLabel(label, short))
        else:
            kept.append(label)
    return kept, rare


def is_multi_label(docs: pd.DataFrame) -> bool:
    """Whether some document has more than one label (a multi-label task)."""
    return any(len(labels) > 1 for labels in document_labels(docs).values())


def labels_needed(multi_label: bool) -> int:
    """Labels a task needs: one for a multi-label task (each label its own yes or no), two otherwise."""
    return 1 if multi_label else 2


def task_shortfall(docs: pd.DataFrame, kept: Sequence[str], rule: LabelRule) -> str:
    """Why no downstream task runs on `kept` (the labels left), or "" where one does."""
    if not any(document_labels(docs).values()):
        return "no labels: no document has a `label`"
    needed = labels_needed(is_multi_label(docs))
    if len(kept) >= needed:
        return ""
    return (
        f"{len(kept)} label(s) left with at least {rule.min_documents} documents in the training "
        f"and the test split; a downstream task needs {needed}"
    )


@dataclass(frozen=True)
class LabelCheck:
    """The checks before work on the labels: each top label too rare in a split (one line each), and why
    no downstream task is left ("" where one is)."""

    rare: tuple[str, ...]
    shortfall: str


def label_check(docs: pd.DataFrame, rule: LabelRule) -> LabelCheck:
    kept, rare = rare_labels(docs, rule)
    lines = tuple(rare_label.problem(rule.min_documents) for rare_label in rare)
    return LabelCheck(lines, task_shortfall(docs, kept, rule))
