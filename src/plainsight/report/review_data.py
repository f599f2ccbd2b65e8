"""What the review page shows, computed at build time: each generation's flags, the character spans of
its fictional and real values (each real value with its class, source-specific or common, where the
metrics give one: `plainsight.report.leak_classes`), its context and nearest real segments with their
shared word n-grams, and an index of every value to the real and synthetic documents that hold it.

The page only renders these spans; every match follows `plainsight.matching`, as the metrics do.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from plainsight.codes.control_code import select_spans
from plainsight.evaluation.measures import leak_measures
from plainsight.evaluation.privacy import context_keys
from plainsight.matching import (
    NearMatcher,
    fold,
    name_words,
    near_spans,
    normalise_value,
    public_words,
    unique_values,
    value_spans,
    without_overlaps,
)
from plainsight.report.leak_classes import classes_by_value, listed, value_class

# Shared word n-grams of this many words or more are highlighted on both sides.
SHARED_NGRAM_WORDS = 5
# Real documents named beside one highlighted value (the entity lookup lists them all).
SOURCES_SHOWN = 5
_WORD = re.compile(r"\w+")
# Real values this many edits apart or fewer are checked as near variants of each other.
_VARIANT_EDITS = 3

Spans = list[tuple[int, int]]


def leak_flag_columns() -> tuple[tuple[str, str], ...]:
    """The leak flags of a generation: (key on the page, metrics column), one per leak measure that has
    a page flag, then whether it holds a source-specific value; a column the metrics lack is left out."""
    return (
        *((m.review_flag, m.member_column) for m in leak_measures() if m.review_flag),
        ("source_specific", "source_specific_leak"),
    )


def segment_ref(doc_id: Any, segment: Any) -> str:
    """How the page names a real segment."""
    return f"{doc_id}#{int(segment)}"


def corpus_fingerprint(paths: Sequence[str | Path]) -> str:
    """A short hash of the corpora's bytes, in the order given: comments name the corpus they were
    written for, and a file for other corpora is refused."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return digest.hexdigest()[:16]


# --- shared word n-grams ------------------------------------------------------------------------


def _words(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    matches = list(_WORD.finditer(text))
    return [m.group().casefold() for m in matches], [(m.start(), m.end()) for m in matches]


def _covered(words: Sequence[str], shared: set[tuple[str, ...]], n: int) -> list[bool]:
    covered = [False] * len(words)
    for first in range(len(words) - n + 1):
        if tuple(words[first : first + n]) in shared:
            covered[first : first + n] = [True] * n
    return covered


def _runs_to_spans(covered: Sequence[bool], positions: Sequence[tuple[int, int]]) -> Spans:
    spans: Spans = []
    for index, on in enumerate(covered):
        if not on:
            continue
        if index and covered[index - 1]:
            spans[-1] = (spans[-1][0], positions[index][1])
        else:
            spans.append(positions[index])
    return spans


def shared_ngram_spans(a: str, b: str, n: int = SHARED_NGRAM_WORDS) -> tuple[Spans, Spans]:
    """The character spans of `a` and of `b` covered by word n-grams (case-folded, `n` words or more)
    that both texts hold: overlapping shared n-grams join into one span."""
    words_a, positions_a = _words(a)
    words_b, positions_b = _words(b)
    grams_a = {tuple(words_a[i : i + n]) for i in range(len(words_a) - n + 1)}
    shared = grams_a & {tuple(words_b[i : i + n]) for i in range(len(words_b) - n + 1)}
    if not shared:
        return [], []
    return (
        _runs_to_spans(_covered(words_a, shared, n), positions_a),
        _runs_to_spans(_covered(words_b, shared, n), positions_b),
    )


# --- the real corpus ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RealCorpus:
    """The real segments and their gold values of one identifier set."""

    texts: Mapping[str, str]  # ref -> text
    splits: Mapping[str, str]
    spans: Mapping[str, list[tuple[int, int, str, str]]]  # ref -> (start, end, type, value)
    value_refs: Mapping[str, list[str]]  # folded value or name word -> refs holding it
    labels: Mapping[str, str]  # folded value or name word -> as first written
    types: Mapping[str, str]  # folded value or name word -> entity type
    common_words: frozenset[str]

    def sources(self, value: str, preferred: Sequence[str] = ()) -> list[str]:
        """The real segments a value comes from, those among `preferred` (a prompt's contexts) first."""
        refs = self.value_refs.get(fold(normalise_value(value)), [])
        return sorted(refs, key=lambda ref: ref not in preferred)


def real_corpus(docs: pd.DataFrame, spans: pd.DataFrame, idset: str, min_letters: int) -> RealCorpus:
    texts = {segment_ref(d, s): str(t) for d, s, t in zip(docs["doc_id"], docs["segment"], docs["text"])}
    splits = {segment_ref(d, s): str(p) for d, s, p in zip(docs["doc_id"], docs["segment"], docs["split"])}
    selected = select_spans(spans, idset).sort_values(["doc_id", "segment", "start"], kind="stable")
    by_ref: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    value_refs: dict[str, list[str]] = defaultdict(list)
    labels: dict[str, str] = {}
    types: dict[str, str] = {}
    for row in selected.itertuples(index=False):
        ref, value = segment_ref(row.doc_id, row.segment), normalise_value(str(row.text))
        by_ref[ref].append((int(row.start), int(row.end), str(row.entity_type), value))
        words = name_words([value], min_letters) if row.entity_type == "PERSON" else []
        for label in (value, *words):
            key = fold(label)
            labels.setdefault(key, label)
            types.setdefault(key, str(row.entity_type))
            if ref not in value_refs[key]:
                value_refs[key].append(ref)
    private = {tuple(ref.rsplit("#", 1)): [v for *_, v in values] for ref, values in by_ref.items()}
    keyed_texts = {(d, int(s)): t for (d, s), t in ((ref.rsplit("#", 1), t) for ref, t in texts.items())}
    common = public_words(keyed_texts, {(d, int(s)): v for (d, s), v in private.items()})
    return RealCorpus(texts, splits, dict(by_ref), dict(value_refs), labels, types, common)


# --- one generation -----------------------------------------------------------------------------


def real_highlights(
    text: str,
    exact: Iterable[str],
    near: Iterable[str],
    real: RealCorpus,
    contexts: Sequence[str],
    classes: Mapping[str, str],
) -> list[list[Any]]:
    """[start, end, "real" or "near", value, source refs, class] of the leaked real values and name words;
    the class is `source_specific`, `common`, or "" where the metrics give none (`classes_by_value`)."""
    found: list[list[Any]] = []
    exact = unique_values(exact)
    for value in exact:
        found += [[s, e, "real", value] for s, e in value_spans(text, value)]
    for value in unique_values(near):
        kind = "real" if value in exact else "near"
        found += [[s, e, kind, value] for s, e in near_spans(text, value, real.common_words)]
    kept = {(s, e) for s, e in without_overlaps((s, e) for s, e, *_ in found)}
    chosen = {(s, e): [s, e, kind, value] for s, e, kind, value in reversed(found) if (s, e) in kept}
    return [
        [
            *chosen[span],
            real.sources(chosen[span][3], contexts)[:SOURCES_SHOWN],
            value_class(chosen[span][3], classes) or "",
        ]
        for span in sorted(kept)
    ]


def fictional_highlights(text: str, values: Iterable[str], taken: Spans) -> list[list[Any]]:
    """[start, end, "fictional", value, [], ""] where the fictional code's values occur (as `leaked_values`
    matches them) and no real value is highlighted already."""
    found = [(s, e, value) for value in unique_values(values) for s, e in value_spans(text, value)]
    spans = without_overlaps([(s, e) for s, e, _ in found])
    value_of = {(s, e): value for s, e, value in found}
    free = [span for span in spans if not any(s < span[1] and span[0] < e for s, e in taken)]
    return [[s, e, "fictional", value_of[(s, e)], [], ""] for s, e in free]


def flags(metrics_row: Mapping[str, Any], corpus_row: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: bool(metrics_row[column]) for key, column in leak_flag_columns() if column in metrics_row}
    out["not_document"] = not bool(metrics_row.get("is_document", True))
    out["regenerated"] = int(corpus_row.get("regenerations", 0) or 0)
    out["hit_max"] = bool(corpus_row.get("hit_max_regenerations", False))
    return out


def _compared(text: str, ref: str, real: RealCorpus, extra: Mapping[str, Any]) -> dict[str, Any]:
    ours, theirs = shared_ngram_spans(text, real.texts.get(ref, ""))
    return {"ref": ref, "shared": ours, "shared_real": theirs, **extra}


def generation_record(
    index: int,
    corpus_row: Mapping[str, Any],
    metrics_row: Mapping[str, Any],
    nearest: Sequence[Mapping[str, Any]],
    real: RealCorpus,
    in_context: bool,
) -> dict[str, Any]:
    """Everything the document view and the corpus list show of one generation."""
    text = str(corpus_row["text"])
    contexts = [segment_ref(d, s) for d, s in context_keys(corpus_row)] if in_context else []
    fictional = [
        (e["type"], normalise_value(e["value"])) for e in listed(corpus_row.get("fictional_entities"))
    ]
    # the exact values of the identifier set, and every other direct or quasi value of its source
    reals = real_highlights(
        text,
        [*listed(metrics_row.get("leaked_values")), *listed(metrics_row.get("leaked_identifier_values"))],
        listed(metrics_row.get("near_leaked_values")),
        real,
        contexts,
        classes_by_value(metrics_row),
    )
    fictive = fictional_highlights(text, [v for _, v in fictional], [(h[0], h[1]) for h in reals])
    neighbours = [
        _compared(
            text,
            segment_ref(n["doc_id"], n["segment"]),
            real,
            {
                "rank": int(n["rank"]),
                "cosine": round(float(n["cosine"]), 4),
                "longest": int(n["longest_shared_ngram"]),
            },
        )
        for n in nearest
    ]
    return {
        "i": index,
        "id": str(corpus_row.get("generation_id", index)),
        "range": int(corpus_row["segment"]),
        "text": text,
        "words": len(text.split()),
        "flags": flags(metrics_row, corpus_row),
        "code": str(corpus_row.get("fictional_code") or ""),
        "fictional": fictional,
        "highlights": sorted(reals + fictive),
        "contexts": [_compared(text, ref, real, {}) for ref in contexts],
        "nearest": neighbours,
        "cosine": max((n["cosine"] for n in neighbours), default=None),
        "longest": max((n["longest"] for n in neighbours), default=None),
    }


def corpus_records(
    corpus: pd.DataFrame, metrics: pd.DataFrame, nearest: pd.DataFrame, real: RealCorpus, in_context: bool
) -> list[dict[str, Any]]:
    """One record per generation, in corpus order; metrics rows follow the corpus rows."""
    if len(metrics) != len(corpus):
        raise ValueError(f"{len(metrics)} metrics rows for {len(corpus)} generations")
    by_generation: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in nearest.sort_values(["generation", "rank"]).to_dict("records"):
        by_generation[int(row["generation"])].append(row)
    return [
        generation_record(i, c, m, by_generation.get(i, []), real, in_context)
        for i, (c, m) in enumerate(zip(corpus.to_dict("records"), metrics.to_dict("records")))
    ]


# --- the entity index ---------------------------------------------------------------------------


def match_kind(text: str, start: int, end: int, value: str) -> str:
    """ "exact" where the text holds the value itself (case and diacritics aside), else "near"."""
    return "exact" if fold(normalise_value(text[start:end])) == fold(value) else "near"


def _entry(index: dict[str, dict[str, Any]], label: str, kind: str, entity_type: str) -> dict[str, Any]:
    entry = index.setdefault(
        fold(label), {"value": label, "kinds": [], "types": [], "real": {}, "synthetic": {}}
    )
    if kind not in entry["kinds"]:
        entry["kinds"].append(kind)
    if entity_type and entity_type not in entry["types"]:
        entry["types"].append(entity_type)
    return entry


def _real_near_variants(real: RealCorpus) -> Iterable[tuple[str, str]]:
    """(key, other key) of real values that are near variants of each other: whole folded values
    within a few edits (compared in C), confirmed by `NearMatcher`'s rules."""
    keys = list(real.labels)
    if len(keys) < 2:
        return
    distances = process.cdist(
        keys, keys, scorer=Levenshtein.distance, score_cutoff=_VARIANT_EDITS, dtype=np.int32
    )
    for row, column in zip(*np.nonzero(distances <= _VARIANT_EDITS)):
        if row < column and NearMatcher([real.labels[keys[column]]], real.common_words).found(
            real.labels[keys[row]]
        ):
            yield keys[row], keys[column]


def entity_index(
    real: RealCorpus, corpora: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """Folded value -> its label, kinds (real, fictional), entity types, the real segments holding it
    ({ref: "exact" or "near"}) and the generations holding it ({"corpus:index": "exact" or "near"})."""
    index: dict[str, dict[str, Any]] = {}
    for key, refs in real.value_refs.items():
        _entry(index, real.labels[key], "real", real.types[key])["real"].update(dict.fromkeys(refs, "exact"))
    for key, other in _real_near_variants(real):
        for ref in real.value_refs[other]:
            index[key]["real"].setdefault(ref, "near")
        for ref in real.value_refs[key]:
            index[other]["real"].setdefault(ref, "near")
    for corpus_key, records in corpora.items():
        for record in records:
            fictional_types = {fold(v): t for t, v in record["fictional"]}
            for start, end, kind, value, *_ in record["highlights"]:
                entity_type = fictional_types.get(fold(value), "") if kind == "fictional" else ""
                entry = _entry(index, value, "fictional" if kind == "fictional" else "real", entity_type)
                entry["synthetic"].setdefault(
                    f"{corpus_key}:{record['i']}", match_kind(record["text"], start, end, value)
                )
    return index
