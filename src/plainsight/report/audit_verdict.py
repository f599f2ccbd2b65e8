"""The privacy audit's verdict of each method of one run, as results/tables/{dataset}/privacy_audit.csv
gives it (`verdict`, `verdict_reasons`, `threat_model`): the release card and the review page show it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from plainsight.audit.outcomes import split_reasons

RUN_COLUMNS = ("dataset", "setting", "idset")
NO_AUDIT = "no audit"
# An audit row without a verdict: a table written before verdicts, or the base model's control row.
NO_VERDICT = "no verdict"


@dataclass(frozen=True)
class AuditVerdict:
    verdict: str  # PASS, FAIL or INCONCLUSIVE (NO_VERDICT where the row gives none)
    reasons: tuple[str, ...]  # "criterion: outcome (why)"
    threat_model: str
    source: str = ""  # the table the verdict was read from
    kind: str = ""  # what a PASS rests on: a formal guarantee or empirical evidence only
    seed_verdicts: str = ""  # "seed: verdict" of every audited seed


def run_rows(frame: pd.DataFrame, run: Mapping[str, str]) -> pd.DataFrame:
    """The rows of one run (dataset, setting, identifier set) of a results table."""
    keys = {column: run[column] for column in RUN_COLUMNS}
    return frame[(frame[list(keys)].astype(str) == pd.Series(keys)).all(axis=1)]


def _text(value: Any) -> str:
    return "" if value is None or pd.isna(value) else str(value)


def row_verdict(row: Mapping[str, Any], source: str = "") -> AuditVerdict:
    """One audit row's verdict; its reasons split where the gate joined them (`split_reasons`)."""
    reasons = _text(row.get("verdict_reasons"))
    return AuditVerdict(
        _text(row.get("verdict")) or NO_VERDICT,
        tuple(split_reasons(reasons)),
        _text(row.get("threat_model")),
        source,
        _text(row.get("verdict_kind")),
        _text(row.get("seed_verdicts")),
    )


def audit_verdicts(audit_tables: Sequence[str], run: Mapping[str, str]) -> dict[str, AuditVerdict] | None:
    """Method -> its verdict on the run, from the audit table(s) given (a later table's row wins); None
    where none is given (the run is not audited)."""
    if not audit_tables:
        return None
    return {
        str(row["method"]): row_verdict(row, str(path))
        for path in audit_tables
        for row in run_rows(pd.read_csv(path), run).to_dict("records")
    }
