"""The formal claim that bounds a released corpus, read from a method's guarantee record, and the test
of that claim against the leaks the corpus shows (a rejected claim points at a bug in the DP code)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plainsight import accounting
from plainsight.audit.evidence import ALPHA, dp_null_controls_needed, dp_null_p_value, dp_null_testable
from plainsight.audit.provenance import Mechanism, Provenance
from plainsight.io import read_json


@dataclass(frozen=True)
class Guarantee:
    """The formal (epsilon, delta) claim that bounds a method's released corpus, over `units` records of
    what it protects (`unit`: `unit`, one privacy unit; `segment`; `sequence`)."""

    epsilon: float
    delta: float
    unit: str | None = None
    units: int | None = None

    def claim_columns(self) -> dict[str, Any]:
        """The claim as the gate reads it from an audit row (`plainsight.audit.criteria`)."""
        return {
            "dp_epsilon": self.epsilon,
            "dp_delta": self.delta,
            "dp_unit": self.unit,
            "dp_units": self.units,
        }


def read_guarantee_record(path: str | Path) -> dict[str, Any]:
    """A guarantee record: a DP-SGD adapter folder's training.json, or a private-selection method's
    seed{seed}_privacy.json."""
    path = Path(path)
    return read_json(path / "training.json" if path.is_dir() else path)


def record_guarantee(record: Mapping[str, Any]) -> Guarantee | None:
    """The claim of a guarantee record that bounds the released corpus: DP-SGD's epsilon, or a
    private-selection record's `release_epsilon`, with what it protects (`protects`) over how many
    (`units`); None where the guarantee bounds only a step of the method (RPSG's selection)."""
    epsilon = record.get("release_epsilon", record["epsilon"])
    if epsilon is None:
        return None
    units = record.get("units")
    return Guarantee(
        float(epsilon), float(record["delta"]), record.get("protects"), None if units is None else int(units)
    )


def gaussian_steps(record: Mapping[str, Any]) -> accounting.GaussianSteps:
    """A mechanism's Gaussian steps as its record states them: DP-SGD's noise multiplier, sample rate and
    steps; a histogram's noise multiplier over its rounds (sample rate 1)."""
    steps = record.get("steps", record.get("rounds", 1))
    return float(record["noise_multiplier"]), float(record.get("sample_rate", 1.0)), int(steps)


def composed_guarantee(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every mechanism of `records` composed by the PRV accountant at the largest delta they state (each
    was calibrated at its own; the composition is stated at one), beside the sum of their epsilons that
    basic composition would give."""
    if not records:
        raise ValueError("no mechanism record to compose")
    delta = max(float(record["delta"]) for record in records)
    return {
        "epsilon": accounting.composed_epsilon([gaussian_steps(record) for record in records], delta),
        "delta": delta,
        "basic_composition_epsilon": sum(float(record["epsilon"]) for record in records),
        "accountant": f"opacus {accounting.ACCOUNTANT}",
    }


def composed_claim(records: Sequence[Mapping[str, Any]]) -> Guarantee | None:
    """The claim that bounds a corpus whose every path from private data passes through the mechanisms of
    `records` (`plainsight.audit.provenance.mechanism_records`): one record's own claim, or the
    accountant's composition of those that spend (a prior spends nothing), over the unit and units its
    releasing mechanism protects; None where none bounds the release."""
    # a mechanism that spends nothing (codes drawn from the prior) adds nothing to compose
    spending = [record for record in records if record.get("epsilon") != 0]
    claims = [record_guarantee(record) for record in spending]
    if not any(claims):
        return None
    if len(spending) == 1:
        return claims[0]
    composed = composed_guarantee(spending)
    units = {(claim.unit, claim.units) for claim in claims if claim and claim.unit is not None}
    unit, count = units.pop() if len(units) == 1 else (None, None)
    return Guarantee(composed["epsilon"], composed["delta"], unit, count)


def release_guarantee(paths: Sequence[str | Path]) -> Guarantee | None:
    """The claim of the mechanism records at `paths` (`composed_claim`)."""
    return composed_claim([read_guarantee_record(path) for path in paths])


def guarantee_record(counts: Mapping[str, Any], guarantee: Guarantee) -> dict[str, Any]:
    """The any-identifier leak against the null that the method's own (epsilon, delta) claim allows: a
    rejected claim points at a bug in its DP code. At a large epsilon and with few controls no count of
    leaks can reject it: `dp_null_testable` says whether any could, and `dp_null_controls_needed` how
    many controls it would take (None: no number would), so that a table reads "not testable at this
    size (needs N controls)" rather than a p-value of 1 that holds by construction."""
    leaked = counts["measures"]["any_identifier"]
    p_value = dp_null_p_value(
        leaked["member_hits"],
        leaked["members"],
        leaked["control_hits"],
        leaked["controls"],
        guarantee.epsilon,
        guarantee.delta,
    )
    needed = dp_null_controls_needed(leaked["members"], guarantee.epsilon, guarantee.delta)
    return {
        **guarantee.claim_columns(),
        "dp_null_p_value": p_value,
        "dp_claim_rejected": p_value < ALPHA,
        "dp_null_testable": dp_null_testable(
            leaked["members"], leaked["controls"], guarantee.epsilon, guarantee.delta
        ),
        "dp_null_controls_needed": needed,
    }


def guarantee_evidence(counts: Mapping[str, Any], paths: Sequence[str | Path]) -> dict[str, Any]:
    """The guarantee columns of a corpus's audit record (`guarantee_record`) from the records of the
    mechanisms on its paths (`composed_claim`); none for a method without one, or whose claim bounds only
    a step of it."""
    claim = release_guarantee(paths) if paths else None
    return guarantee_record(counts, claim) if claim is not None else {}


# --- a bundle's mechanisms and their composition -----------------------------------------------------


def bundle_accounting(entries: Sequence[tuple[Mechanism, str, Mapping[str, Any]]]) -> dict[str, Any]:
    """What the card and verdict.json say of a bundle's guarantee: each mechanism behind it (name, what it
    is, its record, epsilon, delta and unit) and their composition (`composed_guarantee`) over those that
    spend (a prior spends nothing); None where no mechanism spends."""
    listed = [
        {
            "name": mechanism.name,
            "description": mechanism.description,
            "record": path,
            "epsilon": float(record.get("epsilon_spent", record["epsilon"])),
            "delta": record.get("delta"),
            "privacy_unit": record.get("privacy_unit"),
        }
        for mechanism, path, record in entries
    ]
    spending = [record for _, _, record in entries if "noise_multiplier" in record]
    return {"mechanisms": listed, "composed": composed_guarantee(spending) if spending else None}


def read_bundle_accounting(
    provenance_file: str | Path, names: Sequence[str], records: Sequence[str | Path]
) -> dict[str, Any] | None:
    """`bundle_accounting` of the mechanism records at `records`, each of the mechanism `names` gives in
    its order (rule `release_bundle`'s); None for a method without any."""
    if not names:
        return None
    provenance = Provenance.from_yaml(provenance_file)
    return bundle_accounting(
        [
            (provenance.named(name), str(path), read_guarantee_record(path))
            for name, path in zip(names, records)
        ]
    )
