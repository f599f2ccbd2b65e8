"""What a release bundle is of: its run and method, the `release` settings (`BundleSettings`), the
evidence tables beside its verdict, and the known limits its card and summary state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from plainsight.audit.protection import UnitSizes
from plainsight.report.audit_verdict import AuditVerdict
from plainsight.report.release_filter import DROP_RULES
from plainsight.report.sign_off import BundleSignOff, SignOff, bundle_sign_off
from plainsight.report.summary import UtilityRow, not_for_release

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
class PublicBundle:
    """What the public card of a bundle is about: its run, method and model, the generation settings its
    method reads, the `release` settings and every sign-off of `release.sign_off`."""

    dataset: str
    setting: str
    idset: str
    method: str
    model: str
    generation: Mapping[str, Any]
    settings: BundleSettings = field(default_factory=BundleSettings)
    sign_offs: Sequence[SignOff] = ()  # `release.sign_off`, of every method; `sign_off` picks this bundle's

    @property
    def title(self) -> str:
        return f"{self.dataset}, {self.method}, {self.setting} setting, {self.idset} identifiers"


@dataclass(frozen=True)
class ReleaseRun(PublicBundle):
    """A bundle as its custodian sees it: what its public card is about, and the evidence computed on
    the private corpus (its audit, verdict, privacy units and utility), which stays with the custodian."""

    evidence: Sequence[EvidenceTable] = field(default_factory=tuple)
    verdict: AuditVerdict | None = None  # of what the bundle ships (`shipped_verdict`); None: not audited
    config_fingerprint: str = ""  # of the config the bundle was built with
    audit: Mapping[str, Any] = field(default_factory=dict)  # the record `verdict` is read from
    before_filter: AuditVerdict | None = None  # the run's audit table's verdict, of the corpus unfiltered
    units: UnitSizes | None = None  # the corpus's privacy units (`protection.unit_sizes`); None: not read
    # the mechanisms behind the bundle and their composition (`guarantee.bundle_accounting`); None: none
    privacy_accounting: Mapping[str, Any] | None = None
    utility: tuple[UtilityRow, ...] | None = None  # its run's (`summary.utility_rows`); None: not measured

    @property
    def keys(self) -> dict[str, str]:
        return {"dataset": self.dataset, "setting": self.setting, "idset": self.idset}

    @property
    def data_sha256(self) -> str | None:
        """The SHA-256 of the data file the bundle's audit read (and the bundle ships); None: no audit."""
        return self.audit.get("data_sha256")

    @property
    def signed(self) -> BundleSignOff:
        """The method's sign-off that accepted these texts (their `data_sha256`), and its others."""
        return bundle_sign_off(self.sign_offs, self.method, self.data_sha256)

    @property
    def sign_off(self) -> SignOff | None:
        """The sign-off of the method that accepted these texts."""
        return self.signed.accepted

    @property
    def stamped(self) -> bool:
        """Whether the bundle says NOT FOR RELEASE: not PASS, and nobody signed off its texts."""
        return not_for_release(self.verdict, self.sign_off)
