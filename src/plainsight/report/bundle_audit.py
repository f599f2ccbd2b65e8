"""The audit of what a release bundle ships (rule `release_audit`:
results/{dataset}/{setting}/{idset}/release/{method}/audit.json, which the bundle's verdict is read from).

Per released seed it audits the generations the release filter kept (`plainsight.report.release`, rule
`release_filter`: the very rows the bundle's data file holds) against the controls of the run's privacy
audit:

- every leak measure beside its held-out control, counted on the kept texts (`run_privacy_metrics`);
- the released-text audit (nearest real documents, verbatim copying, the text membership attacks), the
  attacks judged against the seed's negative control (`audit_corpora`, without the control rows);
- the method's guarantee record (`guarantee_evidence`: the epsilon criterion);
- under the threat model `released_text_and_adapter`, the adapter attacks on the run's membership scores;
- where `audit.canaries.in_verdict`, the canary audit of the method on the run's canaried sets;
- the run's utility measures, for the fitness statement beside the verdict.

Each seed's row is built by the code that builds the privacy audit table's rows (`audit_seed_rows`) and
the gate judges it per seed, the worst seed winning (`with_verdicts`). A seed whose every generation was
left out ships nothing and is not judged; a bundle that ships nothing at all is INCONCLUSIVE: there is no
release to judge. The record holds the SHA-256 of the data file the audited rows make (`data_sha256`),
which the bundle checks against the file it writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import pandas as pd

from plainsight.audit.canary_table import canary_table, read_claim
from plainsight.audit.criteria import RELEASE_FILTER, THREAT_MODELS, Gate, criterion_outcomes
from plainsight.audit.guarantee import guarantee_evidence
from plainsight.audit.outcomes import INCONCLUSIVE
from plainsight.audit.privacy_audit_table import (
    RUN_METHOD_KEYS,
    audit_seed_rows,
    membership_rows,
    released_rows,
    seeds_averaged,
    summary_evidence,
    with_verdicts,
)
from plainsight.audit.released import TextAuditSettings
from plainsight.audit.released_text_job import Judging, RunInputs, audit_corpora
from plainsight.audit.roc import CONTROL_MODEL
from plainsight.evaluation.privacy import run_privacy_metrics
from plainsight.io import write_json
from plainsight.methods import registry
from plainsight.report.release import data_sha256
from plainsight.report.release_filter import read_seeds
from plainsight.report.table_specs import load_table_specs
from plainsight.report.utility_table import run_utility_table

NOTHING_KEPT = "nothing kept: the release filter left no generation to ship, so there is no release to judge"


@dataclass(frozen=True)
class Bundle:
    """Which bundle: a method on a run (dataset, setting, identifier set)."""

    dataset: str
    setting: str
    idset: str
    method: str

    def seed_run(self, seed: int) -> dict[str, Any]:
        """The keys of one seed's audit row."""
        return {**asdict(self), "seed": seed}


@dataclass(frozen=True)
class ShippedSeed:
    """One released seed: its kept rows and its negative control corpus; the records of the mechanisms
    behind the bundle where the method states a formal guarantee (the bundle ships every seed, so each
    seed is judged on their composition), and the run's membership scores where the threat model releases
    the adapter."""

    seed: int
    kept: pd.DataFrame
    negative_control: pd.DataFrame
    guarantees: Sequence[str] = ()  # the records of the mechanisms behind the bundle, every seed's
    scores: pd.DataFrame | None = None
    drop: str = "none"  # the release filter's rule that chose `kept` (`release.drop`)


@dataclass(frozen=True)
class BundleEvidence:
    """What every seed is judged with beside its own texts: the display names of the methods, the canary
    table rows of the bundle's seeds (where the canaries are in the verdict) and the run's utility table."""

    names: Mapping[str, str]
    canaries: pd.DataFrame | None = None
    utility: pd.DataFrame | None = None


def seed_evidence(
    method: str, seed: ShippedSeed, inputs: RunInputs, settings: TextAuditSettings, judging: Judging
) -> tuple[dict[str, Any], dict[str, float]]:
    """(audit record, privacy summary evidence) of one seed's kept generations: the leak counts against
    their held-out control, the released-text audit against the negative control, the guarantee test."""
    per_generation, summary, counts = run_privacy_metrics(
        method, seed.kept, inputs.docs, inputs.spans, inputs.codes, inputs.idset, inputs.metrics, seed.seed
    )
    audits = audit_corpora(
        {method: seed.kept},
        {method: per_generation},
        {method: counts},
        inputs,
        replace(settings, seed=seed.seed),
        judging,
        with_control_rows=False,
        negative_control=seed.negative_control,
    )
    # a filter that read private data after the mechanism leaves no formal guarantee to hand the gate
    guarantee = guarantee_evidence(counts, seed.guarantees) if seed.drop == "none" else {}
    record = {**audits[method].record, RELEASE_FILTER: seed.drop, **guarantee}
    return record, summary_evidence(summary)


def seed_membership(bundle: Bundle, seed: ShippedSeed, resamples: int, gate: Gate) -> pd.DataFrame:
    """The adapter attacks' row of the bundle's method on one seed's membership scores (none where the
    scores have no adapter of it)."""
    scores = seed.scores[seed.scores["model"].isin([CONTROL_MODEL, bundle.method])]
    rows = membership_rows(scores, resamples, seed.seed, gate.adapter_membership_auc_max)
    run = {key: value for key, value in asdict(bundle).items() if key != "method"}
    return rows[rows["method"] == bundle.method].assign(**run, seed=seed.seed)


def judged_rows(
    bundle: Bundle,
    seeds: Sequence[ShippedSeed],
    inputs: RunInputs,
    settings: TextAuditSettings,
    judging: Judging,
    evidence: BundleEvidence,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the bundle's audit row with its verdict, one row per audited seed) of the seeds that ship text,
    built and judged as the privacy audit table's rows are."""
    audited = [seed for seed in seeds if len(seed.kept)]
    found = [seed_evidence(bundle.method, seed, inputs, settings, judging) for seed in audited]
    released = released_rows(
        [record for record, _ in found],
        [bundle.seed_run(seed.seed) for seed in audited],
        [summary for _, summary in found],
    )
    adapters = [
        seed_membership(bundle, seed, settings.bootstrap, judging.gate)
        for seed in audited
        if seed.scores is not None
    ]
    membership = (
        pd.concat(adapters, ignore_index=True)
        if adapters
        else pd.DataFrame(columns=[*RUN_METHOD_KEYS, "seed"])
    )
    per_seed = audit_seed_rows(released, membership, evidence.canaries, evidence.utility)
    return with_verdicts(seeds_averaged(per_seed, evidence.names), per_seed, judging.gate), per_seed


def criteria_by_seed(per_seed: pd.DataFrame, gate: Gate, trained: bool) -> list[dict[str, Any]]:
    """Each criterion's outcome and reason (its bounds, and the sample that would decide it where it is
    INCONCLUSIVE) on each audited seed, as the gate gives them."""
    return [
        {"seed": int(row["seed"]), "criterion": name, "outcome": outcome, "reason": reason}
        for row in per_seed.to_dict("records")
        for name, (outcome, reason) in criterion_outcomes(row, gate, trained).items()
    ]


def plain_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON values: numbers, text and flags, null where a value is missing."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def bundle_audit(
    bundle: Bundle,
    seeds: Sequence[ShippedSeed],
    inputs: RunInputs,
    settings: TextAuditSettings,
    judging: Judging,
    evidence: BundleEvidence,
) -> dict[str, Any]:
    """The record of what a bundle ships: its seeds and kept generations, the SHA-256 of the data file
    they make, the gate's thresholds, the judged audit row (`row`, as the privacy audit table has it) and
    each seed's, each criterion per seed, what would decide an INCONCLUSIVE one, and the fitness
    statement."""
    gate = judging.gate
    shipped = {
        **asdict(bundle),
        "seeds": [seed.seed for seed in seeds],
        "generations": {str(seed.seed): len(seed.kept) for seed in seeds},
        "data_sha256": data_sha256(pd.concat([seed.kept for seed in seeds], ignore_index=True)),
        "thresholds": {**asdict(gate), "criteria": list(gate.criteria)},
    }
    if not any(len(seed.kept) for seed in seeds):
        row = {
            "verdict": INCONCLUSIVE,
            "verdict_reasons": NOTHING_KEPT,
            "threat_model": THREAT_MODELS[gate.threat_model],
        }
        nothing = {"seed_rows": [], "criteria_by_seed": [], "would_decide": [], "fit_as_text": None}
        return {**shipped, "row": row, **nothing, "fit_reasons": None}
    table, per_seed = judged_rows(bundle, seeds, inputs, settings, judging, evidence)
    [row] = plain_rows(table)
    criteria = criteria_by_seed(per_seed, gate, registry.method(bundle.method).trained)
    return {
        **shipped,
        "row": row,
        "seed_rows": plain_rows(per_seed),
        "criteria_by_seed": criteria,
        "would_decide": [
            f"seed {c['seed']}: {c['criterion']}: {c['reason']}"
            for c in criteria
            if c["outcome"] == INCONCLUSIVE
        ],
        "fit_as_text": row["fit_as_text"],
        "fit_reasons": row["fit_reasons"],
    }


@dataclass(frozen=True)
class CanaryFiles:
    """The canary audit of a bundle's method on each of its seeds (empty where the canaries are not in
    the verdict): attack scores, canary designs and the DP-SGD canary adapter's claim (None without one),
    parallel to the seeds; the share of candidates guessed on."""

    attacks: Sequence[str] = ()
    designs: Sequence[str] = ()
    claims: Sequence[str | None] = ()
    guesses: float = 0.5


@dataclass(frozen=True)
class BundleAuditFiles:
    """Rule `release_audit`'s inputs: per seed (parallel to `seeds`) its kept rows, negative control and,
    where given, membership scores; the records of every mechanism behind the bundle (`guarantees`); the
    run's utility measures, the paper's table specs (display names) and the canary files."""

    seeds: Sequence[int]
    kept: Sequence[str]
    negative_controls: Sequence[str]
    guarantees: Sequence[str]
    scores: Sequence[str]
    utility: Sequence[str]
    paper: str
    canaries: CanaryFiles = CanaryFiles()
    # the release filter's rule (`release_run.bundle_drop`), as rule release_filter applied it
    drop: str = "none"

    def shipped_seeds(self) -> list[ShippedSeed]:
        """Each seed's kept rows (read as the bundle reads them), negative control, guarantee and scores."""
        return [
            ShippedSeed(
                seed,
                read_seeds([self.kept[number]]),
                pd.read_parquet(self.negative_controls[number]),
                tuple(self.guarantees),
                pd.read_parquet(self.scores[number]) if self.scores else None,
                self.drop,
            )
            for number, seed in enumerate(self.seeds)
        ]

    def evidence(self, bundle: Bundle, resamples: int) -> BundleEvidence:
        """The display names, the canary table rows of the bundle's seeds and the run's utility table."""
        names = load_table_specs(self.paper)["methods"]
        canaries = self.canaries
        rows = (
            canary_table(
                canaries.attacks,
                canaries.designs,
                [bundle.seed_run(seed) for seed in self.seeds],
                [read_claim(claim) for claim in canaries.claims],
                resamples,
                canaries.guesses,
            )
            if canaries.attacks
            else None
        )
        return BundleEvidence(names, rows, run_utility_table(self.utility, names))


def write_bundle_audit(
    bundle: Bundle,
    files: BundleAuditFiles,
    inputs: RunInputs,
    settings: TextAuditSettings,
    judging: Judging,
    path: str,
) -> dict[str, Any]:
    """Rule `release_audit`: read the bundle's files, audit what it ships, write the record to `path`."""
    record = bundle_audit(
        bundle, files.shipped_seeds(), inputs, settings, judging, files.evidence(bundle, settings.bootstrap)
    )
    write_json(record, path)
    return record
