"""A release criterion's outcome: `PASS`, `FAIL` or `INCONCLUSIVE`, from bounds of its evidence against a
threshold. Shared by the criteria (`plainsight.audit.criteria`) and the verdict (`plainsight.audit.gate`).

The invariant every criterion keeps: PASS only when a valid upper bound lies at or below the threshold.
Evidence that is absent, NA, NaN or not a number is no evidence, and bounds whose lower end lies above
their upper end are not valid bounds: neither ever passes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from numbers import Real
from typing import Any

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
OUTCOMES = (FAIL, INCONCLUSIVE, PASS)  # worst first
# A criterion whose detector a release filter applied to the texts judged: it holds because the filter
# dropped what the detector finds, which is no evidence; the verdict rests on the other criteria.
BY_CONSTRUCTION = "BY CONSTRUCTION"
Outcome = tuple[str, str]  # (outcome, reason)
# A verdict's reasons, one per criterion ("name: OUTCOME (reason)"), are joined with "; ". A reason may
# hold "; " itself (the sample that would decide it, and what else could), so a new one starts only
# where a criterion's name and outcome follow.
REASONS_SEPARATOR = "; "
_NEXT_REASON = re.compile(
    "; (?=" + r"\w+: (?:" + "|".join(map(re.escape, (*OUTCOMES, BY_CONSTRUCTION))) + r")(?: \(|$|;))"
)


def join_reasons(reasons: Iterable[str]) -> str:
    return REASONS_SEPARATOR.join(reasons)


def split_reasons(text: str) -> list[str]:
    """The reasons `join_reasons` joined, whatever "; " each holds."""
    return [reason.strip() for reason in _NEXT_REASON.split(text) if reason.strip()]


def evidence(value: Any) -> float | None:
    """A piece of evidence as a number; None where there is none (absent, NA, NaN, a string, a flag)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def bounded(low: Any, high: Any, threshold: float, what: str) -> Outcome:
    """(outcome, reason) of evidence with bounds [low, high] against a maximum."""
    low, high = evidence(low), evidence(high)
    if low is None or high is None:
        return INCONCLUSIVE, f"{what}: no evidence in this run"
    if low > high:
        return INCONCLUSIVE, f"{what}: inverted bounds [{low:.2f}, {high:.2f}] are no evidence"
    if high <= threshold:
        return PASS, f"{what} <= {high:.2f} (max {threshold:.2f})"
    if low > threshold:
        return FAIL, f"{what} >= {low:.2f} (max {threshold:.2f})"
    return INCONCLUSIVE, f"{what} in [{low:.2f}, {high:.2f}] straddles {threshold:.2f}"


def worst(outcomes: Iterable[Outcome]) -> Outcome:
    """The worst outcome of several, with the reasons of every part that has it."""
    outcomes = list(outcomes)
    for outcome in OUTCOMES:
        chosen = [reason for result, reason in outcomes if result == outcome]
        if chosen:
            return outcome, ", ".join(chosen)  # "; " separates the criteria
    raise ValueError("no outcomes")
