"""Release bundle: a method's synthetic texts alone, and a datasheet with the evidence behind them.

`synthetic.jsonl` holds one line per kept generation: its text, the fictional code it was written
from, the method and the seed; no real text and no context document ids. With `drop_leaking` a
generation is left out when the leak metrics found an exact, partial or near leak in it, or when it
holds any real direct or quasi identifier of the corpus (of any document, whatever the identifier
set of the run). The datasheet says how many were left out and why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.codes.control import records_to_entities
from plainsight.entities import IDENTIFIER_SETS
from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.io import write_text
from plainsight.matching import leaked_values, unique_values
from plainsight.methods import registry
from plainsight.report.tables import dp_notes

BUNDLE_COLUMNS = ("text", "fictional_code", "method", "seed")
LEAK_REASONS = {
    "leaked": "exact leak of a value of its code's identifier set",
    "partial_leak": "partial leak (a word of a real name)",
    "near_leak": "near leak (a variant of a real value)",
    "any_identifier": "a real direct or quasi identifier of any document of the corpus",
}
SUMMARY_LABELS = {
    "pipp": "PIPP (%)",
    "elp": "ELP (%)",
    "partial_leak": "Partial leak (%)",
    "near_leak": "Near leak (%)",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "documents": "Documents (%)",
}
KNOWN_LIMITS = (
    "Leaks are counted against the annotated (known) or detected (unknown) private values only: a private "
    "detail that nobody annotated and Presidio missed is not counted.",
    "A generation without any private value can still copy real sentences; read the audit of nearest real "
    "documents before release.",
    "Dropping leaking generations changes the corpus: the kept texts are the ones the model wrote furthest "
    "from its private values, and the leak rates above are of the corpus before dropping.",
    "Fictional values may still coincide with real people or places outside this corpus.",
)


@dataclass(frozen=True)
class EvidenceTable:
    """A table of more evidence for the datasheet (an audit or utility row), shown as it is."""

    title: str
    frame: pd.DataFrame


@dataclass(frozen=True)
class ReleaseRun:
    dataset: str
    setting: str
    idset: str
    method: str
    model: str
    generation: Mapping[str, Any]
    drop_leaking: bool = True
    evidence: Sequence[EvidenceTable] = field(default_factory=tuple)


def corpus_identifiers(spans: pd.DataFrame, codes: pd.DataFrame) -> list[str]:
    """Every real direct or quasi value of the corpus: gold spans and (unknown setting) the codes' values."""
    gold = spans[spans["identifier_type"].isin(IDENTIFIER_SETS["both"])]["text"]
    found = [value for records in codes["entities"] for _, value in records_to_entities(records)]
    return unique_values([*gold, *found])


def leak_flags(corpora: pd.DataFrame, metrics: pd.DataFrame, identifiers: Sequence[str]) -> pd.DataFrame:
    """Per generation (row of `corpora`), which leak reasons apply; metrics joined by
    (seed, generation_id)."""
    keys = ["seed", "generation_id"]
    joined = corpora[keys].merge(
        metrics[[*keys, "leaked", "partial_leak", "near_leak"]], on=keys, how="left", validate="one_to_one"
    )
    if joined[["leaked", "partial_leak", "near_leak"]].isna().any().any():
        raise ValueError("a generation has no row in its corpus's per-generation metrics")
    flags = joined[["leaked", "partial_leak", "near_leak"]].astype(bool)
    flags["any_identifier"] = [bool(leaked_values(text, identifiers)) for text in corpora["text"]]
    return flags


def bundle_rows(corpora: pd.DataFrame, flags: pd.DataFrame, drop_leaking: bool) -> pd.DataFrame:
    kept = corpora.reset_index(drop=True)
    if drop_leaking:
        kept = kept[~flags.any(axis=1).to_numpy()]
    return kept.loc[:, list(BUNDLE_COLUMNS)].reset_index(drop=True)


def bundle_jsonl(rows: pd.DataFrame) -> str:
    return "".join(
        json.dumps(
            {"text": r.text, "fictional_code": r.fictional_code, "method": r.method, "seed": int(r.seed)},
            ensure_ascii=False,
        )
        + "\n"
        for r in rows.itertuples()
    )


def summary_row(summaries: pd.DataFrame) -> dict[str, float]:
    """The method's leak and ROUGE rates: the mean over seeds of each run's averaged summary."""
    averaged = summaries[summaries["segment"] == AVERAGED_SEGMENT]
    return {label: float(averaged[key].mean()) for key, label in SUMMARY_LABELS.items() if key in averaged}


def datasheet(
    run: ReleaseRun,
    corpora: pd.DataFrame,
    flags: pd.DataFrame,
    kept: int,
    summaries: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]],
) -> str:
    """DATASHEET.md of one bundle."""
    method = registry.method(run.method)
    lines = [
        f"# Synthetic corpus: {run.dataset}, {run.method}, {run.setting} setting, {run.idset} identifiers",
        "",
        "## Method and settings",
        "",
        f"- Method `{run.method}` ({method.family}; shows real codes: {method.shows_codes}; "
        f"blocks real values while decoding: {method.blocks_context_values}; "
        f"training: {method.training or 'none'}).",
        f"- Model: `{run.model}`, decoded on {', '.join(sorted(set(map(str, corpora.get('device', [])))))}"
        f" in {', '.join(sorted(set(map(str, corpora.get('dtype', [])))))}.",
        f"- Seeds: {', '.join(map(str, sorted(set(corpora['seed']))))}; {len(corpora)} generations written.",
        "- Generation: " + ", ".join(f"{k} {v}" for k, v in run.generation.items()) + ".",
        "",
        *_privacy_section(summaries, dp_records),
        *_release_section(run, corpora, flags, kept),
    ]
    for table in run.evidence:
        lines += [f"## {table.title}", "", frame_markdown(table.frame), ""]
    lines += ["## Known limits", "", *(f"- {limit}" for limit in KNOWN_LIMITS), ""]
    return "\n".join(lines)


def frame_markdown(frame: pd.DataFrame) -> str:
    """A small table as Markdown; numbers to four significant digits."""

    def cell(value: Any) -> str:
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        return text.replace("|", "\\|")

    rows = [list(map(str, frame.columns)), *([cell(v) for v in row] for row in frame.itertuples(index=False))]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(frame.columns), *lines[1:]])


def _privacy_section(summaries: pd.DataFrame, dp_records: Sequence[Mapping[str, Any]]) -> list[str]:
    row = pd.DataFrame([summary_row(summaries)])
    guarantee = dp_notes(dp_records) or ["No formal guarantee: the method is not differentially private."]
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


def _release_section(run: ReleaseRun, corpora: pd.DataFrame, flags: pd.DataFrame, kept: int) -> list[str]:
    if not run.drop_leaking:
        return [
            "## What was released",
            "",
            f"All {len(corpora)} generations (`release.drop_leaking` off): "
            "some may hold real values; see the leak rates above.",
            "",
        ]
    counts = [f"- {LEAK_REASONS[reason]}: {int(flags[reason].sum())}" for reason in LEAK_REASONS]
    return [
        "## What was released",
        "",
        f"{kept} of {len(corpora)} generations; {len(corpora) - kept} left out for a leak "
        "(a generation may have several reasons):",
        "",
        *counts,
        "",
    ]


def build_release(
    run: ReleaseRun,
    corpora: pd.DataFrame,
    metrics: pd.DataFrame,
    summaries: pd.DataFrame,
    spans: pd.DataFrame,
    codes: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]] = (),
) -> tuple[str, str]:
    """(synthetic.jsonl, DATASHEET.md) of one method's corpora over its seeds."""
    flags = leak_flags(corpora, metrics, corpus_identifiers(spans, codes))
    rows = bundle_rows(corpora, flags, run.drop_leaking)
    return bundle_jsonl(rows), datasheet(run, corpora, flags, len(rows), summaries, dp_records)


def evidence_tables(
    run: ReleaseRun, audit_tables: Sequence[str], utility_tables: Sequence[str], comment_files: Sequence[str]
) -> list[EvidenceTable]:
    """The method's rows of the privacy audit and the utility table of its run (where that run is audited
    or measured), and its review status on the review page (where reviewers left comments)."""
    keys = {"dataset": run.dataset, "setting": run.setting, "idset": run.idset}
    tables = []
    for title, paths in (("Privacy audit", audit_tables), ("Utility", utility_tables)):
        for path in paths:
            frame = pd.read_csv(path)
            rows = frame[(frame[list(keys)] == pd.Series(keys)).all(axis=1) & (frame["method"] == run.method)]
            if not rows.empty:
                tables.append(EvidenceTable(f"{title} ({Path(path).name})", rows.reset_index(drop=True)))
    comments = [pd.read_parquet(path) for path in comment_files]
    comments = (
        pd.concat(comments, ignore_index=True) if comments else pd.DataFrame(columns=["method", "verdict"])
    )
    verdicts = comments[comments["method"] == run.method]["verdict"].value_counts()
    status = (
        pd.DataFrame({"verdict": verdicts.index, "generations": verdicts.values})
        if not verdicts.empty
        else pd.DataFrame({"verdict": ["none yet"], "generations": [0]})
    )
    tables.append(EvidenceTable("Review status (review page verdicts)", status))
    return tables


def write_release(
    run: ReleaseRun,
    frames: Mapping[str, pd.DataFrame],
    spans: pd.DataFrame,
    codes: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]],
    bundle_path: str | Path,
    datasheet_path: str | Path,
) -> None:
    """Build the bundle from the corpora, metrics and summaries of every seed, and write both files."""
    bundle, sheet = build_release(
        run, frames["corpora"], frames["metrics"], frames["summaries"], spans, codes, dp_records
    )
    write_text(bundle, bundle_path)
    write_text(sheet, datasheet_path)
