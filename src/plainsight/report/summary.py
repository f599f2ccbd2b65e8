"""The one page a custodian signs: a method's release verdict in one sentence, the criteria that decided
it, what would settle an INCONCLUSIVE one, the real values its generations hold by entity type and
class, its utility against chance and the real-data ceiling, how much of it reviewers read, and the
known limits. `SUMMARY.md` of a release bundle (`plainsight.report.release`) and the top of the review
page (`plainsight.report.review_site`) render the same `ReleaseSummary`, which this module builds;
`plainsight.report.summary_page` says it in blocks and `summary_render` writes them as Markdown or HTML.

Nothing is recomputed: the criteria and the samples that would decide them are the gate's own reasons
(`plainsight.audit.gate`, `plainsight.audit.evidence_plan.deciding_sample`), split into their parts;
the values and their classes are the per-generation metrics' (`plainsight.evaluation.held_out`); the
utility is the utility table's row. What is missing is said, never filled in.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from plainsight.audit import NEGATIVE_CONTROL
from plainsight.audit.outcomes import PASS, join_reasons, split_reasons
from plainsight.codes.control_code import select_spans
from plainsight.entities import ENTITY_TYPES
from plainsight.evaluation.downstream import CHANCE, REAL, REAL_SAMPLE
from plainsight.evaluation.held_out import ANY_IDENTIFIER_SET, COMMON, SOURCE_SPECIFIC
from plainsight.matching import fold, normalise_value
from plainsight.methods.registry import base_method
from plainsight.report.audit_verdict import AuditVerdict, run_rows
from plainsight.report.leak_classes import listed
from plainsight.report.sign_off import BundleSignOff, SignOff
from plainsight.report.utility_table import COLUMNS, not_measured

NOT_FOR_RELEASE = "NOT FOR RELEASE"
RELEASABLE = "releasable"
ALL_TYPES = "All types"
NO_SPAN_TYPE = "no span"  # a value the spans do not hold (none should be: the metrics take them from spans)
UTILITY_MEASURES = ("macro_f1", "accuracy")  # the utility columns with a chance row and a real ceiling
_REASON = re.compile(
    r"(?P<name>\w+): (?P<outcome>PASS|FAIL|INCONCLUSIVE|BY CONSTRUCTION)(?: \((?P<detail>.*)\))?$"
)
_SEED = re.compile(r"seed (?P<seed>\d+): ")
# the sample `evidence_plan.deciding_sample` appends to an INCONCLUSIVE reason
_DECIDING = re.compile(r" \(((?:needs|no sample decides|cannot be decided) [^()]*)\)")


def not_for_release(verdict: AuditVerdict | None, sign_off: SignOff | None) -> bool:
    """Whether a bundle says NOT FOR RELEASE: its verdict is not PASS and nobody signed off its texts."""
    passed = verdict is not None and verdict.verdict == PASS
    return not passed and sign_off is None


# --- the criteria, from the gate's reasons ----------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    """One criterion of one seed's verdict: its outcome, its evidence against its maximum (without the
    deciding samples), and the samples that would decide its INCONCLUSIVE parts."""

    name: str
    outcome: str  # "" where the reason does not have the gate's form
    evidence: str
    seed: int | None  # None where the verdict is of one seed
    deciding: tuple[tuple[str, str], ...] = ()  # (evidence part, the sample that would decide it)


def _parts(detail: str) -> list[str]:
    """A reason's detail split at the ", " that joins its measures, not inside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(detail):
        depth += (char in "([") - (char in ")]")
        if depth == 0 and detail.startswith(", ", index):
            parts.append(detail[start:index])
            start = index + 2
    return [*parts, detail[start:]]


def _criterion(reason: str, seed: int | None) -> Criterion:
    match = _REASON.match(reason)
    if match is None:
        return Criterion(reason, "", "", seed)
    detail = match["detail"] or ""
    deciding = tuple(
        (_DECIDING.sub("", part), note) for part in _parts(detail) for note in _DECIDING.findall(part)
    )
    return Criterion(match["name"], match["outcome"], _DECIDING.sub("", detail), seed, deciding)


def criteria(verdict: AuditVerdict) -> list[Criterion]:
    """Each criterion of the verdict's reasons, per seed where the gate names seeds ("seed 1: ... |
    seed 2: ..."; `AuditVerdict.reasons` split that text where the gate joined its reasons)."""
    found = []
    for block in join_reasons(verdict.reasons).split(" | "):
        seed = _SEED.match(block)
        text = block[seed.end() :] if seed else block
        found += [_criterion(reason, int(seed["seed"]) if seed else None) for reason in split_reasons(text)]
    return found


# --- the real values the generations hold -----------------------------------------------------------


@dataclass(frozen=True)
class LeakCount:
    """One entity type's real values found whole in the generations, by class."""

    entity_type: str
    specific_generations: int
    common_generations: int
    specific_values: int
    common_values: int


def value_types(spans: pd.DataFrame) -> dict[str, str]:
    """Folded value -> entity type, of every direct or quasi span; a value whose spans differ takes the
    type most of them give it (ties: the first in alphabetical order)."""
    selected = select_spans(spans, ANY_IDENTIFIER_SET)
    counts = Counter(
        (fold(normalise_value(str(text))), str(entity_type))
        for text, entity_type in zip(selected["text"], selected["entity_type"])
    )
    types: dict[str, str] = {}
    for (key, entity_type), _ in sorted(counts.items(), key=lambda item: (-item[1], item[0][1])):
        types.setdefault(key, entity_type)
    return types


def leak_counts(metrics: pd.DataFrame, spans: pd.DataFrame) -> tuple[LeakCount, ...] | None:
    """Per entity type (the order of `ENTITY_TYPES`, then the others), then over all types: the
    generations (rows of `metrics`) holding a value of each class, and the distinct values of each class
    (a value classed both ways, by two generations with different sources, counts in both). None where
    the metrics do not class their values."""
    if not {"leaked_identifier_values", "leaked_value_classes"} <= set(metrics.columns):
        return None
    types = value_types(spans)
    generations: dict[tuple[str, str], set[int]] = {}
    values: dict[tuple[str, str], set[str]] = {}
    pairs = zip(metrics["leaked_identifier_values"], metrics["leaked_value_classes"])
    for number, (held, classes) in enumerate(pairs):
        for value, value_class in zip(listed(held), listed(classes)):
            if value_class not in (SOURCE_SPECIFIC, COMMON):
                raise ValueError(f"the per-generation metrics class a value {value_class!r}")
            key = fold(normalise_value(str(value)))
            for entity_type in (types.get(key, NO_SPAN_TYPE), ALL_TYPES):
                generations.setdefault((entity_type, value_class), set()).add(number)
                values.setdefault((entity_type, value_class), set()).add(key)
    order = {entity_type: n for n, entity_type in enumerate(ENTITY_TYPES)}
    found = sorted({t for t, _ in generations} - {ALL_TYPES}, key=lambda t: (order.get(t, len(order)), t))

    def count(entity_type: str) -> LeakCount:
        return LeakCount(
            entity_type,
            *(len(generations.get((entity_type, c), ())) for c in (SOURCE_SPECIFIC, COMMON)),
            *(len(values.get((entity_type, c), ())) for c in (SOURCE_SPECIFIC, COMMON)),
        )

    return tuple(count(entity_type) for entity_type in (*found, ALL_TYPES))


@dataclass(frozen=True)
class Shipped:
    """What a release bundle ships of the generations (`release.drop`), and what the shipped hold."""

    drop: str
    generations: int
    specific_generations: int
    common_generations: int


def shipped(metrics: pd.DataFrame, spans: pd.DataFrame, kept: pd.DataFrame, drop: str) -> Shipped | None:
    """The generations of `metrics` that `kept` (a bundle's kept rows) holds, by (seed, generation_id);
    None where the metrics do not class their values."""
    keys = ["seed", "generation_id"]
    chosen = metrics.merge(kept[keys].drop_duplicates(), on=keys, how="inner")
    counts = leak_counts(chosen, spans)
    if counts is None:
        return None
    return Shipped(drop, len(chosen), counts[-1].specific_generations, counts[-1].common_generations)


# --- utility and review -----------------------------------------------------------------------------


@dataclass(frozen=True)
class UtilityRow:
    """One utility measure of the method's corpus beside chance, the zero-learning corpus and the
    real-data rows (NaN: none)."""

    column: str  # of the utility table
    label: str
    value: float
    low: float
    high: float
    chance: float
    ceiling: float
    same_size: float  # real training data, as many texts as the corpus
    zero_learning: float  # the base model from fictional codes alone: what it knew without the private data


def utility_rows(
    table: pd.DataFrame | None, run: Mapping[str, str], method: str
) -> tuple[UtilityRow, ...] | None:
    """The downstream scores of `method` on the run from a utility table (a run's own table, or
    `results/tables/{dataset}/utility.csv`: means over seeds), beside its chance and real rows; None
    where the table has no row for it."""
    if table is None or table.empty:
        return None
    rows = {str(row["method"]): row for row in run_rows(table, run).to_dict("records")}
    if method not in rows:
        return None

    def score(key: str, column: str) -> float:
        value = rows.get(key, {}).get(column, math.nan)
        return math.nan if pd.isna(value) else float(value)

    labels = {column: label for column, label, _, _ in COLUMNS}
    return tuple(
        UtilityRow(
            column,
            labels[column],
            score(method, column),
            score(method, f"{column}_low"),
            score(method, f"{column}_high"),
            score(CHANCE, column),
            score(REAL, column),
            score(REAL_SAMPLE, column),
            score(NEGATIVE_CONTROL, column),
        )
        for column in UTILITY_MEASURES
        if column in table
    )


@dataclass(frozen=True)
class ReviewStatus:
    """How many of the method's generations reviewers gave a verdict on the review page, and which."""

    generations: int
    verdicts: tuple[tuple[str, int], ...]  # (verdict, generations), most frequent first

    @property
    def reviewed(self) -> int:
        return sum(count for _, count in self.verdicts)


def review_status(
    comments: pd.DataFrame | None, method: str, seeds: Iterable[int], generations: int
) -> ReviewStatus:
    """The comments (`results/review/.../comments.parquet`: one row per reviewed generation) on the
    method's corpora of `seeds`."""
    if comments is None or comments.empty:
        return ReviewStatus(generations, ())
    chosen = comments[(comments["method"] == method) & comments["seed"].isin(list(seeds))]
    counts = Counter(map(str, chosen["verdict"]))
    return ReviewStatus(generations, tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))))


# --- the summary ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseSummary:
    title: str
    method: str
    verdict: AuditVerdict | None  # None: the run is not audited
    sign_off: SignOff | None  # the sign-off of these texts
    generations: int
    seeds: tuple[int, ...]
    leaks: tuple[LeakCount, ...] | None  # None: the metrics do not class their values
    utility: tuple[UtilityRow, ...] | None  # None: the run's utility is not measured for the method
    review: ReviewStatus
    limits: tuple[str, ...]
    links: tuple[tuple[str, str], ...] = ()  # (label, relative address) of the details
    shipped: Shipped | None = None  # None: not a release bundle, or the metrics class no value
    other_sign_offs: tuple[SignOff, ...] = ()  # the method's sign-offs of other texts
    downstream_not_measured: str = ""  # why the run's downstream task has no scores; "" where it has

    @property
    def stamped(self) -> bool:
        return not_for_release(self.verdict, self.sign_off)

    @property
    def outcome(self) -> str:
        return self.verdict.verdict if self.verdict is not None else "no verdict"

    @property
    def release(self) -> str:
        """NOT FOR RELEASE, who signed it off although it did not pass, or releasable."""
        if self.stamped:
            return NOT_FOR_RELEASE
        if self.sign_off is not None and self.outcome != PASS:
            return f"signed off by {self.sign_off.by}"
        return RELEASABLE


@dataclass(frozen=True)
class SummaryFrames:
    """What a summary counts: `metrics`, the per-generation metrics of the method's seeds (one row per
    generation, with `seed`); `utility`, the run's utility table (`utility_table`: rows by base method);
    `comments`, its review page's comments (None or empty where there are none); `kept`, the rows a
    release bundle ships under `release.drop` `drop` (None: not a bundle)."""

    metrics: pd.DataFrame
    spans: pd.DataFrame
    utility: pd.DataFrame | None = None
    comments: pd.DataFrame | None = None
    kept: pd.DataFrame | None = None
    drop: str = ""


def build_summary(
    title: str,
    method: str,
    verdict: AuditVerdict | None,
    sign_offs: BundleSignOff,
    frames: SummaryFrames,
    run: Mapping[str, str],
    limits: Sequence[str],
    links: Sequence[tuple[str, str]] = (),
) -> ReleaseSummary:
    """The summary of one method's corpora on a run, from what `frames` holds; `sign_offs`: the one that
    accepted these texts, and the method's others (which accepted other texts: they do not lift the
    stamp)."""
    metrics, spans = frames.metrics, frames.spans
    seeds = tuple(sorted({int(seed) for seed in metrics["seed"]}))
    return ReleaseSummary(
        title,
        method,
        verdict,
        sign_offs.accepted,
        len(metrics),
        seeds,
        leak_counts(metrics, spans),
        utility_rows(frames.utility, run, base_method(method)),
        review_status(frames.comments, method, seeds, len(metrics)),
        tuple(limits),
        tuple(links),
        None if frames.kept is None else shipped(metrics, spans, frames.kept, frames.drop),
        sign_offs.other_texts,
        "" if frames.utility is None else not_measured(run_rows(frames.utility, run)),
    )
