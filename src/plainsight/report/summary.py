"""The one page a custodian signs: a method's release verdict in one sentence, the criteria that decided
it, what would settle an INCONCLUSIVE one, the real values its generations hold by entity type and
class, its utility against chance and the real-data ceiling, how much of it reviewers read, and the
known limits. `SUMMARY.md` of a release bundle (`plainsight.report.release`) and the top of the review
page (`plainsight.report.review_site`) render the same `ReleaseSummary`.

Nothing is recomputed: the criteria and the samples that would decide them are the gate's own reasons
(`plainsight.audit.gate`, `plainsight.audit.evidence_plan.deciding_sample`), split into their parts;
the values and their classes are the per-generation metrics' (`plainsight.evaluation.held_out`); the
utility is the utility table's row. What is missing is said, never filled in.
"""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from plainsight.audit.gate import EMPIRICAL, FORMAL
from plainsight.audit.outcomes import FAIL, INCONCLUSIVE, PASS
from plainsight.codes.control_code import select_spans
from plainsight.entities import ENTITY_TYPES
from plainsight.evaluation.downstream import CHANCE, REAL, REAL_SAMPLE
from plainsight.evaluation.held_out import ANY_IDENTIFIER_SET, COMMON, SOURCE_SPECIFIC
from plainsight.matching import fold, normalise_value
from plainsight.methods.registry import base_method
from plainsight.report.audit_verdict import AuditVerdict, run_rows
from plainsight.report.leak_classes import listed
from plainsight.report.utility_table import CHANCE_DISPLAY, COLUMNS, REAL_DISPLAY, REAL_SAMPLE_DISPLAY

NOT_FOR_RELEASE = "NOT FOR RELEASE"
RELEASABLE = "releasable"
ALL_TYPES = "All types"
NO_SPAN_TYPE = "no span"  # a value the spans do not hold (none should be: the metrics take them from spans)
UTILITY_MEASURES = ("macro_f1", "accuracy")  # the utility columns with a chance row and a real ceiling
_REASON = re.compile(r"(?P<name>\w+): (?P<outcome>PASS|FAIL|INCONCLUSIVE)(?: \((?P<detail>.*)\))?$")
_SEED = re.compile(r"seed (?P<seed>\d+): ")
# the sample `evidence_plan.deciding_sample` appends to an INCONCLUSIVE reason
_DECIDING = re.compile(r" \(((?:needs|no sample decides) [^()]*)\)")


@dataclass(frozen=True)
class SignOff:
    """`release.sign_off`: who accepted a bundle whose verdict is not PASS, and why."""

    by: str
    reason: str

    @classmethod
    def from_config(cls, sign_off: Mapping[str, Any] | None) -> SignOff | None:
        return None if not sign_off else cls(str(sign_off["by"]), str(sign_off["reason"]))


def not_for_release(verdict: AuditVerdict | None, sign_off: SignOff | None) -> bool:
    """Whether a bundle says NOT FOR RELEASE: its verdict is not PASS and nobody signed it off."""
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
    seed 2: ..."; `AuditVerdict.reasons` split that text at every "; ")."""
    found = []
    for block in "; ".join(verdict.reasons).split(" | "):
        seed = _SEED.match(block)
        text = block[seed.end() :] if seed else block
        found += [
            _criterion(reason.strip(), int(seed["seed"]) if seed else None)
            for reason in text.split("; ")
            if reason.strip()
        ]
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
    """One utility measure of the method's corpus beside chance and the real-data rows (NaN: none)."""

    column: str  # of the utility table
    label: str
    value: float
    low: float
    high: float
    chance: float
    ceiling: float
    same_size: float  # real training data, as many texts as the corpus


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
    sign_off: SignOff | None
    generations: int
    seeds: tuple[int, ...]
    leaks: tuple[LeakCount, ...] | None  # None: the metrics do not class their values
    utility: tuple[UtilityRow, ...] | None  # None: the run's utility is not measured for the method
    review: ReviewStatus
    limits: tuple[str, ...]
    links: tuple[tuple[str, str], ...] = ()  # (label, relative address) of the details
    shipped: Shipped | None = None  # None: not a release bundle, or the metrics class no value

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


def build_summary(
    title: str,
    method: str,
    verdict: AuditVerdict | None,
    sign_off: SignOff | None,
    metrics: pd.DataFrame,
    spans: pd.DataFrame,
    utility: pd.DataFrame | None,
    comments: pd.DataFrame | None,
    run: Mapping[str, str],
    limits: Sequence[str],
    links: Sequence[tuple[str, str]] = (),
    kept: pd.DataFrame | None = None,
    drop: str = "",
) -> ReleaseSummary:
    """The summary of one method's corpora on a run: `metrics`, the per-generation metrics of its seeds
    (one row per generation, with `seed`); `utility`, the run's utility table (`utility_table`: rows by
    base method); `comments`, its review page's comments (None or empty where there are none); `kept`,
    the rows a release bundle ships under `release.drop` `drop` (None: not a bundle)."""
    seeds = tuple(sorted({int(seed) for seed in metrics["seed"]}))
    return ReleaseSummary(
        title,
        method,
        verdict,
        sign_off,
        len(metrics),
        seeds,
        leak_counts(metrics, spans),
        utility_rows(utility, run, base_method(method)),
        review_status(comments, method, seeds, len(metrics)),
        tuple(limits),
        tuple(links),
        None if kept is None else shipped(metrics, spans, kept, drop),
    )


# --- what the page says, once for both renderers ----------------------------------------------------


@dataclass(frozen=True)
class Run:
    """A stretch of text: plain, `strong`, `code`, or a link to `href`."""

    text: str
    style: str = ""
    href: str = ""


@dataclass(frozen=True)
class Heading:
    level: int  # 1: the title, 2: a section
    text: str


@dataclass(frozen=True)
class Paragraph:
    runs: tuple[Run, ...]
    role: str = ""  # the HTML class


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    role: str = ""


@dataclass(frozen=True)
class Bullets:
    items: tuple[tuple[Run, ...], ...]
    role: str = ""


Block = Heading | Paragraph | Table | Bullets


def _plain(*texts: str) -> tuple[Run, ...]:
    return tuple(Run(text) for text in texts)


def _count(number: float, unit: str) -> str:
    return f"{number:,} {unit}{'' if number == 1 else 's'}"


def _score(value: float, low: float = math.nan, high: float = math.nan) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:.3f}" + ("" if math.isnan(low) or math.isnan(high) else f" [{low:.3f}, {high:.3f}]")


def _title(summary: ReleaseSummary) -> Heading:
    if summary.stamped:
        return Heading(1, f"{NOT_FOR_RELEASE}: release summary: {summary.title}")
    return Heading(1, f"Release summary: {summary.title}")


def _verdict_words(summary: ReleaseSummary) -> str:
    if summary.outcome in (PASS, FAIL, INCONCLUSIVE):
        return f"the verdict is {summary.outcome}"
    return "there is no verdict"


def _sentence(text: str) -> str:
    """`text` opening a sentence: its first letter upper-case, the rest as it is."""
    return text[:1].upper() + text[1:]


def _basis(kind: str) -> str:
    return f"a {kind}" if kind == FORMAL else kind


def stamp_blocks(summary: ReleaseSummary) -> list[Block]:
    """Why it may not leave, or who accepted it although its verdict is not PASS."""
    if summary.stamped:
        return [
            Paragraph(
                (
                    Run(f"{NOT_FOR_RELEASE}.", "strong"),
                    Run(f" {_sentence(_verdict_words(summary))}, not PASS, and nobody has signed it off ("),
                    Run("release.sign_off", "code"),
                    Run(": who accepts it, and why)."),
                ),
                "stamp",
            )
        ]
    if summary.release != RELEASABLE and summary.sign_off is not None:
        return [
            Paragraph(
                (
                    Run("Signed off", "strong"),
                    Run(
                        f" by {summary.sign_off.by}, although {_verdict_words(summary)}: "
                        f"{summary.sign_off.reason}"
                    ),
                ),
                "sign-off",
            )
        ]
    return []


def _names(found: Sequence[Criterion], outcome: str) -> str:
    return ", ".join(dict.fromkeys(c.name for c in found if c.outcome == outcome))


def verdict_sentence(summary: ReleaseSummary) -> tuple[Run, ...]:
    """The verdict, its threat model and what a PASS rests on, in one sentence."""
    verdict = summary.verdict
    if verdict is None:
        return (
            Run("No verdict:", "strong"),
            Run(" the privacy audit does not cover this run ("),
            Run("audit.datasets", "code"),
            Run(", "),
            Run("audit.settings", "code"),
            Run(", "),
            Run("audit.identifier_sets", "code"),
            Run(")."),
        )
    found = criteria(verdict)
    if not found:
        return (
            Run(f"{_sentence(verdict.verdict)}:", "strong"),
            Run(f" the audit table{f' ({verdict.source})' if verdict.source else ''} judges no criterion."),
        )
    threat = (
        f"the threat model that {verdict.threat_model}" if verdict.threat_model else "no stated threat model"
    )
    basis = _basis(FORMAL if any(c.name == "epsilon" for c in found) else EMPIRICAL)
    if verdict.verdict == PASS:
        why = f"every criterion passes on every audited seed; it rests on {_basis(verdict.kind) or basis}"
    elif verdict.verdict == FAIL:
        why = f"it fails {_names(found, FAIL)}; a PASS here would rest on {basis}"
    elif verdict.verdict == INCONCLUSIVE:
        why = (
            f"no criterion fails, but the evidence leaves {_names(found, INCONCLUSIVE)} undecided; a PASS "
            f"here would rest on {basis}"
        )
    else:
        why = "the audit table's row gives no verdict"
    return (Run(verdict.verdict, "strong"), Run(f" under {threat}: {why}."))


def evidence_blocks(summary: ReleaseSummary) -> list[Block]:
    """The criteria with their outcomes and bounds, and what would settle an INCONCLUSIVE verdict."""
    verdict = summary.verdict
    found = criteria(verdict) if verdict is not None else []
    if not found:
        return [Heading(2, "Evidence that decided it"), Paragraph(_plain("No criterion was judged."))]
    seeded = any(c.seed is not None for c in found)
    header = (*(("Seed",) if seeded else ()), "Criterion", "Outcome", "Evidence against its maximum")
    rows = tuple(
        (
            *((str(c.seed) if c.seed is not None else "",) if seeded else ()),
            c.name,
            c.outcome or "—",
            c.evidence,
        )
        for c in found
    )
    blocks: list[Block] = [
        Heading(2, "Evidence that decided it"),
        *([Paragraph((Run("From "), Run(verdict.source, "code"), Run(".")))] if verdict.source else []),
        Table(header, rows, "criteria"),
    ]
    if verdict.seed_verdicts and "," in verdict.seed_verdicts:
        blocks.append(Paragraph(_plain(f"Per seed: {verdict.seed_verdicts}.")))
    if verdict.verdict == INCONCLUSIVE:
        settle = [
            _plain(f"{c.name}{f', seed {c.seed}' if c.seed is not None else ''} ({part}): {note}")
            for c in found
            if c.outcome == INCONCLUSIVE
            for part, note in c.deciding or ((c.evidence, "no larger sample decides it"),)
        ]
        blocks += [Heading(2, "What would settle it"), Bullets(tuple(settle), "deciding")]
    return blocks


def leak_blocks(summary: ReleaseSummary) -> list[Block]:
    heading = Heading(2, "Real values in the generations")
    if summary.leaks is None:
        return [heading, Paragraph(_plain("The per-generation metrics do not class the values they found."))]
    seeds = f"seed{'s' if len(summary.seeds) != 1 else ''} {', '.join(map(str, summary.seeds))}"
    scope = (
        f"Real direct or quasi identifiers of each generation's source found whole in its text, over "
        f"{_count(summary.generations, 'generation')} ({seeds}), before any is left out. "
        "Source-specific: no real document outside the generation's source holds the value; common: one "
        "does. A generation counts once per column; a value once per class."
    )
    if summary.leaks[-1].specific_generations + summary.leaks[-1].common_generations == 0:
        return [
            heading,
            Paragraph(_plain(scope)),
            Paragraph(_plain("No generation holds one."), "leaks"),
            *shipped_blocks(summary),
        ]
    header = (
        "Entity type",
        "Generations holding a source-specific value",
        "Generations holding a common value",
        "Distinct source-specific values",
        "Distinct common values",
    )
    rows = tuple(
        (
            count.entity_type,
            *map(
                str,
                (
                    count.specific_generations,
                    count.common_generations,
                    count.specific_values,
                    count.common_values,
                ),
            ),
        )
        for count in summary.leaks
    )
    return [heading, Paragraph(_plain(scope)), Table(header, rows, "leaks"), *shipped_blocks(summary)]


def shipped_blocks(summary: ReleaseSummary) -> list[Block]:
    """What the bundle ships of the generations above, and what they hold."""
    ship = summary.shipped
    if ship is None:
        return []
    return [
        Paragraph(
            (
                Run(f"The bundle ships {ship.generations:,} of these {summary.generations:,} ("),
                Run(f"release.drop: {ship.drop}", "code"),
                Run(
                    f"): {ship.specific_generations:,} of them hold a source-specific value, "
                    f"{ship.common_generations:,} a common one."
                ),
            ),
            "shipped",
        )
    ]


def utility_blocks(summary: ReleaseSummary) -> list[Block]:
    heading = Heading(2, "Utility")
    if summary.utility is None:
        return [
            heading,
            Paragraph(
                (
                    Run("Not measured: the run's utility table has no row for this method ("),
                    Run("utility.runs", "code"),
                    Run(")."),
                ),
                "utility",
            ),
        ]
    header = ("Measure (score, 0 to 1)", "This corpus", CHANCE_DISPLAY, REAL_DISPLAY, REAL_SAMPLE_DISPLAY)
    rows = tuple(
        (
            row.label,
            _score(row.value, row.low, row.high),
            _score(row.chance),
            _score(row.ceiling),
            _score(row.same_size),
        )
        for row in summary.utility
    )
    blocks: list[Block] = [
        heading,
        Paragraph(_plain("Train on the synthetic corpus, test on the real test split (means over seeds).")),
        Table(header, rows, "utility"),
    ]
    closed = [
        _against_chance(row)
        for row in summary.utility
        if row.ceiling > row.chance and not math.isnan(row.value)  # NaN: not measured
    ]
    if closed:
        blocks.append(Paragraph(_plain("; ".join(closed) + ".")))
    return blocks


def _against_chance(row: UtilityRow) -> str:
    """Where a score lies between chance and the real-data ceiling (the ceiling above chance)."""
    if row.value <= row.chance:
        return f"{row.label}: at or below chance, the corpus taught the classifier nothing about the labels"
    share = 100 * (row.value - row.chance) / (row.ceiling - row.chance)
    return f"{row.label}: {share:.0f}% of the way from chance to the real-data ceiling"


def review_blocks(summary: ReleaseSummary) -> list[Block]:
    review = summary.review
    if not review.reviewed:
        text = f"None of the {_count(review.generations, 'generation')} reviewed on the review page yet."
    else:
        share = 100 * review.reviewed / review.generations if review.generations else math.nan
        verdicts = ", ".join(f"{verdict} {count}" for verdict, count in review.verdicts)
        text = (
            f"{review.reviewed:,} of {_count(review.generations, 'generation')} ({share:.1f}%) reviewed on "
            f"the review page; their verdicts: {verdicts}."
        )
    return [Heading(2, "Review"), Paragraph(_plain(text), "review")]


def summary_blocks(summary: ReleaseSummary) -> list[Block]:
    """The page, in order: title, stamp, verdict, evidence, values, utility, review, limits, details."""
    blocks: list[Block] = [
        _title(summary),
        *stamp_blocks(summary),
        Heading(2, "Verdict"),
        Paragraph(verdict_sentence(summary), "verdict"),
        *evidence_blocks(summary),
        *leak_blocks(summary),
        *utility_blocks(summary),
        *review_blocks(summary),
        Heading(2, "Known limits"),
        Bullets(tuple(_plain(limit) for limit in summary.limits), "limits"),
    ]
    if summary.links:
        runs = [Run("Details: ")]
        for number, (label, href) in enumerate(summary.links):
            runs += [*([Run("; ")] if number else []), Run(label, href=href)]
        blocks.append(Paragraph((*runs, Run(".")), "links"))
    return blocks


# --- Markdown and HTML ------------------------------------------------------------------------------


def _markdown_runs(runs: Iterable[Run]) -> str:
    def one(run: Run) -> str:
        if run.href:
            return f"[{run.text}]({run.href})"
        return {"strong": f"**{run.text}**", "code": f"`{run.text}`"}.get(run.style, run.text)

    return "".join(map(one, runs))


def _markdown_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _markdown_block(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return [f"{'#' * block.level} {block.text}"]
    if isinstance(block, Paragraph):
        return [_markdown_runs(block.runs)]
    if isinstance(block, Bullets):
        return [f"- {_markdown_runs(item)}" for item in block.items]
    lines = ["| " + " | ".join(map(_markdown_cell, row)) + " |" for row in (block.header, *block.rows)]
    return [lines[0], "|" + "---|" * len(block.header), *lines[1:]]


def summary_markdown(summary: ReleaseSummary) -> str:
    """SUMMARY.md of a release bundle."""
    return "\n\n".join("\n".join(_markdown_block(block)) for block in summary_blocks(summary)) + "\n"


def _html_runs(runs: Iterable[Run]) -> str:
    def one(run: Run) -> str:
        text = html.escape(run.text)
        if run.href:
            return f'<a href="{html.escape(run.href)}">{text}</a>'
        return f"<{run.style}>{text}</{run.style}>" if run.style in ("strong", "code") else text

    return "".join(map(one, runs))


def _html_block(block: Block, top_level: int) -> str:
    role = f' class="{html.escape(block.role)}"' if getattr(block, "role", "") else ""
    if isinstance(block, Heading):
        level = min(top_level + block.level - 1, 6)
        return f"<h{level}>{html.escape(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        return f"<p{role}>{_html_runs(block.runs)}</p>"
    if isinstance(block, Bullets):
        return f"<ul{role}>" + "".join(f"<li>{_html_runs(item)}</li>" for item in block.items) + "</ul>"
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in block.header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in block.rows
    )
    return f"<table{role}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def summary_html(summary: ReleaseSummary, top_level: int = 1) -> str:
    """The same summary as an HTML fragment, every text escaped; the title is an `<h{top_level}>`."""
    return "\n".join(_html_block(block, top_level) for block in summary_blocks(summary))


def overview(summary: ReleaseSummary) -> dict[str, Any]:
    """The summary in one row of a table of methods: verdict, release, held values, utility, review."""
    total = summary.leaks[-1] if summary.leaks else None
    f1 = next((row for row in summary.utility or () if row.column == "macro_f1"), None)
    return {
        "method": summary.method,
        "verdict": summary.outcome,
        "kind": summary.verdict.kind if summary.verdict is not None else "",
        "release": summary.release,
        "stamped": summary.stamped,
        "specific_generations": "—" if total is None else f"{total.specific_generations:,}",
        "common_generations": "—" if total is None else f"{total.common_generations:,}",
        "generations": f"{summary.generations:,}",
        "utility": "not measured"
        if f1 is None
        else f"{_score(f1.value)} (chance {_score(f1.chance)}, ceiling {_score(f1.ceiling)})",
        "reviewed": f"{summary.review.reviewed:,} of {summary.review.generations:,}",
    }
