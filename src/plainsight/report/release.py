"""Release bundle: a method's synthetic texts alone, and a dataset card with the verdict and the evidence
behind them.

`synthetic.jsonl` holds one line per kept generation: its text, the fictional code it was written
from, the method and the seed; no real text and no context document ids. `README.md` is the bundle's
dataset card in the Hugging Face convention (YAML front matter: license, language, size category,
task, name, tags and the data file), so that `datasets.load_dataset("json", data_dir=...)` or
`load_dataset(folder)` reads the texts; then the privacy audit's verdict of the method on its run and
the evidence. `SUMMARY.md` is the one page a custodian signs (`plainsight.report.summary`).

`release.drop` picks what is left out: `any_identifier` (every generation in which the leak metrics
found an exact, partial or near leak, or that holds any real direct or quasi identifier of the corpus,
of any document whatever the identifier set of the run), `source_specific` (every generation holding
a real value of its source that is not known to be common: `plainsight.report.leak_classes`) or
`none`. The card says how many were left out, why, and how many of them held a source-specific value
or only common ones.

What is kept is decided once, per seed, by `release_filter` (rule `release_filter`: the kept rows and
the filter's record under results/{dataset}/{setting}/{idset}/release/{method}/); the bundle ships
those kept rows and its audit (`plainsight.report.bundle_audit`, rule `release_audit`) judges the same
rows, so the verdict is of the texts the bundle holds: `verdict.json` records the SHA-256 of the data
file the audit read, and the bundle is not written where its texts differ from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from plainsight.audit.protection import UnitSizes, person_claim, person_statement, units_line
from plainsight.codes.control_code import records_to_entities
from plainsight.entities import IDENTIFIER_SETS
from plainsight.evaluation.measures import LeakMeasure, leak_measures
from plainsight.evaluation.privacy import AVERAGED_SEGMENT
from plainsight.io import write_json, write_parquet, write_text
from plainsight.matching import leaked_values, unique_values
from plainsight.methods import registry
from plainsight.report.audit_verdict import (
    VERDICT_COLUMNS,
    AuditVerdict,
    audit_verdicts,
    row_verdict,
    run_rows,
)
from plainsight.report.leak_classes import HELD_VALUE_COLUMNS, holds_source_specific
from plainsight.report.summary import (
    NOT_FOR_RELEASE,
    ReleaseSummary,
    SignOff,
    build_summary,
    not_for_release,
    summary_markdown,
)
from plainsight.report.table_format import dp_notes
from plainsight.report.utility_table import REAL_ROWS

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
KNOWN_LIMITS = (
    "Leaks are counted against the annotated (known) or detected (unknown) private values only: a private "
    "detail that nobody annotated and Presidio missed is not counted.",
    "A generation without any private value can still copy real sentences; read the audit of nearest real "
    "documents before release.",
    "Dropping leaking generations changes the corpus: the kept texts are the ones the model wrote furthest "
    "from its private values. The release verdict is of the kept texts; the leak rates of the privacy "
    "evidence, and the run's audit table where there is one, are of the corpus before dropping.",
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


def bundle_drop(settings: BundleSettings, dp_records: Sequence[Mapping[str, Any]]) -> str:
    """The drop rule of a bundle whose seeds state `dp_records`: `release.drop_guaranteed` where a formal
    guarantee bounds the release, else `release.drop`."""
    return settings.drop_for(any(map(bounds_release, dp_records)))


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
    verdict: AuditVerdict | None = None  # of what the bundle ships (`shipped_verdict`); None: not audited
    sign_off: SignOff | None = None
    config_fingerprint: str = ""  # of the config the bundle was built with
    audit: Mapping[str, Any] = field(default_factory=dict)  # the record `verdict` is read from
    before_filter: AuditVerdict | None = None  # the run's audit table's verdict, of the corpus unfiltered
    units: UnitSizes | None = None  # the corpus's privacy units (`protection.unit_sizes`); None: not read
    # the mechanisms behind the bundle and their composition (`provenance.bundle_accounting`); None: none
    privacy_accounting: Mapping[str, Any] | None = None

    @property
    def title(self) -> str:
        return f"{self.dataset}, {self.method}, {self.setting} setting, {self.idset} identifiers"

    @property
    def keys(self) -> dict[str, str]:
        return {"dataset": self.dataset, "setting": self.setting, "idset": self.idset}

    @property
    def stamped(self) -> bool:
        """Whether the bundle says NOT FOR RELEASE: its verdict is not PASS and nobody signed it off."""
        return not_for_release(self.verdict, self.sign_off)


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


FILTER_KEYS = ("seed", "generation_id")


def release_filter(
    corpus: pd.DataFrame, metrics: pd.DataFrame, spans: pd.DataFrame, codes: pd.DataFrame, drop: str
) -> pd.DataFrame:
    """The one decision of what a bundle ships: per generation of `corpus` (seed, generation_id), the
    leak flags the card counts (`leak_flags`), the drop rule applied and whether it leaves the generation
    out (`left_out`)."""
    flags = leak_flags(corpus, metrics, corpus_identifiers(spans, codes))
    keys = corpus.loc[:, list(FILTER_KEYS)].reset_index(drop=True)
    return pd.concat([keys, flags], axis=1).assign(drop=drop, left_out=dropped(flags, drop))


def kept_rows(corpus: pd.DataFrame, filtered: pd.DataFrame) -> pd.DataFrame:
    """The generations of `corpus` that `filtered` (`release_filter` of it) keeps, with every column of
    the corpus: what the bundle ships and its audit reads."""
    return corpus.reset_index(drop=True)[~filtered["left_out"].to_numpy(bool)].reset_index(drop=True)


def write_kept(
    corpus: pd.DataFrame,
    metrics: pd.DataFrame,
    spans: pd.DataFrame,
    codes: pd.DataFrame,
    drop: str,
    paths: Mapping[str, str | Path],
) -> None:
    """Rule `release_filter`: one seed's kept rows (`kept`) and the filter's record of every generation
    (`filter`)."""
    filtered = release_filter(corpus, metrics, spans, codes, drop)
    write_parquet(kept_rows(corpus, filtered), paths["kept"])
    write_parquet(filtered, paths["filter"])


def read_seeds(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Per-seed files of a bundle (kept rows, filter records) as one frame, in the order given: the
    bundle and its audit read the kept rows through it alike."""
    return pd.concat([pd.read_parquet(path) for path in paths], ignore_index=True)


# The per-seed files of rule `release_bundle`, read as one frame each.
SEED_FRAMES = ("corpora", "filtered", "kept", "summaries", "metrics")


def bundle_frames(
    files: Mapping[str, Any], utility: pd.DataFrame | None, comments: pd.DataFrame | None
) -> dict[str, pd.DataFrame]:
    """What a bundle is built from: every seed's files (`SEED_FRAMES`, over the seeds in order), the
    spans, and the run's utility table and reviewers' comments where it has them."""
    frames = {name: read_seeds(files[name]) for name in SEED_FRAMES}
    frames["spans"] = pd.read_parquet(files["spans"])
    optional = {"utility": utility, "comments": comments}
    return frames | {name: frame for name, frame in optional.items() if frame is not None}


def bundle_rows(kept: pd.DataFrame) -> pd.DataFrame:
    """The columns of the kept rows that the data file ships."""
    return kept.loc[:, list(BUNDLE_COLUMNS)].reset_index(drop=True)


def data_sha256(kept: pd.DataFrame) -> str:
    """SHA-256 of the data file that ships `kept`: `sha256sum synthetic.jsonl` gives it, and the audit
    records it for the rows it read."""
    return hashlib.sha256(bundle_jsonl(bundle_rows(kept)).encode("utf-8")).hexdigest()


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
    data_file: str = BUNDLE_FILE,
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
            f"**{NOT_FOR_RELEASE}.** The privacy audit's verdict on the texts it ships is {verdict}, not "
            "PASS, and nobody has signed this bundle off (`release.sign_off`: who accepts it, and why).",
            "",
        ]
    if run.sign_off is not None and verdict != "PASS":
        return [
            f"**Signed off** by {run.sign_off.by}, although the verdict is {verdict}: {run.sign_off.reason}",
            "",
        ]
    return []


# What verdict.json takes from the audit of what the bundle ships (`plainsight.report.bundle_audit`): the
# seeds and kept generations it judged, the SHA-256 of the data file it read, each criterion per seed,
# what would decide an INCONCLUSIVE one, the gate's thresholds and the fitness statement.
SHIPPED_AUDIT_KEYS = (
    "seeds",
    "generations",
    "data_sha256",
    "criteria_by_seed",
    "would_decide",
    "thresholds",
    "fit_as_text",
    "fit_reasons",
)


def shipped_verdict(record: Mapping[str, Any], source: str) -> AuditVerdict:
    """The verdict of what a bundle ships, from its audit record (rule `release_audit`) at `source`."""
    return row_verdict(record["row"], source)


def verdict_record(run: ReleaseRun) -> dict[str, Any]:
    """verdict.json: the bundle's verdict for a machine to read, with its criteria, the sign-off, and the
    fingerprint of the config that built it; then what its audit judged (`SHIPPED_AUDIT_KEYS`) and the
    verdict of the run's audit table on the corpus before the filter, where there is one."""
    verdict, before = run.verdict, run.before_filter
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
        **{key: run.audit.get(key) for key in SHIPPED_AUDIT_KEYS},
        "before_filter": None
        if before is None
        else {"verdict": before.verdict, "seed_verdicts": before.seed_verdicts, "source": before.source},
        "privacy_accounting": run.privacy_accounting,
    }


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


def check_shipped(run: ReleaseRun, filtered: pd.DataFrame, kept: pd.DataFrame) -> None:
    """Stop where the kept rows are not those the filter kept, or not those the bundle's audit read."""
    keys = list(FILTER_KEYS)
    chosen = filtered.loc[~filtered["left_out"].to_numpy(bool), keys]
    if kept[keys].astype(int).values.tolist() != chosen.astype(int).values.tolist():
        raise ValueError("the kept rows are not those the release filter kept: rebuild rule release_filter")
    if run.audit and run.audit.get("data_sha256") != data_sha256(kept):
        raise ValueError(
            "the texts of this bundle are not those its audit judged "
            f"({run.verdict and run.verdict.source}): rebuild rule release_audit"
        )


def build_release(
    run: ReleaseRun,
    corpora: pd.DataFrame,
    filtered: pd.DataFrame,
    kept: pd.DataFrame,
    summaries: pd.DataFrame,
    dp_records: Sequence[Mapping[str, Any]] = (),
    data_file: str = BUNDLE_FILE,
) -> tuple[str, str]:
    """(synthetic.jsonl, README.md) of one method's corpora over its seeds: the data file ships `kept`,
    the rows `filtered` (`release_filter` of `corpora`) keeps, and nothing else."""
    check_shipped(run, filtered, kept)
    card = dataset_card(run, corpora, filtered, summaries, dp_records, data_file)
    return bundle_jsonl(bundle_rows(kept)), card


def method_verdict(run: ReleaseRun, audit_tables: Sequence[str]) -> AuditVerdict | None:
    """The audit's verdict of the run's method, where the run is audited and the table has its row."""
    return (audit_verdicts(audit_tables, run.keys) or {}).get(run.method)


def evidence_tables(
    run: ReleaseRun,
    audit_tables: Sequence[str],
    utility: pd.DataFrame | None,
    comment_files: Sequence[str],
) -> list[EvidenceTable]:
    """The method's rows of the run's privacy audit table, of the corpus before the filter (where the
    run is audited; its verdict aside: the card states it), the method's utility row of its run beside
    the real data's and chance's (`utility`: the run's utility table, `plainsight.report.utility_table`),
    and its review status on the review page (where reviewers left comments)."""
    tables = []
    for path in audit_tables:
        rows = run_rows(pd.read_csv(path), run.keys)
        rows = rows[rows["method"] == run.method].drop(columns=list(VERDICT_COLUMNS), errors="ignore")
        if not rows.empty:
            title = f"Privacy audit of the run, before the filter ({Path(path).name})"
            tables.append(EvidenceTable(title, rows.reset_index(drop=True)))
    if utility is not None:
        rows = run_rows(utility, run.keys)
        rows = rows[rows["method"].isin([registry.base_method(run.method), *REAL_ROWS])]
        tables.append(EvidenceTable("Utility of the run's corpora", rows.reset_index(drop=True)))
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


def write_data_file(rows: pd.DataFrame, path: str | Path) -> None:
    """Rule `release_data`: the bundle's data file, shipping `rows` (every seed's kept rows, or the
    corpora as written where nothing private filters them)."""
    write_text(bundle_jsonl(bundle_rows(rows)), path)


def check_data_file(bundle: str, path: str | Path) -> None:
    """Stop where the data file beside the card does not ship the rows the card describes."""
    if Path(path).read_text(encoding="utf-8") != bundle:
        raise ValueError(f"{path} does not ship the kept rows this card describes: rebuild rule release_data")


def write_release(
    run: ReleaseRun,
    frames: Mapping[str, pd.DataFrame],
    dp_records: Sequence[Mapping[str, Any]],
    paths: Mapping[str, str | Path],
) -> None:
    """Build the bundle from the corpora, filter records, kept rows and summaries of every seed
    (`frames`), check that its data file (`bundle`, rule `release_data`'s) ships those rows, and write its
    card (`card`), its verdict (`verdict`) and the summary a custodian signs (`summary`,
    `bundle_summary`)."""
    bundle, card = build_release(
        run,
        frames["corpora"],
        frames["filtered"],
        frames["kept"],
        frames["summaries"],
        dp_records,
        Path(paths["bundle"]).name,
    )
    check_data_file(bundle, paths["bundle"])
    write_text(card, paths["card"])
    write_json(verdict_record(run), paths["verdict"])
    write_text(summary_markdown(bundle_summary(run, frames, dp_records, paths)), paths["summary"])


def bundle_summary(
    run: ReleaseRun,
    frames: Mapping[str, pd.DataFrame],
    dp_records: Sequence[Mapping[str, Any]],
    paths: Mapping[str, str | Path],
) -> ReleaseSummary:
    """SUMMARY.md's content: the card's verdict and sign-off, from the per-generation `metrics` of every
    seed, the `spans`, the `kept` rows and, where given, the run's `utility` table and the review page's
    `comments` (`frames`)."""
    return build_summary(
        run.title,
        run.method,
        run.verdict,
        run.sign_off,
        frames["metrics"],
        frames["spans"],
        frames.get("utility"),
        frames.get("comments"),
        run.keys,
        KNOWN_LIMITS,
        (
            ("the dataset card, with all the evidence", Path(paths["card"]).name),
            ("the verdict for machines", Path(paths["verdict"]).name),
        ),
        frames["kept"],
        bundle_drop(run.settings, dp_records),
    )
