"""Whether an audited corpus is fit to release as text, stated beside its privacy verdict: private text
that is not documents is no release. Two pieces of evidence, each with bounds:

- the share of its generations that are documents (`plainsight.evaluation.quality`), with a Wilson 95%
  interval, against `release.gate.documents_min`;
- its downstream macro-F1 (train on the synthetic corpus, test on real text: the utility table) with
  its interval, against chance (the best a rule that ignores the text can expect) and against the
  real-data ceiling.

Fit as text when the documents share's lower bound reaches the minimum and the macro-F1's lower bound
lies above chance's estimate; not fit when the share's upper bound lies under the minimum or the
macro-F1's upper bound does not reach chance; unclear otherwise. It never changes the privacy verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from plainsight.evaluation.downstream import CHANCE, REAL
from plainsight.evaluation.intervals import wilson_interval
from plainsight.evaluation.privacy import AVERAGED_SEGMENT

FIT, NOT_FIT, UNCLEAR = "fit as text", "not fit as text", "fitness unclear"
UTILITY_COLUMNS = ("macro_f1", "macro_f1_low", "macro_f1_high")


def documents_share(summary: pd.DataFrame) -> dict[str, float]:
    """The share of a run's generations that are documents, with its Wilson 95% interval, from its
    privacy summary's paragraph-range rows (each gives its share in percent and its generation count)."""
    ranges = summary[summary["segment"] != AVERAGED_SEGMENT]
    total = int(ranges["n_generations"].sum())
    documents = round(float((ranges["documents"] / 100 * ranges["n_generations"]).sum()))
    low, high = wilson_interval(documents, total)
    return {
        "documents_share": documents / total if total else math.nan,
        "documents_share_low": low,
        "documents_share_high": high,
    }


def utility_evidence(utility: pd.DataFrame, run: Mapping[str, str], method: str) -> dict[str, float]:
    """The method's macro-F1 with its interval, and chance's and the real-data ceiling's estimates, from
    the utility table's rows of the run; NaN where the table has no such row."""
    keys = ("dataset", "setting", "idset")
    rows = utility[(utility[list(keys)].astype(str) == pd.Series({k: str(run[k]) for k in keys})).all(axis=1)]

    def estimate(name: str, columns=UTILITY_COLUMNS) -> list[float]:
        found = rows[rows["method"] == name]
        return [float(found.iloc[0][c]) if not found.empty else math.nan for c in columns]

    macro_f1, low, high = estimate(method)
    return {
        "macro_f1": macro_f1,
        "macro_f1_low": low,
        "macro_f1_high": high,
        "chance_macro_f1": estimate(CHANCE, ("macro_f1",))[0],
        "real_macro_f1": estimate(REAL, ("macro_f1",))[0],
    }


def _percent(value: float) -> str:
    return f"{100 * value:.0f}"


def fit_as_text(row: Mapping[str, Any], documents_min: float) -> dict[str, str]:
    """`fit_as_text` (the statement) and `fit_reasons` (the evidence) of one audit row."""
    share, low, high = (row.get(f"documents_share{s}", math.nan) for s in ("", "_low", "_high"))
    if any(pd.isna(v) for v in (share, low, high)):
        return {"fit_as_text": UNCLEAR, "fit_reasons": "no documents share in this run"}
    reasons = [
        f"documents {_percent(share)}% [{_percent(low)}, {_percent(high)}] (min {_percent(documents_min)}%)"
    ]
    f1, f1_low, f1_high, chance, real = (
        row.get(c, math.nan)
        for c in ("macro_f1", "macro_f1_low", "macro_f1_high", "chance_macro_f1", "real_macro_f1")
    )
    measured = not any(pd.isna(v) for v in (f1, f1_low, f1_high, chance))
    if measured:
        ceiling = "" if pd.isna(real) else f", real data {real:.2f}"
        reasons.append(f"macro-F1 {f1:.2f} [{f1_low:.2f}, {f1_high:.2f}] (chance {chance:.2f}{ceiling})")
    else:
        reasons.append("downstream utility not measured for this run")
    if high < documents_min or (measured and f1_high <= chance):
        statement = NOT_FIT
    elif low >= documents_min and measured and f1_low > chance:
        statement = FIT
    else:
        statement = UNCLEAR
    return {"fit_as_text": statement, "fit_reasons": "; ".join(reasons)}
