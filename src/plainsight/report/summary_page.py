"""What the release summary says, once for both renderers: its blocks (headings, paragraphs, tables,
bullets) in order, from a `ReleaseSummary` (`plainsight.report.summary`), and its one-row overview for
the review page's table of methods. `plainsight.report.summary_render` writes them as Markdown or HTML."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plainsight.audit.gate import EMPIRICAL, FORMAL, POLICY, VERDICTS
from plainsight.audit.outcomes import FAIL, INCONCLUSIVE, PASS
from plainsight.report.sign_off import SIGN_OFF_KEY, other_texts_note
from plainsight.report.summary import (
    NOT_FOR_RELEASE,
    RELEASABLE,
    Criterion,
    ReleaseSummary,
    UtilityRow,
    criteria,
)
from plainsight.report.utility_table import (
    CHANCE_DISPLAY,
    REAL_DISPLAY,
    REAL_SAMPLE_DISPLAY,
    ZERO_LEARNING_DISPLAY,
)


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


def _counted(number: float, unit: str) -> str:
    return f"{number:,} {unit}{'' if number == 1 else 's'}"


def score_text(value: float, low: float = math.nan, high: float = math.nan) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:.3f}" + ("" if math.isnan(low) or math.isnan(high) else f" [{low:.3f}, {high:.3f}]")


def zero_learning_text(value: float) -> str:
    """The zero-learning corpus's score, or why there is none (a run whose utility measures lack it)."""
    return "not measured" if math.isnan(value) else score_text(value)


def _title(summary: ReleaseSummary) -> Heading:
    if summary.stamped:
        return Heading(1, f"{NOT_FOR_RELEASE}: release summary: {summary.title}")
    return Heading(1, f"Release summary: {summary.title}")


def _verdict_words(summary: ReleaseSummary) -> str:
    if summary.outcome in VERDICTS:
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
        unsigned = (
            (Run(f", not PASS, and {other_texts_note(summary.other_sign_offs)}."),)
            if summary.other_sign_offs
            else (
                Run(", not PASS, and nobody has signed it off ("),
                Run(SIGN_OFF_KEY, "code"),
                Run(": who accepts it, and why)."),
            )
        )
        return [
            Paragraph(
                (
                    Run(f"{NOT_FOR_RELEASE}.", "strong"),
                    Run(f" {_sentence(_verdict_words(summary))}"),
                    *unsigned,
                ),
                "stamp",
            )
        ]
    sign_off = summary.sign_off
    if summary.release != RELEASABLE and sign_off is not None:
        return [
            Paragraph(
                (
                    Run("Signed off", "strong"),
                    Run(
                        f" by {sign_off.by} on {sign_off.date} for the texts of data SHA-256 "
                        f"{sign_off.data_sha256}, although {_verdict_words(summary)}: {sign_off.reason}"
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
    elif verdict.verdict == POLICY:
        why = (
            "the gate's policy requires a formal guarantee that covers the release, "
            f"and no sample can stand in for one: {verdict.kind}"
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
        f"{_counted(summary.generations, 'generation')} ({seeds}), before any is left out. "
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
    if summary.downstream_not_measured:
        return [
            heading,
            Paragraph(_plain(f"Downstream task not measured: {summary.downstream_not_measured}."), "utility"),
        ]
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
    header = (
        "Measure (score, 0 to 1)",
        "This corpus",
        CHANCE_DISPLAY,
        ZERO_LEARNING_DISPLAY,
        REAL_DISPLAY,
        REAL_SAMPLE_DISPLAY,
    )
    rows = tuple(
        (
            row.label,
            score_text(row.value, row.low, row.high),
            score_text(row.chance),
            zero_learning_text(row.zero_learning),
            score_text(row.ceiling),
            score_text(row.same_size),
        )
        for row in summary.utility
    )
    blocks: list[Block] = [
        heading,
        Paragraph(_plain("Train on the synthetic corpus, test on the real test split (means over seeds).")),
        Table(header, rows, "utility"),
    ]
    closed = [
        against_references(row)
        for row in summary.utility
        if row.ceiling > row.chance and not math.isnan(row.value)  # NaN: not measured
    ]
    if closed:
        blocks.append(Paragraph(_plain("; ".join(closed) + ".")))
    return blocks


def against_references(row: UtilityRow) -> str:
    """Where a score lies between chance and the real-data ceiling (the ceiling above chance), and how far
    from the zero-learning corpus's: what the private data added to what the base model knew anyway."""
    if row.value <= row.chance:
        place = "at or below chance, the corpus taught the classifier nothing about the labels"
    else:
        share = 100 * (row.value - row.chance) / (row.ceiling - row.chance)
        place = f"{share:.0f}% of the way from chance to the real-data ceiling"
    return f"{row.label}: {place}, {against_zero_learning(row)}"


def against_zero_learning(row: UtilityRow) -> str:
    if math.isnan(row.zero_learning):
        return "the zero-learning corpus not measured"
    difference = row.value - row.zero_learning
    side = "above" if difference >= 0 else "below"
    return f"{abs(difference):.3f} {side} the zero-learning corpus ({score_text(row.zero_learning)})"


def review_blocks(summary: ReleaseSummary) -> list[Block]:
    review = summary.review
    if not review.reviewed:
        text = f"None of the {_counted(review.generations, 'generation')} reviewed on the review page yet."
    else:
        share = 100 * review.reviewed / review.generations if review.generations else math.nan
        verdicts = ", ".join(f"{verdict} {count}" for verdict, count in review.verdicts)
        text = (
            f"{review.reviewed:,} of {_counted(review.generations, 'generation')} ({share:.1f}%) reviewed "
            f"on the review page; their verdicts: {verdicts}."
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
        "utility": f"not measured: {summary.downstream_not_measured}"
        if summary.downstream_not_measured
        else "not measured"
        if f1 is None
        else f"{score_text(f1.value)} (chance {score_text(f1.chance)}, zero learning "
        f"{zero_learning_text(f1.zero_learning)}, ceiling {score_text(f1.ceiling)})",
        "reviewed": f"{summary.review.reviewed:,} of {summary.review.generations:,}",
    }
