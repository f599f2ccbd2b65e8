"""The held-out control of every leak measure: the same matcher run against real values (and text)
that the method never saw. A value that unseen documents show as often is a phantom, not a leak.

- In-context methods (paired): per generation, the values of as many training segments as its prompt
  showed, from privacy units (documents, or a patient's notes) the prompt did not show, each drawn with
  the run's seed among them with the entity types of one context document (the nearest type set where
  none has them). A measure judged with the whole corpus (`LeakMeasure.corpus_hits`) has no such pair:
  its items are the units the prompts showed against the units they did not (unpaired, as below).
- Trained methods (unpaired): the distinct values that occur only in the fine-tuning segments against
  those that occur only in held-out (dev, test) segments: the share of each that the corpus holds.
  Verbatim copying: fine-tuning segments against held-out segments. Values cluster within documents,
  so each side's counts are also kept per document (`member_documents`, `control_documents`: [held,
  total] per document, in doc_id order): a value counts for the first document of its side, in sorted
  order, that holds it; a segment for its own document.

The measures and their matchers are declared once, in `plainsight.evaluation.measures`.

Each leaked value (any identifier) is classed `source_specific` when no real document outside its
source holds it (an unshown or held-out document for in-context methods, a held-out one for trained
methods) and `common` otherwise. Documents, not segments: a shown document's other segment is the
same case, so it neither explains a value nor serves as a control.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from plainsight.entities import SegmentKey
from plainsight.evaluation.measures import HeldItems, LeakMeasure, Side, leak_measures, tally
from plainsight.evaluation.real_segments import RealValues, Source, word_ngrams
from plainsight.matching import (
    leaked_values,
)
from plainsight.rng import stable_rng

SOURCE_SPECIFIC, COMMON = "source_specific", "common"
ANY_IDENTIFIER_SET = "both"  # direct and quasi identifiers, whatever the run's identifier set


def control_columns() -> list[str]:
    """The columns the control adds to the per-generation metrics: its segments, the member hits the
    paper's metrics lack, each measure's control hit, and the leaked identifier values with their class."""
    return [
        "control_doc_ids",
        "control_segments",
        *(m.member_column for m in leak_measures() if not m.paper_metric),
        *(m.control_column for m in leak_measures() if m.paired),
        "leaked_identifier_values",
        "leaked_value_classes",
        "source_specific_leak",
    ]


def value_classes(values: Sequence[str], source: Iterable[SegmentKey], real: RealValues) -> list[str]:
    """`common` where a real document outside `source`'s documents holds the value, else
    `source_specific`: another segment of a source document is the same case, not independent text."""
    inside = {doc_id for doc_id, _ in source}
    return [
        COMMON if any(doc_id not in inside for doc_id, _ in real.holders(value)) else SOURCE_SPECIFIC
        for value in values
    ]


def measure_hits(text: str, source: Source, real: RealValues) -> dict[str, bool]:
    """Whether `text` leaks something of `source`'s segments, per measure judged one generation at a time."""
    return {m.name: m.generation_hit(text, source, real) for m in leak_measures() if m.paired}


def corpus_hits(texts: Sequence[str], sources: Sequence[Source], real: RealValues) -> dict[str, list[bool]]:
    """Per measure judged with the whole corpus: whether each text leaks something of its source."""
    return {m.name: m.corpus_hits(texts, sources, real) for m in leak_measures() if not m.paired}


def _control_rows(
    texts: Sequence[str], members: Sequence[Source], controls: Sequence[Source] | None, real: RealValues
) -> pd.DataFrame:
    joined = corpus_hits(texts, members, real)
    rows = []
    for index, (text, member) in enumerate(zip(texts, members)):
        control = controls[index] if controls is not None else None
        hits = {**measure_hits(text, member, real), **{name: hit[index] for name, hit in joined.items()}}
        matched = measure_hits(text, control, real) if control else {}
        leaked = leaked_values(text, member.any_values)
        classes = value_classes(leaked, member.keys, real)
        rows.append(
            {
                "control_doc_ids": [key[0] for key in control.keys] if control else [],
                "control_segments": [key[1] for key in control.keys] if control else [],
                **{m.member_column: hits[m.name] for m in leak_measures() if not m.paper_metric},
                **{m.control_column: matched.get(m.name) for m in leak_measures() if m.paired},
                "leaked_identifier_values": leaked,
                "leaked_value_classes": classes,
                "source_specific_leak": SOURCE_SPECIFIC in classes,
            }
        )
    return pd.DataFrame(rows, columns=control_columns())


def _texts(corpus: pd.DataFrame) -> list[str]:
    return [str(text or "") for text in corpus["text"]]


# --- in-context: a matched control per generation -------------------------------------------------


def _type_distance(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return 0.0 if not union else 1 - len(a & b) / len(union)


def control_keys(
    context: Sequence[SegmentKey], pool: Sequence[SegmentKey], real: RealValues, rng: random.Random
) -> list[SegmentKey]:
    """One segment of an unshown privacy unit per context document, with its entity types (or the
    nearest type set), none drawn twice; fewer only when the pool runs out. A shown document's other
    segments, and a shown patient's other notes, are the same person, so they are never drawn."""
    shown = {real.unit_of(key) for key in context}
    free = sorted(key for key in pool if real.unit_of(key) not in shown)
    drawn: list[SegmentKey] = []
    for key in context:
        if not free:
            break
        wanted = real.types.get(key, frozenset())
        distances = [_type_distance(wanted, real.types.get(other, frozenset())) for other in free]
        nearest = [other for other, d in zip(free, distances) if d == min(distances)]
        choice = nearest[rng.randrange(len(nearest))]
        drawn.append(choice)
        free.remove(choice)
    return drawn


def in_context_control(
    corpus: pd.DataFrame,
    contexts: Sequence[Sequence[SegmentKey]],
    pool: Sequence[SegmentKey],
    real: RealValues,
    seed: int,
) -> pd.DataFrame:
    """Per generation: its matched control segments, the control hit of each paired measure, the member
    hits the paper's columns lack, and its leaked identifier values with their classes."""
    drawn = [
        control_keys(shown, pool, real, stable_rng(seed, "control", int(generation_id)))
        for generation_id, shown in zip(corpus["generation_id"], contexts)
    ]
    return _control_rows(
        _texts(corpus),
        [Source.of(shown, real) for shown in contexts],
        [Source.of(keys, real) for keys in drawn],
        real,
    )


# --- trained: distinct values of the fine-tuning set against held-out values ---------------------


def trained_control(corpus: pd.DataFrame, train: Sequence[SegmentKey], real: RealValues) -> pd.DataFrame:
    """Per generation: the member hits against the whole fine-tuning set and its leaked identifier values
    classed against the held-out segments; no control hit (a trained method's control is per value,
    `trained_value_counts`)."""
    texts = _texts(corpus)
    return _control_rows(texts, [Source.of(train, real)] * len(texts), None, real)


def per_document(items: HeldItems) -> list[list[int]]:
    """[held, total] per document of a side's items, in doc_id order (documents without items left out)."""
    counts: dict[str, list[int]] = {}
    for document, held in items:
        tally_of = counts.setdefault(document, [0, 0])
        tally_of[0] += int(held)
        tally_of[1] += 1
    return [counts[document] for document in sorted(counts)]


def _side_counts(measure: LeakMeasure, member: Side, control: Side) -> dict[str, Any]:
    if measure.held_items is None:
        documents = {}
        (member_hits, members), (control_hits, controls) = (
            measure.distinct_held(member),
            measure.distinct_held(control),
        )
    else:
        member_items, control_items = measure.held_items(member), measure.held_items(control)
        (member_hits, members), (control_hits, controls) = tally(member_items), tally(control_items)
        documents = {
            "member_documents": per_document(member_items),
            "control_documents": per_document(control_items),
        }
    return {
        # a measure without a paired control is unpaired in an in-context run too
        **({} if measure.paired else {"design": "unpaired"}),
        "member_hits": member_hits,
        "members": members,
        "control_hits": control_hits,
        "controls": controls,
        **documents,
    }


def trained_value_counts(
    generations: Sequence[str], train: Sequence[SegmentKey], held_out: Sequence[SegmentKey], real: RealValues
) -> dict[str, dict[str, Any]]:
    """Per measure: the distinct values occurring only in the fine-tuning (held-out) segments, and how
    many of them the corpus holds; verbatim: the fine-tuning (held-out) segments sharing a run with a
    generation. A measure that attributes its items to documents (`LeakMeasure.held_items`) also keeps
    them per document, `member_documents` and `control_documents`."""
    return _unpaired_counts(generations, train, held_out, real, leak_measures())


def _unpaired_counts(
    generations: Sequence[str],
    seen: Sequence[SegmentKey],
    unseen: Sequence[SegmentKey],
    real: RealValues,
    measures: Iterable[LeakMeasure],
) -> dict[str, dict[str, Any]]:
    corpus = "\n|\n".join(generations)  # no value's whitespace spans two generations
    index = frozenset().union(*(word_ngrams(text, real.verbatim_ngram) for text in generations))
    member = Side(generations, corpus, index, seen, unseen, real)
    control = Side(generations, corpus, index, unseen, seen, real)
    return {measure.name: _side_counts(measure, member, control) for measure in measures}


def in_context_value_counts(
    per_generation: pd.DataFrame,
    generations: Sequence[str],
    contexts: Sequence[Sequence[SegmentKey]],
    keys: Sequence[SegmentKey],
    real: RealValues,
) -> dict[str, dict[str, Any]]:
    """Per measure of an in-context corpus: the paired counts of each measure judged per generation
    (`paired_value_counts`), and the unpaired counts of each measure judged with the whole corpus, over
    the units of `keys` (every segment with a code) that the prompts showed against those they did not."""
    paired = paired_value_counts(per_generation)
    shown = {real.unit_of(key) for context in contexts for key in context}
    unpaired = _unpaired_counts(
        generations,
        [key for key in keys if real.unit_of(key) in shown],
        [key for key in keys if real.unit_of(key) not in shown],
        real,
        [m for m in leak_measures() if not m.paired],
    )
    return {m.name: paired[m.name] if m.paired else unpaired[m.name] for m in leak_measures()}


def paired_value_counts(per_generation: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per measure judged one generation at a time, of an in-context corpus: generations with a member
    hit, with a control hit, and the paired design's discordant counts (member hit only, control hit
    only)."""
    counts = {}
    for measure in (m for m in leak_measures() if m.paired):
        member = per_generation[measure.member_column].astype(bool).to_numpy()
        control = per_generation[measure.control_column].astype(bool).to_numpy()
        counts[measure.name] = {
            "member_hits": int(member.sum()),
            "members": len(member),
            "control_hits": int(control.sum()),
            "controls": len(control),
            "member_only": int((member & ~control).sum()),
            "control_only": int((~member & control).sum()),
        }
    return counts
