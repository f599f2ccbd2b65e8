"""The privacy-audit table's rows (results/tables/{dataset}/privacy_audit), which
`plainsight.report.privacy_audit_markdown` renders.

One row per (dataset, setting, identifier set, method), plus the control rows per run: the base model's
(the adapter attacks' control), the positive control's (a corpus that copies) and the negative control's
(a corpus written without private data, whose text attacks show the split's own bias):
membership-inference AUC of each attack against the method's adapter (trained methods) with 95%
bootstrap intervals and the TPR at 1% and 10% FPR, membership through the released text alone,
distance to the closest record, verbatim copying, any-identifier leaks and the run's own PIPP.
With several audited seeds the numbers are means over seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from plainsight.audit import NEGATIVE_CONTROL, POSITIVE_CONTROL
from plainsight.audit.criteria import Gate
from plainsight.audit.evidence import conclusion, detectable_auc
from plainsight.audit.fitness import documents_share, fit_as_text, utility_evidence
from plainsight.audit.gate import seeds_verdict
from plainsight.audit.roc import CONTROL_MODEL, FPR_BOUNDS, MEMBERSHIP_ATTACKS, attack_scores, roc_summary
from plainsight.methods import registry

RUN_METHOD_KEYS = ["dataset", "setting", "idset", "method"]
BASE_DISPLAY = "Base model (control)"
VERDICT_COLUMNS = ("verdict", "verdict_reasons", "threat_model", "verdict_kind", "seed_verdicts")
FIT_COLUMNS = ("fit_as_text", "fit_reasons")  # whether a corpus is fit to release as text, beside its verdict
POSITIVE_DISPLAY = "Positive control (copies its context)"
NEGATIVE_DISPLAY = "Negative control (writes without private data)"
# the rows that released nothing a custodian would judge: they get no verdict
UNJUDGED = (CONTROL_MODEL, NEGATIVE_CONTROL)


def membership_rows(
    scores: pd.DataFrame, resamples: int, seed: int, auc_threshold: float = 0.6
) -> pd.DataFrame:
    """Per model of one run's scores (base first): AUC, TPR at each FPR bound and their intervals (the
    bootstrap over documents: a document's segments share its side), per attack. The base model has no
    reference attack (it would be its own reference)."""
    base = scores[scores["model"] == CONTROL_MODEL]
    rows = []
    for model in dict.fromkeys(scores["model"]):
        attacked = attack_scores(scores[scores["model"] == model], base)
        row: dict[str, Any] = {"method": model}
        for attack in MEMBERSHIP_ATTACKS:
            if model == CONTROL_MODEL and attack == "reference":
                continue
            summary = roc_summary(
                attacked["member"], attacked[attack], FPR_BOUNDS, resamples, seed, attacked["doc_id"]
            )
            detectable = detectable_auc(summary.members, summary.non_members)
            row.update(
                {
                    f"mia_{attack}_auc": summary.auc,
                    f"mia_{attack}_auc_low": summary.auc_low,
                    f"mia_{attack}_auc_high": summary.auc_high,
                    f"mia_{attack}_conclusion": conclusion(
                        summary.auc_low > 0.5, detectable, auc_threshold, " AUC"
                    ),
                }
            )
            for bound in FPR_BOUNDS:
                tag = f"tpr{round(bound * 100)}"
                row.update(
                    {
                        f"mia_{attack}_{tag}": summary.tpr[bound],
                        f"mia_{attack}_{tag}_low": summary.tpr_low[bound],
                        f"mia_{attack}_{tag}_high": summary.tpr_high[bound],
                    }
                )
        row["mia_members"], row["mia_non_members"] = summary.members, summary.non_members
        row["mia_detectable_auc"] = detectable
        rows.append(row)
    return pd.DataFrame(rows)


def seed_rows(released: pd.DataFrame, membership: pd.DataFrame) -> pd.DataFrame:
    """The released-text records (one per run, method and seed, with `pipp`) joined with the membership
    rows (one per run, model and seed): one row per run, method and seed."""
    released = released.copy()
    for flag in ("dcr_closer_than_held_out", "dp_claim_rejected", "dp_null_testable"):  # seeds: a share
        if flag in released:
            released[flag] = released[flag].astype(float)
    return released.merge(membership, on=[*RUN_METHOD_KEYS, "seed"], how="outer")


def audit_table(released: pd.DataFrame, membership: pd.DataFrame, methods: Mapping[str, str]) -> pd.DataFrame:
    """The table: the seeds' rows (`seed_rows`) averaged over seeds; base rows first in each run."""
    return seeds_averaged(seed_rows(released, membership), methods)


def seeds_averaged(joined: pd.DataFrame, methods: Mapping[str, str]) -> pd.DataFrame:
    """One row per run and method from `seed_rows`: numbers averaged over seeds, labels joined."""
    numeric = [
        c
        for c in joined.columns
        if c not in (*RUN_METHOD_KEYS, "seed") and pd.api.types.is_numeric_dtype(joined[c])
    ]
    labels = [c for c in joined.columns if c not in (*RUN_METHOD_KEYS, "seed", *numeric)]
    grouped = joined.groupby(RUN_METHOD_KEYS, sort=False, dropna=False)
    table = grouped[numeric].mean().reset_index()
    for column in labels:  # conclusions and designs: the seeds' distinct ones
        table[column] = (
            grouped[column].agg(lambda s: "; ".join(dict.fromkeys(map(str, s.dropna()))) or None).to_numpy()
        )
    table.insert(4, "seeds", grouped["seed"].apply(lambda s: ",".join(map(str, sorted(s)))).to_numpy())
    order = {
        name: position
        for position, name in enumerate([CONTROL_MODEL, *methods, POSITIVE_CONTROL, NEGATIVE_CONTROL])
    }
    shown = {
        CONTROL_MODEL: BASE_DISPLAY,
        POSITIVE_CONTROL: POSITIVE_DISPLAY,
        NEGATIVE_CONTROL: NEGATIVE_DISPLAY,
    }
    table["Method"] = [shown.get(m) or methods.get(registry.base_method(m), m) for m in table["method"]]
    table = table.sort_values(
        ["dataset", "setting", "idset", "method"],
        key=lambda c: c.map(order) if c.name == "method" else c,
        kind="stable",
    )
    if "dcr_closer_than_held_out" in table:
        table["dcr_closer_than_held_out"] = table["dcr_closer_than_held_out"].map(
            lambda v: None if pd.isna(v) else bool(v >= 0.5)
        )
    return table.reset_index(drop=True)


def with_verdicts(table: pd.DataFrame, per_seed: pd.DataFrame, gate: Gate) -> pd.DataFrame:
    """The table with each audited corpus's verdict (`plainsight.audit.gate`), judged per seed on
    `per_seed` (the worst seed wins) and listed per seed; the base model's and the negative control's
    rows, which released nothing learnt from private data, have none."""
    rows = []
    for row in table.to_dict("records"):
        if row["method"] in UNJUDGED:
            rows.append(dict.fromkeys((*VERDICT_COLUMNS, *FIT_COLUMNS)))
            continue
        keys = {key: row[key] for key in RUN_METHOD_KEYS}
        seeds = per_seed[(per_seed[RUN_METHOD_KEYS] == pd.Series(keys)).all(axis=1)]
        trained = row["method"] != POSITIVE_CONTROL and registry.method(row["method"]).trained
        judged = [(int(seed["seed"]), seed) for seed in seeds.to_dict("records")]
        rows.append({**seeds_verdict(judged, gate, trained), **fit_as_text(row, gate.documents_min)})
    return pd.concat(
        [table, pd.DataFrame(rows, index=table.index, columns=[*VERDICT_COLUMNS, *FIT_COLUMNS])], axis=1
    )


def released_rows(
    records: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    summaries: Sequence[Mapping[str, float]],
) -> pd.DataFrame:
    """The released-text records with their run's keys and what its privacy summary gives (PIPP, the
    documents share)."""
    return pd.DataFrame(
        [
            {**run, **{k: v for k, v in record.items() if k not in ("method", "seed")}, **summary}
            for run, record, summary in zip(runs, records, summaries)
        ]
    )


def summary_pipp(summary: pd.DataFrame) -> float:
    """A run's PIPP (%) averaged over its paragraph ranges, from its privacy summary."""
    from plainsight.evaluation.privacy import AVERAGED_SEGMENT

    return float(summary.loc[summary["segment"] == AVERAGED_SEGMENT, "pipp"].iloc[0])


def run_pipp(summary_path: str | Path) -> float:
    """The run's PIPP (%) averaged over its paragraph ranges, from its privacy summary file."""
    return summary_pipp(pd.read_parquet(summary_path))


def summary_evidence(summary: pd.DataFrame) -> dict[str, float]:
    """A run's PIPP and its documents share with its interval, from its privacy summary."""
    return {"pipp": summary_pipp(summary), **documents_share(summary)}


def run_summary(summary_path: str | Path) -> dict[str, float]:
    """`summary_evidence` of a privacy summary file."""
    return summary_evidence(pd.read_parquet(summary_path))


def read_tables(paths: Sequence[str]) -> pd.DataFrame | None:
    """The CSV tables at `paths` as one frame; None where none is given."""
    return pd.concat([pd.read_csv(path) for path in paths], ignore_index=True) if paths else None


def with_utility(released: pd.DataFrame, utility: pd.DataFrame | None) -> pd.DataFrame:
    """The released-text rows with their method's downstream macro-F1, chance's and the real ceiling's,
    where a utility table (`plainsight.report.utility_table`) is given."""
    if utility is None:
        return released
    evidence = [
        utility_evidence(utility, row, registry.base_method(row["method"])) for _, row in released.iterrows()
    ]
    return pd.concat([released, pd.DataFrame(evidence, index=released.index)], axis=1)


def with_canary_evidence(released: pd.DataFrame, canaries: pd.DataFrame | None) -> pd.DataFrame:
    """The released-text rows with the canary attacks' epsilon bound and what their size could certify
    (`plainsight.audit.canary_table.canary_evidence`), where canary table rows are given."""
    if canaries is None:
        return released
    from plainsight.audit.canary_table import CANARY_KEYS, canary_evidence

    evidence = canary_evidence(canaries).astype({"seed": released["seed"].dtype})
    return released.merge(evidence, on=CANARY_KEYS, how="left")


def audit_seed_rows(
    released: pd.DataFrame,
    membership: pd.DataFrame,
    canaries: pd.DataFrame | None = None,
    utility: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The audit rows of each run, corpus and seed, as the gate judges them: the released-text rows
    (`released_rows`) with the canary attacks' evidence and the utility table's fitness evidence where
    given, joined with the adapter attacks' rows (`membership_rows`, keyed by run and seed). The privacy
    audit table and a release bundle's own audit both build their rows here."""
    return seed_rows(with_utility(with_canary_evidence(released, canaries), utility), membership)


@dataclass(frozen=True)
class AuditTableFiles:
    """The files of the audit table: the released-text records and privacy summaries (one per run, method
    and seed, parallel to `runs`), the membership scores and the positive controls' records (one per run
    and seed, parallel to `score_runs`), the negative controls' records (the same), and the canary
    tables the verdict reads."""

    released: Sequence[str]
    runs: Sequence[Mapping[str, Any]]
    summaries: Sequence[str]
    scores: Sequence[str]
    score_runs: Sequence[Mapping[str, Any]]
    controls: Sequence[str] = ()
    canaries: Sequence[str] = ()
    utility: Sequence[str] = ()  # the utility table, for the fitness statement beside each verdict
    negative_controls: Sequence[str] = ()  # the negative controls' records, parallel to `score_runs`


def control_rows(paths: Sequence[str], name: str, score_runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The released-text rows of one control's records (`paths`, parallel to `score_runs`), keyed `name`;
    a control has no PIPP of its own."""
    from plainsight.io import read_json

    return released_rows(
        [read_json(p) for p in paths],
        [{**run, "method": name} for run in score_runs[: len(paths)]],
        [{"pipp": math.nan}] * len(paths),
    )


def build_privacy_audit(
    files: AuditTableFiles, methods: Mapping[str, str], resamples: int, gate: Gate | None = None
) -> pd.DataFrame:
    """The audit table of `files`, with each corpus's verdict under `gate`."""
    from plainsight.io import read_json

    released = released_rows(
        [read_json(p) for p in files.released], files.runs, [run_summary(p) for p in files.summaries]
    )
    controls = [
        control_rows(paths, name, files.score_runs)
        for name, paths in ((POSITIVE_CONTROL, files.controls), (NEGATIVE_CONTROL, files.negative_controls))
    ]
    membership = pd.concat(
        [
            membership_rows(
                pd.read_parquet(path),
                resamples,
                int(run["seed"]),
                (gate or Gate()).adapter_membership_auc_max,
            ).assign(**run)
            for path, run in zip(files.scores, files.score_runs)
        ],
        ignore_index=True,
    )
    per_seed = audit_seed_rows(
        pd.concat([released, *controls], ignore_index=True),
        membership,
        read_tables(files.canaries),
        read_tables(files.utility),
    )
    table = seeds_averaged(per_seed, methods)
    return with_verdicts(table, per_seed, gate) if gate is not None else table
