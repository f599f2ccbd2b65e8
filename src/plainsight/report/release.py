"""Release bundle: a method's synthetic texts alone, and a dataset card with the verdict and the evidence
behind them.

`synthetic.jsonl` holds one line per kept generation: its text, the fictional code it was written
from, the method and the seed; no real text and no context document ids. `README.md` is the bundle's
dataset card in the Hugging Face convention (YAML front matter: license, language, size category,
task, name, tags and the data file), so that `datasets.load_dataset("json", data_dir=...)` or
`load_dataset(folder)` reads the texts; then the privacy audit's verdict of the method on its run and
the evidence.

`release.drop` picks what is left out: `any_identifier` (every generation in which the leak metrics
found an exact, partial or near leak, or that holds any real direct or quasi identifier of the corpus,
of any document whatever the identifier set of the run), `source_specific` (every generation holding
a real value of its source that is not known to be common: `plainsight.report.leak_classes`) or
`none`. The card says how many were left out, why, and how many of them held a source-specific value
or only common ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from plainsight.codes.control_code import records_to_entities
from plainsight.entities import IDENTIFIER_SETS
from plainsight.evaluation.measures import LeakMeasure, leak_measures
from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.io import write_json, write_text
from plainsight.matching import leaked_values, unique_values
from plainsight.methods import registry
from plainsight.report.audit_verdict import VERDICT_COLUMNS, AuditVerdict, audit_verdicts, run_rows
from plainsight.report.leak_classes import HELD_VALUE_COLUMNS, holds_source_specific
from plainsight.report.table_format import dp_notes

BUNDLE_FILE = "synthetic.jsonl"
BUNDLE_COLUMNS = ("text", "fictional_code", "method", "seed")
# The measure a bundle matches against every document of the corpus, not only against the generation's
# source: the bundle leaves out a real identifier wherever it comes from.
CORPUS_WIDE_MEASURE = "any_identifier"
HOLDS_SOURCE_SPECIFIC = "source_specific"
DROP_RULES = ("any_identifier", "source_specific", "none")


def drop_measures() -> tuple[LeakMeasure, ...]:
    """The leak measures whose hits `release.drop: any_identifier` leaves out, in their columns' order."""
    return tuple(m for m in leak_measures() if m.drop_reason)


def drop_rule(drop: str) -> str:
    """What `release.drop` leaves out, in words."""
    return {
        "any_identifier": "every generation with " + "; ".join(m.drop_reason for m in drop_measures()),
        "source_specific": "every generation holding a real value of its source that no real segment outside "
        "its source is known to hold (exact, partial and near leaks whose value is not common included)",
        "none": "nothing",
    }[drop]


SUMMARY_LABELS = {
    "pipp": "PIPP (%)",
    "elp": "ELP (%)",
    "partial_leak": "Partial leak (%)",
    "near_leak": "Near leak (%)",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "documents": "Documents (%)",
}
CARD_TAGS = ("synthetic", "privacy", "anonymization")
_SIZE_UNITS = ("", "K", "M", "B", "T")
KNOWN_LIMITS = (
    "Leaks are counted against the annotated (known) or detected (unknown) private values only: a private "
    "detail that nobody annotated and Presidio missed is not counted.",
    "A generation without any private value can still copy real sentences; read the audit of nearest real "
    "documents before release.",
    "Dropping leaking generations changes the corpus: the kept texts are the ones the model wrote furthest "
    "from its private values, and the leak rates above are of the corpus before dropping.",
    "A common value is one that some real segment outside the generation's source holds too; it is still "
    "a real value, and a rare one may point to a person all the same.",
    "Fictional values may still coincide with real people or places outside this corpus.",
)


@dataclass(frozen=True)
class EvidenceTable:
    """A table of more evidence for the card (an audit or utility row), shown as it is."""

    title: str
    frame: pd.DataFrame


@dataclass(frozen=True)
class BundleSettings:
    """`release` of the config: what is left out, and the card's license and languages."""

    drop: str = "any_identifier"
    license: str = "other"
    language: tuple[str, ...] = ("en",)
    # What a method whose formal guarantee bounds its release leaves out: `none` keeps the guarantee, since
    # a filter that reads private data after the mechanism is not covered by it.
    drop_guaranteed: str = "none"

    def __post_init__(self):
        for key, value in (("drop", self.drop), ("drop_guaranteed", self.drop_guaranteed)):
            if value not in DROP_RULES:
                raise ValueError(f"release.{key} {value!r} is not one of {list(DROP_RULES)}")

    @classmethod
    def from_config(cls, release: Mapping[str, Any]) -> BundleSettings:
        return cls(
            release["drop"], release["license"], tuple(release["language"]), release["drop_guaranteed"]
        )

    def drop_for(self, guaranteed: bool) -> str:
        """The drop rule of a bundle: `drop_guaranteed` where a formal guarantee bounds the release."""
        return self.drop_guaranteed if guaranteed else self.drop


def bounds_release(record: Mapping[str, Any]) -> bool:
    """Whether a guarantee record's epsilon bounds the released corpus (DP-SGD's, Aug-PE's), not only a
    step of the method (RPSG's per-seed selection, whose `release_epsilon` is null)."""
    return record.get("release_epsilon", record.get("epsilon")) is not None


@dataclass(frozen=True)
class SignOff:
    """`release.sign_off`: who accepted a bundle whose verdict is not PASS, and why."""

    by: str
    reason: str

    @classmethod
    def from_config(cls, sign_off: Mapping[str, Any] | None) -> SignOff | None:
        return None if not sign_off else cls(str(sign_off["by"]), str(sign_off["reason"]))


NOT_FOR_RELEASE = "NOT FOR RELEASE"


@dataclass(frozen=True)
class ReleaseRun:
    dataset: str
    setting: str
    idset: str
    method: str
    model: str
    generation: Mapping[str, Any]
    settings: BundleSettings = field(default_factory=BundleSettings)
    evidence: Sequence[EvidenceTable] = field(default_factory=tuple)
    verdict: AuditVerdict | None = None  # None: the run is not audited
    sign_off: SignOff | None = None
    config_fingerprint: str = ""  # of the config the bundle was built with

    @property
    def title(self) -> str:
        return f"{self.dataset}, {self.method}, {self.setting} setting, {self.idset} identifiers"

    @property
    def keys(self) -> dict[str, str]:
        return {"dataset": self.dataset, "setting": self.setting, "idset": self.idset}

    @property
    def stamped(self) -> bool:
        """Whether the bundle says NOT FOR RELEASE: its verdict is not PASS and nobody signed it off."""
        passed = self.verdict is not None and self.verdict.verdict == "PASS"
        return not passed and self.sign_off is None


def corpus_identifiers(spans: pd.DataFrame, codes: pd.DataFrame) -> list[str]:
    """Every real direct or quasi value of the corpus: gold spans and (unknown setting) the codes' values."""
    gold = spans[spans["identifier_type"].isin(IDENTIFIER_SETS["both"])]["text"]
    found = [value for records in codes["entities"] for _, value in records_to_entities(records)]
    return unique_values([*gold, *found])


def leak_flags(corpora: pd.DataFrame, metrics: pd.DataFrame, identifiers: Sequence[str]) -> pd.DataFrame:
    """Per generation (row of `corpora`), which leak measures hit it (the corpus-wide one against
    `identifiers`, every real identifier of the corpus) and whether it holds a source-specific value;
    metrics joined by (seed, generation_id)."""
    from_metrics = [m for m in drop_measures() if m.name != CORPUS_WIDE_MEASURE]
    hit_columns = [m.member_column for m in from_metrics]
    wanted = [*hit_columns, *HELD_VALUE_COLUMNS, "leaked_value_classes"]
    missing = [column for column in wanted if column not in metrics]
    if missing:
        raise ValueError(f"the per-generation metrics lack {missing}: rerun rule privacy_metrics")
    keys = ["seed", "generation_id"]
    joined = corpora[keys].merge(metrics[[*keys, *wanted]], on=keys, how="left", validate="one_to_one")
    if joined[hit_columns].isna().any().any():
        raise ValueError("a generation has no row in its corpus's per-generation metrics")
    flags = pd.DataFrame({m.name: joined[m.member_column].astype(bool) for m in from_metrics})
    if any(m.name == CORPUS_WIDE_MEASURE for m in drop_measures()):
        flags[CORPUS_WIDE_MEASURE] = [bool(leaked_values(text, identifiers)) for text in corpora["text"]]
    flags[HOLDS_SOURCE_SPECIFIC] = [holds_source_specific(row) for row in joined.to_dict("records")]
    return flags[[*(m.name for m in drop_measures()), HOLDS_SOURCE_SPECIFIC]]


def dropped(flags: pd.DataFrame, drop: str) -> np.ndarray:
    """Which generations `release.drop` leaves out."""
    if drop == "any_identifier":
        return flags[[m.name for m in drop_measures()]].any(axis=1).to_numpy()
    if drop == "source_specific":
        return flags[HOLDS_SOURCE_SPECIFIC].to_numpy(dtype=bool)
    return np.zeros(len(flags), dtype=bool)


def bundle_rows(corpora: pd.DataFrame, left_out: np.ndarray) -> pd.DataFrame:
    kept = corpora.reset_index(drop=True)[~left_out]
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


def dataset_card(
    run: ReleaseRun,
    corpora: pd.DataFrame,
    flags: pd.DataFrame,
    left_out: np.ndarray,
    summaries: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]],
    data_file: str = BUNDLE_FILE,
) -> str:
    """README.md of one bundle: front matter, verdict, method, evidence, what was released, limits."""
    method = registry.method(run.method)
    drop = run.settings.drop_for(any(map(bounds_release, dp_records)))
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
        *_privacy_section(summaries, dp_records, drop),
        *_release_section(drop, flags, left_out),
    ]
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
        return [
            f"**{NOT_FOR_RELEASE}.** The privacy audit's verdict is {verdict}, not PASS, and nobody has "
            "signed this bundle off (`release.sign_off`: who accepts it, and why).",
            "",
        ]
    if run.sign_off is not None and verdict != "PASS":
        return [
            f"**Signed off** by {run.sign_off.by}, although the verdict is {verdict}: {run.sign_off.reason}",
            "",
        ]
    return []


def verdict_record(run: ReleaseRun) -> dict[str, Any]:
    """verdict.json: the bundle's verdict for a machine to read, with its criteria, the sign-off, and the
    fingerprint of the config that built it."""
    verdict = run.verdict
    return {
        "dataset": run.dataset,
        "setting": run.setting,
        "idset": run.idset,
        "method": run.method,
        "verdict": verdict.verdict if verdict is not None else None,
        "verdict_kind": verdict.kind if verdict is not None else "",
        "release": NOT_FOR_RELEASE if run.stamped else "releasable",
        "threat_model": verdict.threat_model if verdict is not None else "",
        "criteria": list(verdict.reasons) if verdict is not None else [],
        "seed_verdicts": verdict.seed_verdicts if verdict is not None else "",
        "source": verdict.source if verdict is not None else "",
        "sign_off": None if run.sign_off is None else {"by": run.sign_off.by, "reason": run.sign_off.reason},
        "config_fingerprint": run.config_fingerprint,
    }


def _verdict_section(run: ReleaseRun) -> list[str]:
    if run.verdict is None:
        return [
            "## Release verdict",
            "",
            f"No privacy audit was run for `{run.method}` on {run.dataset}, {run.setting} setting, "
            f"{run.idset} identifiers (`audit.datasets`, `audit.settings`, `audit.identifier_sets`): "
            "there is no verdict; read the evidence below before release.",
            "",
        ]
    verdict = run.verdict
    threat = f" The threat model: {verdict.threat_model}." if verdict.threat_model else ""
    return [
        "## Release verdict",
        "",
        f"**{verdict.verdict}**{f' ({verdict.kind})' if verdict.kind else ''} (the privacy audit, "
        f"{verdict.source}).{threat}",
        *(["", f"Per seed: {verdict.seed_verdicts}."] if verdict.seed_verdicts else []),
        "",
        *(f"- {reason}" for reason in verdict.reasons),
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


def _privacy_section(
    summaries: pd.DataFrame, dp_records: Sequence[Mapping[str, Any]], drop: str
) -> list[str]:
    row = pd.DataFrame([summary_row(summaries)])
    selection = [record for record in dp_records if "mechanism" in record]
    trained = [record for record in dp_records if "mechanism" not in record]
    guarantee = dp_notes(trained) + selection_notes(selection) or [
        "No formal guarantee: the method is not differentially private."
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


def build_release(
    run: ReleaseRun,
    corpora: pd.DataFrame,
    metrics: pd.DataFrame,
    summaries: pd.DataFrame,
    spans: pd.DataFrame,
    codes: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]] = (),
    data_file: str = BUNDLE_FILE,
) -> tuple[str, str]:
    """(synthetic.jsonl, README.md) of one method's corpora over its seeds."""
    flags = leak_flags(corpora, metrics, corpus_identifiers(spans, codes))
    left_out = dropped(flags, run.settings.drop_for(any(map(bounds_release, dp_records))))
    rows = bundle_rows(corpora, left_out)
    return bundle_jsonl(rows), dataset_card(run, corpora, flags, left_out, summaries, dp_records, data_file)


def method_verdict(run: ReleaseRun, audit_tables: Sequence[str]) -> AuditVerdict | None:
    """The audit's verdict of the run's method, where the run is audited and the table has its row."""
    return (audit_verdicts(audit_tables, run.keys) or {}).get(run.method)


def evidence_tables(
    run: ReleaseRun, audit_tables: Sequence[str], utility_tables: Sequence[str], comment_files: Sequence[str]
) -> list[EvidenceTable]:
    """The method's rows of the privacy audit (its verdict aside: the card states it) and the utility
    table of its run (where that run is audited or measured), and its review status on the review page
    (where reviewers left comments)."""
    tables = []
    for title, paths in (("Privacy audit", audit_tables), ("Utility", utility_tables)):
        for path in paths:
            rows = run_rows(pd.read_csv(path), run.keys)
            rows = rows[rows["method"] == run.method].drop(columns=list(VERDICT_COLUMNS), errors="ignore")
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
    paths: Mapping[str, str | Path],
) -> None:
    """Build the bundle from the corpora, metrics and summaries of every seed, and write it (`bundle`), its
    card (`card`) and its verdict (`verdict`)."""
    bundle, card = build_release(
        run,
        frames["corpora"],
        frames["metrics"],
        frames["summaries"],
        spans,
        codes,
        dp_records,
        Path(paths["bundle"]).name,
    )
    write_text(bundle, paths["bundle"])
    write_text(card, paths["card"])
    write_json(verdict_record(run), paths["verdict"])
