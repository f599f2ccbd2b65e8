"""Release bundle: a method's synthetic texts alone and, in its custodian's part (`custodian/`, which does
not leave with the bundle), the evidence card (`plainsight.report.release_card`) with the verdict and the
evidence computed on the private corpus behind it, its verdict for machines and the summary a custodian
signs. The bundle's public card is `plainsight.report.public_card`'s.

`synthetic.jsonl` holds one line per kept generation: its text, the fictional code it was written
from, the method and the seed; no real text and no context document ids. `SUMMARY.md` is the one page
a custodian signs (`plainsight.report.summary`).

What is kept is decided once, per seed, by the release filter (`plainsight.report.release_filter`); the
bundle ships those kept rows and its audit (`plainsight.report.bundle_audit`, rule `release_audit`)
judges the same rows, so the verdict is of the texts the bundle holds: `verdict.json` records the
SHA-256 of the data file the audit read, and the bundle is not written where its texts differ from it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.audit.criteria import Gate
from plainsight.audit.gate import EMPIRICAL, FORMAL
from plainsight.audit.guarantee import read_guarantee_record
from plainsight.audit.privacy_audit_table import VERDICT_COLUMNS
from plainsight.io import read_json, write_json, write_text
from plainsight.methods import registry
from plainsight.report.audit_verdict import (
    AuditVerdict,
    audit_verdicts,
    row_verdict,
    run_rows,
)
from plainsight.report.bundle_files import CUSTODIAN_FOLDER, EVIDENCE_FILE
from plainsight.report.release_card import dataset_card
from plainsight.report.release_filter import FILTER_KEYS, read_seeds
from plainsight.report.release_run import KNOWN_LIMITS, BundleSettings, EvidenceTable, ReleaseRun, bundle_drop
from plainsight.report.sign_off import read_sign_offs
from plainsight.report.summary import NOT_FOR_RELEASE, ReleaseSummary, SummaryFrames, build_summary
from plainsight.report.summary_render import summary_markdown
from plainsight.report.utility_table import REFERENCE_ROWS, run_utility_table

BUNDLE_FILE = "synthetic.jsonl"
BUNDLE_COLUMNS = ("text", "fictional_code", "method", "seed")


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


def gate_policy(audit: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the gate that judged the bundle asks of a PASS (from its audit's `thresholds`, the gate as
    configured): a formal guarantee, or empirical evidence alone; None where nothing was audited."""
    thresholds = audit.get("thresholds")
    if not thresholds:
        return None
    formal = Gate.from_config(thresholds).requires_formal_guarantee()
    return {
        "requires_formal_guarantee": formal,
        "pass_rests_on": FORMAL if formal else EMPIRICAL,
        "statement": "a PASS needs a formal guarantee (criterion epsilon of release.gate.criteria)"
        if formal
        else "empirical evidence accepted: release.gate.criteria ask for no formal guarantee",
    }


def judged_guarantee(audit: Mapping[str, Any]) -> dict[str, Any] | None:
    """The formal claim the bundle's own audit judged (its row's `dp_` columns: every mechanism behind the
    bundle, every seed's, composed; none where a release filter read private data after them): epsilon,
    delta, the privacy unit and how many there are; None where it judged none."""
    row = audit.get("row") or {}
    if row.get("dp_epsilon") is None:
        return None
    return {
        "epsilon": row["dp_epsilon"],
        "delta": row.get("dp_delta"),
        "privacy_unit": row.get("dp_unit"),
        # a count, though the audit's table held it as a float beside missing values
        "units": None if row.get("dp_units") is None else int(row["dp_units"]),
    }


def verdict_record(run: ReleaseRun) -> dict[str, Any]:
    """verdict.json: the bundle's verdict for a machine to read, with its criteria, what the gate asks of
    a PASS (`policy`), the formal guarantee its audit judged where there is one (`judged_guarantee`: the
    one `privacy_accounting` composes), the sign-off of its texts (and the method's sign-offs of other
    texts), and the fingerprint of the config that built it; then what its audit judged
    (`SHIPPED_AUDIT_KEYS`) and the verdict of the run's audit table on the corpus before the filter,
    where there is one."""
    verdict, before = run.verdict, run.before_filter
    return {
        "dataset": run.dataset,
        "setting": run.setting,
        "idset": run.idset,
        "method": run.method,
        "verdict": verdict.verdict if verdict is not None else None,
        # what a PASS rests on; null for the other verdicts, whose `policy` says what a PASS would need
        "verdict_kind": verdict.kind if verdict is not None and verdict.kind else None,
        "policy": gate_policy(run.audit),
        "guarantee": judged_guarantee(run.audit),
        "release": NOT_FOR_RELEASE if run.stamped else "releasable",
        "threat_model": verdict.threat_model if verdict is not None else "",
        "criteria": list(verdict.reasons) if verdict is not None else [],
        "seed_verdicts": verdict.seed_verdicts if verdict is not None else "",
        "source": verdict.source if verdict is not None else "",
        "sign_off": None if run.sign_off is None else run.sign_off.record(),
        "sign_offs_for_other_texts": [sign_off.record() for sign_off in run.signed.other_texts],
        "config_fingerprint": run.config_fingerprint,
        **{key: run.audit.get(key) for key in SHIPPED_AUDIT_KEYS},
        "before_filter": None
        if before is None
        else {"verdict": before.verdict, "seed_verdicts": before.seed_verdicts, "source": before.source},
        "privacy_accounting": run.privacy_accounting,
    }


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


def run_utility(run: ReleaseRun, utility: pd.DataFrame | None) -> pd.DataFrame:
    """The method's row of its run's utility table beside its reference rows (the real data's, chance's
    and the zero-learning corpus's; `utility`: the run's utility table,
    `plainsight.report.utility_table`): `utility.csv` of the bundle."""
    if utility is None:
        return pd.DataFrame(columns=["dataset", "setting", "idset", "method"])
    rows = run_rows(utility, run.keys)
    chosen = rows["method"].isin([registry.base_method(run.method), *REFERENCE_ROWS])
    return rows[chosen].reset_index(drop=True)


def evidence_tables(
    run: ReleaseRun, audit_tables: Sequence[str], comment_files: Sequence[str]
) -> list[EvidenceTable]:
    """The method's rows of the run's privacy audit table, of the corpus before the filter (where the
    run is audited; its verdict aside: the card states it), and its review status on the review page
    (where reviewers left comments)."""
    tables = []
    for path in audit_tables:
        rows = run_rows(pd.read_csv(path), run.keys)
        rows = rows[rows["method"] == run.method].drop(columns=list(VERDICT_COLUMNS), errors="ignore")
        if not rows.empty:
            title = f"Privacy audit of the run, before the filter ({Path(path).name})"
            tables.append(EvidenceTable(title, rows.reset_index(drop=True)))
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
    card (`card`), its run's utility table (`utility`), its verdict (`verdict`) and the summary a custodian
    signs (`summary`, `bundle_summary`)."""
    bundle, card = build_release(
        run,
        frames["corpora"],
        frames["filtered"],
        frames["kept"],
        frames["summaries"],
        dp_records,
        Path(os.path.relpath(paths["bundle"], Path(paths["card"]).parent)).as_posix(),
    )
    check_data_file(bundle, paths["bundle"])
    write_text(card, paths["card"])
    write_text(run_utility(run, frames.get("utility")).to_csv(index=False), paths["utility"])
    write_json(verdict_record(run), paths["verdict"])
    write_text(summary_markdown(bundle_summary(run, frames, dp_records, paths)), paths["summary"])


def bundle_summary(
    run: ReleaseRun,
    frames: Mapping[str, pd.DataFrame],
    dp_records: Sequence[Mapping[str, Any]],
    paths: Mapping[str, str | Path],
    folder: str = "",
) -> ReleaseSummary:
    """SUMMARY.md's content: the card's verdict and sign-off, from the per-generation `metrics` of every
    seed, the `spans`, the `kept` rows and, where given, the run's `utility` table and the review page's
    `comments` (`frames`). Its links name the card and the verdict file (`paths`) in the bundle's folder,
    or through `folder` from elsewhere (the review page)."""
    return build_summary(
        run.title,
        run.method,
        run.verdict,
        run.signed,
        SummaryFrames(
            frames["metrics"],
            frames["spans"],
            frames.get("utility"),
            frames.get("comments"),
            frames["kept"],
            bundle_drop(run.settings, dp_records),
        ),
        run.keys,
        KNOWN_LIMITS,
        (
            ("the evidence card, with all the evidence", f"{folder}{Path(paths['card']).name}"),
            ("the verdict for machines", f"{folder}{Path(paths['verdict']).name}"),
        ),
    )


@dataclass(frozen=True)
class ShippedFiles:
    """What a bundle's summary is built from beside the run's spans, utility table and comments: its audit
    record (rule `release_audit`) and, over its seeds, the kept rows, the per-generation metrics and the
    guarantee records (none for a method without one)."""

    audit: str
    kept: Sequence[str]
    metrics: Sequence[str]
    guarantees: Sequence[str] = ()


def shipped_summary(
    run: ReleaseRun,
    files: ShippedFiles,
    shared: Mapping[str, pd.DataFrame | None],
    paths: Mapping[str, str | Path],
    folder: str = "",
) -> ReleaseSummary:
    """The summary of what a bundle ships, read from its files as rule `release_bundle` reads them: the
    verdict of its audit record and the frames of every seed, beside the run's `spans` and, where given,
    its `utility` table and `comments` (`shared`). The review page shows it word for word as the bundle's
    SUMMARY.md (`review.release_summaries`)."""
    audit = read_json(files.audit)
    run = replace(run, verdict=shipped_verdict(audit, str(files.audit)), audit=audit)
    frames = {
        "metrics": read_seeds(files.metrics),
        "kept": read_seeds(files.kept),
        **{name: frame for name, frame in shared.items() if frame is not None},
    }
    dp_records = [read_guarantee_record(path) for path in files.guarantees]
    return bundle_summary(run, frames, dp_records, paths, folder)


# the custodian's files its summary links to (rule release_bundle's outputs, beside it)
SUMMARY_LINKS = {"card": EVIDENCE_FILE, "verdict": "verdict.json"}


@dataclass(frozen=True)
class PageBundles:
    """Rule `review_page`'s inputs for the bundles' summaries (`review.release_summaries`): per method in
    page order its audit record and utility measures, per (method, seed) of the bundles' seeds its kept
    rows and metrics, and (method, guarantee record) of the methods that state one."""

    runs: Sequence[tuple[str, int]]
    audits: Sequence[str]
    utility: Sequence[str]
    kept: Sequence[str]
    metrics: Sequence[str]
    guarantees: Sequence[tuple[str, str]] = ()

    def files(self) -> dict[str, ShippedFiles]:
        """Each method's `ShippedFiles`, in page order."""
        methods = list(dict.fromkeys(method for method, _ in self.runs))
        return {
            method: ShippedFiles(
                audit,
                [path for (owner, _), path in zip(self.runs, self.kept, strict=True) if owner == method],
                [path for (owner, _), path in zip(self.runs, self.metrics, strict=True) if owner == method],
                [path for owner, path in self.guarantees if owner == method],
            )
            for method, audit in zip(methods, self.audits, strict=True)
        }


def page_bundle_summaries(
    keys: Mapping[str, str],
    bundles: PageBundles,
    release: Mapping[str, Any],
    shared: Mapping[str, pd.DataFrame | None],
    names: Mapping[str, str],
    page: str | Path,
) -> dict[str, ReleaseSummary] | None:
    """Each method's bundle summary for the review page at `page` (index.html), as its SUMMARY.md says
    it, its links reaching the bundle's folder from the page; None where the page shows its run's audit
    (no audit record given). `release`: the config's `release`; `shared`: the run's spans and comments."""
    if not bundles.audits:
        return None
    up = [".."] * (len(Path(page).parent.parts) - 1)  # from the page's folder to results/
    summaries = {}
    for (method, files), utility in zip(bundles.files().items(), bundles.utility, strict=True):
        run = ReleaseRun(
            keys["dataset"],
            keys["setting"],
            keys["idset"],
            method,
            "",
            {},
            BundleSettings.from_config(release),
            sign_offs=read_sign_offs(release["sign_off"]),
        )
        folder = Path(
            *up, "release", keys["dataset"], keys["setting"], keys["idset"], method, CUSTODIAN_FOLDER
        ).as_posix()
        frames = {**shared, "utility": run_utility_table([utility], names)}
        summaries[method] = shipped_summary(run, files, frames, SUMMARY_LINKS, f"{folder}/")
    return summaries
