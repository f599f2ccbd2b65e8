"""Re-identification from the released text: which real person a generation points to.

The adversary holds the released corpus and the real corpus (they know the rest of the corpus), and
links each generation to the privacy units (docs `unit_id`: a document, or a patient) whose text shares
its rarest evidence, as the attacks on anonymised court rulings and clinical notes do (Nyffenegger et
al. 2024; Lison and Anderson 2025, who count word n-grams found in fewer than two documents as linkage
risks):

- evidence: the word `NGRAM`-grams of a text and the annotated identifier values (direct and quasi, from
  the spans) it holds, all as runs of case-folded words (`plainsight.matching.words`), so a value of
  `NGRAM` words and the same n-gram are one piece of evidence;
- a piece held by df of the N ranked units weighs log(N / df); one held by more than `MAX_HOLDERS` units
  points to no one and is left out, which also keeps every lookup short;
- a generation's score for a unit: the summed weights of the evidence both hold. The inverted index is
  a sparse evidence x unit incidence matrix, and the scores of a corpus one sparse product (generation x
  evidence, weighted, times evidence x unit): its cost grows with the postings of the evidence the
  generations hold, at most `MAX_HOLDERS` each, never with generations x units.

The index is built here: the evidence is one vocabulary of n-grams and identifier values read with the
project's own word tokeniser, found per segment and pooled per unit, and a corpus without rare evidence
must score zero rather than stop (scikit-learn's vectorisers raise on an empty vocabulary and would need
a custom analyser, leaving them only the bookkeeping). The sparse algebra is scipy's.

What it gives (`reidentification`):

- top-k accuracy (k in `RANKS`): the share of generations whose k best-ranked units hold one of the units
  they were written from (in-context methods: the context documents' units); its control, the share whose
  k best hold one of their matched control units (`plainsight.evaluation.held_out.control_keys`, the same
  number of unshown training documents). Units tied at a score are ordered at random: a generation counts
  with the exact probability that the order puts a wanted unit among the k first, so a generation that
  shares nothing rare with anyone scores the chance level, m / N for top-1 with m wanted units.
- membership: each unit's best score over the corpus tells "this unit was in the training data" (the
  units the method saw) from held-out units: an AUC on balanced sets (`roc.balanced_sets`) with its 95%
  percentile bootstrap interval, and beside a negative control (a corpus written without private data,
  scored against the same units) the paired excess of the AUC over the control's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from plainsight.audit.roc import (
    auc_resamples,
    balanced_sets,
    excess_over_resampled_control,
    roc_summary,
)
from plainsight.audit.text_evidence import REIDENTIFICATION as ATTACK
from plainsight.entities import IDENTIFIER_SETS, SegmentKey
from plainsight.errors import InputError
from plainsight.evaluation.held_out import ANY_IDENTIFIER_SET
from plainsight.matching import words

NGRAM = 3
MAX_HOLDERS = 10
RANKS = (1, 5)
SCORE_DECIMALS = 9  # scores equal to this many decimals are ties: sums of the same weights in another order


@dataclass(frozen=True)
class IdentifierValues:
    """Identifier values as runs of case-folded words joined by spaces, and the word counts of the values
    that start with each word: a text is searched only at the words that start one."""

    runs: frozenset[str]
    lengths: Mapping[str, tuple[int, ...]]  # first word -> word counts of the values starting with it

    @classmethod
    def of(cls, values: Iterable[str]) -> IdentifierValues:
        runs = {" ".join(tokens) for tokens in map(words, values) if tokens}
        lengths: dict[str, set[int]] = {}
        for run in runs:
            run_words = run.split(" ")
            lengths.setdefault(run_words[0], set()).add(len(run_words))
        return cls(frozenset(runs), {first: tuple(sorted(counts)) for first, counts in lengths.items()})

    def found_in(self, tokens: Sequence[str]) -> set[str]:
        """The values that occur as runs of `tokens`."""
        found = set()
        for start, token in enumerate(tokens):
            for length in self.lengths.get(token, ()):
                run = " ".join(tokens[start : start + length])
                if run in self.runs:
                    found.add(run)
        return found


def evidence_of(text: str, identifiers: IdentifierValues, ngram: int = NGRAM) -> set[str]:
    """The evidence a text holds: its word `ngram`-grams and the identifier values among its word runs."""
    tokens = words(text)
    grams = {" ".join(tokens[start : start + ngram]) for start in range(len(tokens) - ngram + 1)}
    return grams | identifiers.found_in(tokens)


def incidence(rows: Sequence[Sequence[int]], columns: int) -> sparse.csr_matrix:
    """A 0/1 matrix with a one at each (row, column) that `rows` lists."""
    row_of = np.repeat(np.arange(len(rows)), [len(row) for row in rows])
    column_of = np.fromiter((column for row in rows for column in row), dtype=np.int64, count=len(row_of))
    ones = np.ones(len(row_of))
    return sparse.csr_matrix((ones, (row_of, column_of)), shape=(len(rows), columns))


@dataclass(frozen=True)
class RareEvidenceIndex:
    """The rare evidence of every ranked unit: its weights and the inverted index evidence -> units."""

    units: tuple[str, ...]
    row: Mapping[str, int]  # unit -> its number: a column of `holders` and of the scores
    column: Mapping[str, int]  # evidence -> its number: a row of `holders`, a column of a text's evidence
    weights: np.ndarray  # log(N / df) per column
    holders: sparse.csr_matrix  # evidence x unit incidence
    identifiers: IdentifierValues
    ngram: int

    @classmethod
    def build(
        cls,
        unit_texts: Mapping[str, Sequence[str]],
        values: Iterable[str],
        ngram: int = NGRAM,
        max_holders: int = MAX_HOLDERS,
    ) -> RareEvidenceIndex:
        """The index of units (`unit_texts`: each unit's segment texts) over their n-grams and the
        identifier `values` they hold, the evidence that more than `max_holders` units hold left out."""
        identifiers = IdentifierValues.of(values)
        units = tuple(sorted(unit_texts))
        postings: dict[str, list[int]] = {}
        for row, unit in enumerate(units):
            held = set().union(*(evidence_of(text, identifiers, ngram) for text in unit_texts[unit]))
            for piece in held:
                postings.setdefault(piece, []).append(row)
        rare = sorted(piece for piece, holders in postings.items() if len(holders) <= max_holders)
        holders = incidence([postings[piece] for piece in rare], len(units))
        weights = np.log(len(units) / np.array([len(postings[piece]) for piece in rare], dtype=float))
        return cls(
            units,
            {unit: number for number, unit in enumerate(units)},
            {piece: number for number, piece in enumerate(rare)},
            weights,
            holders,
            identifiers,
            ngram,
        )

    def scores(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Text x unit: the summed weights of the rare evidence each text shares with each unit."""
        held = incidence(
            [
                sorted(
                    self.column[p] for p in evidence_of(t, self.identifiers, self.ngram) if p in self.column
                )
                for t in texts
            ],
            len(self.column),
        )
        return (held @ sparse.diags(self.weights) @ self.holders).tocsr()

    def unit_scores(self, texts: Sequence[str]) -> np.ndarray:
        """Each unit's score (a row, to `SCORE_DECIMALS`) in each of `texts` (a column), 0 where the text
        shares no rare evidence with it: the highest over a row is the unit's `best_by_unit`, and
        `roc.control_auc_variance` reads subsets of the columns."""
        return np.round(self.scores(texts).T.toarray(), SCORE_DECIMALS)


def best_by_unit(scores: sparse.csr_matrix) -> np.ndarray:
    """Per unit (column), its highest score over the texts (rows), to `SCORE_DECIMALS`; 0 where none shares
    rare evidence."""
    if scores.shape[0] == 0:
        return np.zeros(scores.shape[1])
    return np.round(scores.max(axis=0).toarray().ravel(), SCORE_DECIMALS)


@dataclass(frozen=True)
class RealUnits:
    """The real corpus as the adversary ranks it: its units' index, each document's unit, and the units
    of held-out segments that no training segment shares."""

    index: RareEvidenceIndex
    unit_of: Mapping[str, str]  # doc_id -> unit_id
    held_out: tuple[str, ...]

    @classmethod
    def of(
        cls,
        docs: pd.DataFrame,
        spans: pd.DataFrame,
        train: Sequence[SegmentKey],
        held_out: Sequence[SegmentKey],
        docs_file: str = "docs",
    ) -> RealUnits:
        """The units of the `train` and `held_out` segments of `docs`, over the direct and quasi identifier
        values of `spans`."""
        if "unit_id" not in docs.columns:
            raise InputError(
                docs_file, None, "no unit_id column (written by an older ingestion): rerun its ingest rule"
            )
        unit_of = dict(zip(docs["doc_id"].astype(str), docs["unit_id"].astype(str)))
        ranked = set(train) | set(held_out)
        unit_texts: dict[str, list[str]] = {}
        for doc_id, segment, text in zip(docs["doc_id"].astype(str), docs["segment"], docs["text"]):
            if (doc_id, int(segment)) in ranked:
                unit_texts.setdefault(unit_of[doc_id], []).append(str(text or ""))
        trained = {unit_of[doc_id] for doc_id, _ in train}
        unseen = tuple(sorted({unit_of[doc_id] for doc_id, _ in held_out} - trained))
        if not unseen:
            raise InputError(
                docs_file, None, "no held-out unit: every unit with held-out segments has training ones"
            )
        identifiers = spans[spans["identifier_type"].isin(IDENTIFIER_SETS[ANY_IDENTIFIER_SET])]["text"]
        return cls(RareEvidenceIndex.build(unit_texts, identifiers.astype(str)), unit_of, unseen)

    def rows(self, doc_ids: Iterable[str]) -> list[int]:
        """The index rows of the units of `doc_ids`, each once."""
        return sorted({self.index.row[self.unit_of[str(doc_id)]] for doc_id in doc_ids})


def found_among_best(positive: Mapping[int, float], wanted: Sequence[int], units: int, rank: int) -> float:
    """The probability that one of the `wanted` units is among the `rank` best of a generation's ranking
    of `units` units, the units tied at a score in random order. `positive`: the generation's positive
    scores by unit (every other unit scores 0), so the cost follows the units it shares evidence with."""
    best = max(positive.get(unit, 0.0) for unit in wanted)
    above = sum(score > best for score in positive.values())
    tied = sum(score == best for score in positive.values()) if best > 0 else units - len(positive)
    tied_wanted = sum(positive.get(unit, 0.0) == best for unit in wanted)
    places = rank - above
    if places <= 0:
        return 0.0
    if places >= tied:
        return 1.0
    # none of the tied wanted units among the `places` drawn from the tied ones, without replacement
    missed = math.prod((tied - tied_wanted - drawn) / (tied - drawn) for drawn in range(places))
    return 1.0 - missed


def top_k_shares(
    scores: sparse.csr_matrix, wanted: Sequence[Sequence[int]], ranks: Sequence[int]
) -> dict[int, float]:
    """Per rank k, the mean over the generations that want units (`wanted`, per row of `scores`) of the
    probability that one of them is among its k best (`found_among_best`); NaN where none wants any."""
    found: dict[int, list[float]] = {rank: [] for rank in ranks}
    for row, units_wanted in enumerate(wanted):
        if not units_wanted:
            continue
        start, end = scores.indptr[row], scores.indptr[row + 1]
        rounded = np.round(scores.data[start:end], SCORE_DECIMALS)
        positive = {
            int(unit): float(score) for unit, score in zip(scores.indices[start:end], rounded) if score > 0
        }
        for rank in ranks:
            found[rank].append(found_among_best(positive, units_wanted, scores.shape[1], rank))
    return {rank: float(np.mean(shares)) if shares else math.nan for rank, shares in found.items()}


def reidentification(
    units: RealUnits,
    generations: Sequence[str],
    sources: Sequence[Sequence[str]],
    controls: Sequence[Sequence[str]],
    members: Iterable[str],
    bootstrap: int,
    seed: int,
    negative_control: np.ndarray | None = None,
) -> dict[str, float]:
    """The re-identification attack on a corpus: per generation the doc ids it was written from
    (`sources`, empty where the method shows none) and of its matched control (`controls`, empty where
    it has none); `members`, the doc ids the method saw. `negative_control`: each unit's score in each
    generation of a corpus written without private data (`RareEvidenceIndex.unit_scores`), which the AUC
    is judged against, its generations' variance in the excess's bounds (`roc.control_auc_variance`).
    Columns: `reidentification_top{k}` and `_control` (shares of generations), `reidentification_units`,
    and as a text membership attack `text_mia_auc_reidentification` (+ `_low`, `_high`; with the
    negative control `_negative` and `text_mia_excess_reidentification` + `_low`, `_high`) with its
    balanced units `text_mia_reidentification_members` and `_non_members`."""
    if not (len(sources) == len(controls) == len(generations)):
        raise ValueError(
            f"{len(generations)} generations, {len(sources)} source lists and {len(controls)} control lists"
        )
    scores = units.index.scores(generations)
    record: dict[str, float] = {f"{ATTACK}_units": len(units.index.units)}
    for side, doc_ids in (("", sources), ("_control", controls)):
        shares = top_k_shares(scores, [units.rows(ids) for ids in doc_ids], RANKS)
        record.update({f"{ATTACK}_top{rank}{side}": share for rank, share in shares.items()})
    seen = [units.index.units[row] for row in units.rows(members)]
    chosen, others = balanced_sets(seen, units.held_out, seed)
    record.update({f"text_mia_{ATTACK}_members": len(chosen), f"text_mia_{ATTACK}_non_members": len(others)})
    ranked = [units.index.row[unit] for unit in chosen + others]
    label = [True] * len(chosen) + [False] * len(others)
    score = best_by_unit(scores)[ranked]
    auc, low, high = auc_resamples(label, [score], bootstrap, seed).bounds(0)
    record.update(
        {
            f"text_mia_auc_{ATTACK}": auc,
            f"text_mia_auc_{ATTACK}_low": low,
            f"text_mia_auc_{ATTACK}_high": high,
        }
    )
    if negative_control is not None:
        control = negative_control[ranked]
        excess, excess_low, excess_high = excess_over_resampled_control(
            label, score, control, bootstrap, seed
        )
        record.update(
            {
                f"text_mia_auc_{ATTACK}_negative": roc_summary(label, control.max(axis=1), resamples=0).auc,
                f"text_mia_excess_{ATTACK}": excess,
                f"text_mia_excess_{ATTACK}_low": excess_low,
                f"text_mia_excess_{ATTACK}_high": excess_high,
            }
        )
    return record
