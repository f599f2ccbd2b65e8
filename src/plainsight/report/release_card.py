"""`README.md` of a release bundle: its dataset card in the Hugging Face convention (YAML front matter:
license, language, size category, task, name, tags and the data file), so that
`datasets.load_dataset("json", data_dir=...)` or `load_dataset(folder)` reads the texts; then the privacy
audit's verdict of the method on its run and the evidence, what was left out and why (how many of
them held a source-specific value or only common ones), and the known limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import yaml

from plainsight.audit.protection import person_claim, person_statement, units_line
from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.methods import registry
from plainsight.report.bundle_files import UTILITY_FILE
from plainsight.report.release_filter import HOLDS_SOURCE_SPECIFIC, drop_measures, drop_rule
from plainsight.report.release_run import KNOWN_LIMITS, ReleaseRun, bounds_release
from plainsight.report.sign_off import SIGN_OFF_KEY, other_texts_note
from plainsight.report.summary import NOT_FOR_RELEASE
from plainsight.report.summary_page import against_references, score_text, zero_learning_text
from plainsight.report.table_format import dp_notes
from plainsight.report.utility_table import (
    CHANCE_DISPLAY,
    REAL_DISPLAY,
    REAL_SAMPLE_DISPLAY,
    ZERO_LEARNING_DISPLAY,
)

SUMMARY_LABELS = {
    "pipp": "PIPP (% of generations)",
    "elp": "ELP (% of private values)",
    "partial_leak": "Partial leak (% of generations)",
    "near_leak": "Near leak (% of generations)",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "documents": "Documents (% of generations)",
}


CARD_TAGS = ("synthetic", "privacy", "anonymization")


_SIZE_UNITS = ("", "K", "M", "B", "T")


def summary_row(summaries: pd.DataFrame) -> dict[str, float]:
    """The method's leak and ROUGE rates: the mean over seeds of each run's averaged summary."""
    averaged = summaries[summaries["segment"] == AVERAGED_SEGMENT]
    return {label: float(averaged[key].mean()) for key, label in SUMMARY_LABELS.items() if key in averaged}


def size_category(count: int) -> str:
    """The Hugging Face size category of `count` rows: n<1K, 1K<n<10K, ... n>1T."""

    def label(power: int) -> str:
        return f"{10 ** (power % 3)}{_SIZE_UNITS[power // 3]}"

    power = len(str(max(count, 0))) - 1  # floor(log10(count))
    if power < 3:
        return "n<1K"
    return "n>1T" if power >= 12 else f"{label(power)}<n<{label(power + 1)}"


def front_matter(run: ReleaseRun, kept: int, data_file: str) -> str:
    """The card's YAML header in the Hugging Face dataset-card convention."""
    header = {
        "license": run.settings.license,
        "language": list(run.settings.language),
        "size_categories": [size_category(kept)],
        "task_categories": ["text-generation"],
        "pretty_name": f"Synthetic corpus: {run.title}",
        "tags": [*CARD_TAGS, *(["not-for-release"] if run.stamped else [])],
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": data_file}]}],
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"


def filter_drop(filtered: pd.DataFrame) -> str:
    """The drop rule the filter applied to every seed of a bundle (`release_filter`)."""
    drops = sorted(set(filtered["drop"]))
    if len(drops) != 1:
        raise ValueError(f"the seeds of one bundle were filtered by different rules {drops}: rebuild them")
    return drops[0]


def dataset_card(
    run: ReleaseRun,
    corpora: pd.DataFrame,
    filtered: pd.DataFrame,
    summaries: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]],
    data_file: str,
) -> str:
    """README.md of one bundle: front matter, verdict, method, evidence, what was released, limits;
    `filtered` is the filter's record of every generation of `corpora` (`release_filter`)."""
    method = registry.method(run.method)
    drop = filter_drop(filtered)
    left_out = filtered["left_out"].to_numpy(bool)
    lines = [
        f"# {NOT_FOR_RELEASE}: synthetic corpus: {run.title}"
        if run.stamped
        else f"# Synthetic corpus: {run.title}",
        "",
        *_stamp_section(run),
        *_verdict_section(run),
        "## Method and settings",
        "",
        f"- Method `{run.method}` ({method.family}; shows real codes: {method.shows_codes}; "
        f"blocks real values while decoding: {method.blocks_context_values}; "
        f"training: {method.training or 'none'}).",
        f"- Model: `{run.model}`, decoded on {', '.join(sorted(set(map(str, corpora.get('device', [])))))}"
        f" in {', '.join(sorted(set(map(str, corpora.get('dtype', [])))))}.",
        f"- Seeds: {', '.join(map(str, sorted(set(corpora['seed']))))}; {len(corpora)} generations written.",
        "- Generation: " + ", ".join(f"{k} {v}" for k, v in run.generation.items()) + ".",
        f"- Data: `{data_file}`, one JSON line per kept generation "
        "(`text`, `fictional_code`, `method`, `seed`).",
        "",
        *_privacy_section(run, summaries, dp_records, drop),
        *_release_section(drop, filtered, left_out),
    ]
    lines += utility_section(run, summaries)
    for table in run.evidence:
        lines += [f"## {table.title}", "", frame_markdown(table.frame), ""]
    lines += ["## Known limits", "", *(f"- {limit}" for limit in KNOWN_LIMITS), ""]
    return front_matter(run, int((~left_out).sum()), data_file) + "\n" + "\n".join(lines)


def frame_markdown(frame: pd.DataFrame) -> str:
    """A small table as Markdown; numbers to four significant digits."""

    def cell(value: Any) -> str:
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        return text.replace("|", "\\|")

    rows = [list(map(str, frame.columns)), *([cell(v) for v in row] for row in frame.itertuples(index=False))]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(frame.columns), *lines[1:]])


def _stamp_section(run: ReleaseRun) -> list[str]:
    """Why the bundle may not leave, or who accepted it although its verdict is not PASS."""
    verdict = run.verdict.verdict if run.verdict is not None else "no verdict"
    if run.stamped:
        unsigned = (
            other_texts_note(run.signed.other_texts)
            if run.signed.other_texts
            else f"nobody has signed this bundle off (`{SIGN_OFF_KEY}`: who accepts it, and why)"
        )
        return [
            f"**{NOT_FOR_RELEASE}.** The privacy audit's verdict on the texts it ships is {verdict}, not "
            f"PASS, and {unsigned}.",
            "",
        ]
    sign_off = run.sign_off
    if sign_off is not None and verdict != "PASS":
        return [
            f"**Signed off** by {sign_off.by} on {sign_off.date} for the texts of data SHA-256 "
            f"{sign_off.data_sha256}, although the verdict is {verdict}: {sign_off.reason}",
            "",
        ]
    return []


def _audited(audit: Mapping[str, Any]) -> str:
    """What the bundle's audit judged: its kept generations per seed."""
    generations = audit.get("generations") or {}
    counts = ", ".join(f"{count} of seed {seed}" for seed, count in generations.items())
    return f"the {sum(generations.values())} generations this bundle ships ({counts})" if counts else ""


def _verdict_section(run: ReleaseRun) -> list[str]:
    if run.verdict is None:
        return [
            "## Release verdict",
            "",
            f"No audit of the texts this bundle ships was given for `{run.method}` on {run.dataset}, "
            f"{run.setting} setting, {run.idset} identifiers (rule `release_audit` writes it): there is no "
            "verdict; read the evidence below before release.",
            "",
        ]
    verdict, before = run.verdict, run.before_filter
    threat = f" The threat model: {verdict.threat_model}." if verdict.threat_model else ""
    audited = _audited(run.audit)
    fit = run.audit.get("fit_as_text")
    return [
        "## Release verdict",
        "",
        f"**{verdict.verdict}**{f' ({verdict.kind})' if verdict.kind else ''} (the privacy audit"
        f"{f' of {audited}' if audited else ''}, {verdict.source}).{threat}",
        *(["", f"Per seed: {verdict.seed_verdicts}."] if verdict.seed_verdicts else []),
        "",
        *(f"- {reason}" for reason in verdict.reasons),
        "",
        *([f"Fit as text: {fit} ({run.audit.get('fit_reasons')}).", ""] if fit else []),
        *(
            [
                f"Before the filter, the run's audit gives {before.verdict} ({before.source}): the corpus "
                "as written, every generation included.",
                "",
            ]
            if before is not None
            else []
        ),
    ]


def utility_section(run: ReleaseRun, summaries: pd.DataFrame) -> list[str]:
    """The corpus's downstream macro-F1 beside chance, the zero-learning corpus and the real-data rows,
    and its documents share; the run's full utility table is `UTILITY_FILE`, beside the card."""
    documents = summary_row(summaries).get(SUMMARY_LABELS["documents"])
    lines = [
        "## Utility",
        "",
        *(
            [f"Documents: {documents:.1f}% of the generations read as documents (mean over seeds).", ""]
            if documents is not None and not np.isnan(documents)
            else []
        ),
    ]
    f1 = next((row for row in run.utility or () if row.column == "macro_f1"), None)
    if f1 is None:
        return [*lines, "Not measured: the run's utility measures have no row for this method.", ""]
    scores = pd.DataFrame(
        {
            "Corpus": [
                "This corpus",
                CHANCE_DISPLAY,
                ZERO_LEARNING_DISPLAY,
                REAL_DISPLAY,
                REAL_SAMPLE_DISPLAY,
            ],
            f1.label: [
                score_text(f1.value, f1.low, f1.high),
                score_text(f1.chance),
                zero_learning_text(f1.zero_learning),
                score_text(f1.ceiling),
                score_text(f1.same_size),
            ],
        }
    )
    closed = [against_references(f1) + "."] if f1.ceiling > f1.chance and not np.isnan(f1.value) else []
    return [
        *lines,
        "Train on the synthetic corpus, test on the real test split (means over seeds, 95% interval).",
        "",
        frame_markdown(scores),
        "",
        *closed,
        *([""] if closed else []),
        f"Every utility measure of the run's corpora: `{UTILITY_FILE}`, beside this card.",
        "",
    ]


def selection_notes(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The guarantee of a training-free private generator, from its seeds' guarantee records: what it
    covers and, as plainly, what it does not."""
    if not records:
        return []
    first = records[0]
    epsilons = sorted({round(float(r["epsilon"]), 2) for r in records})
    deltas = sorted({float(r["delta"]) for r in records})
    return [
        f"{first['method']}: epsilon {', '.join(f'{e:.2f}' for e in epsilons)} at delta "
        f"{', '.join(f'{d:.2g}' for d in deltas)} per {first['privacy_unit']} "
        f"({first['mechanism']}).",
        f"It covers {first['covers']}.",
        f"It does not cover {first['not_covered']}.",
    ]


def person_notes(run: ReleaseRun, dp_records: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the method's guarantee means for a person with several documents, and the corpus's units."""
    person = person_claim(run.method, dp_records, run.units)
    return [person_statement(run.method, person), *([units_line(run.units)] if run.units else [])]


def accounting_notes(accounting: Mapping[str, Any] | None) -> list[str]:
    """Each mechanism on the workflow's paths from the private corpus to this bundle, and their
    composition over every seed it ships (`plainsight.audit.provenance`)."""
    if not accounting:
        return []
    lines = ["", "Mechanisms on every path from the private corpus to this bundle:", ""]
    for m in accounting["mechanisms"]:
        budget = (
            "nothing spent" if not m["epsilon"] else f"epsilon {m['epsilon']:.3g} at delta {m['delta']:.3g}"
        )
        unit = f", privacy unit: {m['privacy_unit']}" if m["privacy_unit"] else ""
        lines.append(f"- {m['name']}: {m['description']}; {budget}{unit} (`{m['record']}`)")
    total = accounting["composed"]
    if total is not None:
        lines += [
            "",
            f"Composed over all of them ({total['accountant']} accountant): epsilon {total['epsilon']:.3g} "
            f"at delta {total['delta']:.3g}, against {total['basic_composition_epsilon']:.3g} by adding "
            "them. The values of its fictional codes, where it has them, come from pools that never read the "
            "private corpus: their chance collisions with real values are measured against the held-out "
            "control like any other leak.",
        ]
    return lines


def _privacy_section(
    run: ReleaseRun, summaries: pd.DataFrame, dp_records: Sequence[Mapping[str, Any]], drop: str
) -> list[str]:
    row = pd.DataFrame([summary_row(summaries)])
    selection = [record for record in dp_records if "mechanism" in record]
    trained = [record for record in dp_records if "mechanism" not in record]
    guarantee = [
        *dp_notes(trained),
        *selection_notes(selection),
        *person_notes(run, dp_records),
        *accounting_notes(run.privacy_accounting),
    ]
    if drop != "none" and any(map(bounds_release, dp_records)):
        guarantee.append(
            f"The formal guarantee does not cover this bundle: its filter (`release.drop: {drop}`) read "
            "the private corpus after the mechanism, without noise. It covers the corpus before filtering; "
            "set `release.drop_guaranteed: none` to release that corpus under the guarantee."
        )
    return [
        "## Privacy evidence",
        "",
        "The method's Table 1 row on this corpus (mean over seeds, before dropping):",
        "",
        frame_markdown(row),
        "",
        *guarantee,
        "",
    ]


def _release_section(drop: str, flags: pd.DataFrame, left_out: np.ndarray) -> list[str]:
    """How many were kept and left out, and what the left-out and the released generations hold."""
    total, out = len(flags), int(left_out.sum())
    specific = flags[HOLDS_SOURCE_SPECIFIC].to_numpy(dtype=bool)
    common_only = flags[[m.name for m in drop_measures()]].any(axis=1).to_numpy() & ~specific

    def held(chosen: np.ndarray) -> str:
        return (
            f"{int((chosen & specific).sum())} hold a source-specific value, "
            f"{int((chosen & common_only).sum())} only common values"
        )

    lines = [
        "## What was released",
        "",
        f"{total - out} of {total} generations; {out} left out (`release.drop: {drop}`: {drop_rule(drop)}).",
        "",
        f"- Left out: {held(left_out)}.",
        f"- Released: {held(~left_out)}.",
        "",
        "A real value is source-specific when no real segment outside the generation's source (its context "
        "segments, or the fine-tuning set) holds it, and common when one does; a name word or a near variant "
        "of no known class counts as source-specific.",
        "",
    ]
    if out:
        lines += [
            "Left out by reason (a generation may have several):",
            "",
            *(
                f"- {m.drop_reason}: {int((flags[m.name].to_numpy() & left_out).sum())}"
                for m in drop_measures()
            ),
            "",
        ]
    return lines
